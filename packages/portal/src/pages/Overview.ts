import { ApiKeyService } from "@pic2video/cluster/services/ApiKeyService"
import { RenderService } from "@pic2video/cluster/services/RenderService"
import { Resources } from "@pic2video/domain"
import { Plans } from "@pic2video/domain"
import { Effect } from "effect"
import type { Signed } from "../Context.ts"
import { bytes, dateTime, html, isolate } from "../Html.ts"
import { document, htmlResponse } from "../Layout.ts"

/** Plan, this cycle's allowance and renders, storage, and each key's 24-hour spend window. */
export const page = (s: Signed) =>
  Effect.gen(function*() {
    const ws = s.workspace
    const renders = yield* RenderService
    const usage = yield* renders.cycle(ws.id)
    const byStatus = usage.byStatus
    const keys = (yield* (yield* ApiKeyService).list(ws.id)).data.filter((k) => k.revoked_at === null)
    const windows = yield* Effect.forEach(
      keys,
      (k) => Effect.map(renders.chargedInWindow(k.id), (n) => ({ key: k, n }))
    )
    const storageShare = ws.storage_budget_bytes === 0
      ? 0
      : Math.min(1, ws.storage_used_bytes / ws.storage_budget_bytes)
    const canHoldKeys = Plans.planDefaults[ws.plan].canHoldKeys
    const body = html`<h1>Overview</h1>
<div class="grid cards">
  <section class="card" aria-labelledby="plan-h">
    <h2 id="plan-h">Plan</h2>
    <p class="big">${ws.plan}</p>
    <dl class="facts">
      <dt>Workspace</dt><dd>${isolate(ws.name)} <code class="muted small nowrap">${ws.id}</code></dd>
      <dt>Cycle start</dt><dd>${dateTime(usage.cycleStart)}</dd>
    </dl>
  </section>
  <section class="card" aria-labelledby="usage-h">
    <h2 id="usage-h">Renders this cycle</h2>
    ${
      usage.included === null
        ? html`<p class="big">${usage.used} <span class="muted">used of unlimited</span></p>`
        : usage.included === 0
        ? html`<p class="big">No renders included</p>
    <progress aria-label="Renders used this cycle" max="1" value="0">${usage.used} of 0</progress>
    <p class="muted small">This plan (${ws.plan}) includes no renders${
          usage.used > 0 ? `; ${usage.used} used this cycle` : ""
        }.</p>`
        : html`<p class="big">${usage.used} <span class="muted">of ${usage.included} used</span></p>
    <progress aria-label="Renders used this cycle" max="${Math.max(usage.included, 1)}" value="${
          Math.min(usage.used, Math.max(usage.included, 1))
        }">${usage.used} of ${usage.included}</progress>`
    }
    <p class="muted small">Renders made in the portal and through the API draw on the same allowance. Failed and canceled renders are refunded.</p>
  </section>
  <section class="card" aria-labelledby="storage-h">
    <h2 id="storage-h">Storage</h2>
    ${
      ws.storage_budget_bytes === 0
        ? html`<p class="big">No storage included</p>
    <p class="muted small">This plan (${ws.plan}) holds no photos${
          ws.storage_used_bytes > 0 ? `; ${bytes(ws.storage_used_bytes)} is still stored` : ""
        }.</p>`
        : html`<p class="big">${bytes(ws.storage_used_bytes)} <span class="muted">of ${
          bytes(ws.storage_budget_bytes)
        }</span></p>
    <progress aria-label="Storage used" max="100" value="${Math.round(storageShare * 100)}">${
          Math.round(storageShare * 100)
        }%</progress>`
    }
  </section>
</div>
<div class="grid two">
  <section class="card" aria-labelledby="status-h">
    <h2 id="status-h">By status</h2>
    <table>
      <caption class="visually-hidden">Renders this cycle by status</caption>
      <thead><tr><th scope="col">Status</th><th scope="col" class="num">Renders</th></tr></thead>
      <tbody>${
      Resources.RenderStatus.literals.map((st) =>
        html`<tr><th scope="row"><span class="status ${st}">${st}</span></th><td class="num">${byStatus[st]}</td></tr>`
      )
    }</tbody>
    </table>
  </section>
  <section class="card" aria-labelledby="spend-h">
    <h2 id="spend-h">Spend caps</h2>
    ${
      windows.length === 0
        ? canHoldKeys
          ? html`<p class="muted">No active API keys. <a href="/portal/keys">Create one</a>.</p>`
          : html`<p class="notice" role="note">Your plan (${ws.plan}) cannot hold API keys, so there are no spend caps to show. Ask the operator to move the workspace to a paid plan.</p>`
        : html`<table>
      <caption class="visually-hidden">Renders charged per key in the last 24 hours</caption>
      <thead><tr><th scope="col">Key</th><th scope="col" class="num">Last 24 h</th></tr></thead>
      <tbody>${
          windows.map(({ key, n }) =>
            html`<tr><th scope="row">${key.name === "" ? key.id : isolate(key.name)}</th><td class="num">${
              key.spend_cap_24h === null
                ? html`${n} <span class="muted">(no cap)</span>`
                : `${n} of ${key.spend_cap_24h}`
            }</td></tr>`
          )
        }</tbody>
    </table>`
    }
    ${
      canHoldKeys
        ? html`<p class="muted small">A key's cap counts only that key's renders; renders made in the portal use no key.</p>`
        : ""
    }
  </section>
</div>`
    return htmlResponse(document({ title: "Overview", signedIn: s.frame("Overview"), body }))
  })
