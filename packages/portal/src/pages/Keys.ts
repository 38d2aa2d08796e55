import { ApiKeyService, defaultLimits } from "@pic2video/cluster/services/ApiKeyService"
import { Errors, Plans, Scopes, Text } from "@pic2video/domain"
import { Clock, Effect, Result } from "effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { type Form, orNotFound, type Signed } from "../Context.ts"
import { dateTime, flag, html, type Interpolated, isolate, plain } from "../Html.ts"
import { alert, document, htmlResponse, notice } from "../Layout.ts"
import { MintedForms } from "../MintedForms.ts"

/**
 * API keys: listed (never a secret), minted through `ApiKeyService.create` — the operator CLI's own
 * path, with its plan and scope rules — and revoked through `ApiKeyService.revoke`. The secret appears
 * once, in the answer to the mint itself; a form already used to mint mints nothing more (MintedForms).
 */

const keyOf = (s: Signed, id: string) =>
  Effect.flatMap(
    ApiKeyService.use((keys) => keys.find(id)),
    (k) => orNotFound(k?.workspace_id === s.workspace.id ? k : undefined)
  )

interface View {
  readonly secret?: { readonly name: string; readonly value: string }
  readonly error?: string
  readonly message?: Interpolated
  /** what the person had entered, shown again after a refusal */
  readonly values?: Form
}

const newFormId = () => crypto.randomUUID()

const render = (s: Signed, view: View, status = 200) =>
  Effect.gen(function*() {
    const keys = (yield* (yield* ApiKeyService).list(s.workspace.id)).data
    const plan = s.workspace.plan
    const canHold = Plans.planDefaults[plan].canHoldKeys
    const v = view.values
    const creates = s.workspace.included !== 0
    const now = yield* Clock.currentTimeMillis
    const expired = (k: (typeof keys)[number]) => k.expires_at !== null && new Date(k.expires_at).getTime() <= now
    const body = html`<h1>API keys</h1>
${
      view.secret === undefined ? "" : html`<section class="card secret" role="region" aria-label="New key secret">
  <h2>Key “${isolate(view.secret.name)}” created</h2>
  <p class="warning"><strong>Copy this key now. It will not be shown again.</strong></p>
  <div class="secret-row"><code data-testid="new-key-secret" id="new-key-secret">${view.secret.value}</code>
  <button type="button" class="button" data-copy="new-key-secret" aria-live="polite">Copy key</button></div>
  <p class="muted small">Send it as <code>Authorization: Bearer &lt;key&gt;</code>. Store it like a password.</p>
</section>`
    }
${notice(view.message)}
${alert(view.error)}
<section class="card" aria-labelledby="keys-h">
  <h2 id="keys-h">Your keys</h2>
  ${
      keys.length === 0 ?
        html`<p class="muted">No keys yet.</p>` :
        html`<div class="table-wrap"><table class="keys cards-on-phone">
    <caption class="visually-hidden">Keys</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Revoked</th><th scope="col">Spend cap</th><th scope="col">Per minute</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${
          keys.map((k) =>
            html`<tr${k.revoked_at !== null ? html` class="revoked"` : ""}>
      <th scope="row" class="key-name">${
              k.name === "" ? html`<span class="muted">(unnamed)</span>` : isolate(k.name)
            }</th>
      <td><code class="nowrap">${k.id}</code></td>
      <td>${k.scopes.map((sc) => html`<span class="chip">${sc}</span> `)}</td>
      <td data-label="Created">${dateTime(new Date(k.created_at))}</td>
      <td data-label="Last used">${
              k.last_used_at === null ? html`<span class="muted">never</span>` : dateTime(new Date(k.last_used_at))
            }</td>
      <td data-label="Expires">${
              k.expires_at === null
                ? html`<span class="muted">never</span>`
                : html`${expired(k) ? html`<span class="status expired">expired</span> ` : ""}${
                  dateTime(new Date(k.expires_at))
                }`
            }</td>
      <td data-label="Revoked">${
              k.revoked_at === null
                ? html`<span class="muted">no</span>`
                : html`<span class="status failed">revoked</span> ${dateTime(new Date(k.revoked_at))}`
            }</td>
      <td data-label="Spend cap" class="nowrap">${
              k.spend_cap_24h === null ? html`<span class="muted">no cap</span>` : `${k.spend_cap_24h} / 24 h`
            }</td>
      <td class="small" data-label="Per minute"><span class="nowrap">${k.creates_per_minute} creates,</span> <span class="nowrap">${k.reads_per_minute} reads,</span> <span class="nowrap">${k.uploads_per_minute} uploads</span></td>
      <td>${
              k.revoked_at === null
                ? html`<a role="button" class="button danger small" href="/portal/keys/${
                  encodeURIComponent(k.id)
                }/revoke" aria-label="Revoke ${k.name === "" ? k.id : plain(k.name)}">Revoke</a>`
                : ""
            }</td>
    </tr>`
          )
        }</tbody>
  </table></div>`
    }
</section>
${
      canHold ?
        html`<section class="card">
  <h2 id="create-h">Create a key</h2>
  ${
          creates
            ? ""
            : html`<p class="notice" role="note">On this plan (${plan}) renders cannot be created: a key can read and upload, but its render creates are refused.</p>`
        }
  <form method="post" action="/portal/keys" aria-label="Create a key" class="stack" data-once>
    <input type="hidden" name="csrf" value="${s.session.csrf}">
    <input type="hidden" name="form_id" value="${newFormId()}">
    <div class="field"><label for="key-name">Name</label>
      <input id="key-name" name="name" type="text" autocomplete="off" aria-describedby="key-name-hint" value="${
          v?.get("name") ?? ""
        }"><span class="hint" id="key-name-hint">Up to ${Text.maxKeyNameLength} characters</span></div>
    <fieldset><legend>Scopes</legend>
      <p class="muted small" id="scopes-hint">A key holds exactly the scopes you tick, nothing more.</p>
      <div class="checks">${
          Scopes.scopes.map((sc) =>
            html`<label class="check"><input type="checkbox" name="scopes" value="${sc}"${
              flag(v?.all("scopes").includes(sc) ?? false, "checked")
            } aria-describedby="scopes-hint"> ${sc}</label>`
          )
        }</div>
    </fieldset>
    <div class="grid fields">
      <div class="field"><label for="key-cap">Spend cap (renders per 24 hours)</label>
        <input id="key-cap" name="spend_cap_24h" type="number" min="0" step="1" inputmode="numeric" value="${
          v?.get("spend_cap_24h") ?? ""
        }"><span class="hint">Empty: no cap</span></div>
      <div class="field"><label for="key-creates">Creates per minute</label>
        <input id="key-creates" name="creates_per_minute" type="number" min="0" step="1" inputmode="numeric" placeholder="${defaultLimits.creates}" value="${
          v?.get("creates_per_minute") ?? ""
        }"></div>
      <div class="field"><label for="key-reads">Reads per minute</label>
        <input id="key-reads" name="reads_per_minute" type="number" min="0" step="1" inputmode="numeric" placeholder="${defaultLimits.reads}" value="${
          v?.get("reads_per_minute") ?? ""
        }"></div>
      <div class="field"><label for="key-uploads">Uploads per minute</label>
        <input id="key-uploads" name="uploads_per_minute" type="number" min="0" step="1" inputmode="numeric" placeholder="${defaultLimits.uploads}" value="${
          v?.get("uploads_per_minute") ?? ""
        }"></div>
      <div class="field"><label for="key-expires">Expires at</label>
        <input id="key-expires" name="expires_at" type="datetime-local" value="${
          v?.get("expires_at") ?? ""
        }" aria-describedby="key-expires-hint"><span class="hint" id="key-expires-hint">UTC, in the future; empty: never</span></div>
    </div>
    <div><button type="submit" class="button primary">Create key</button></div>
  </form>
</section>` :
        html`<section class="card"><h2>Create a key</h2><p class="notice" role="note">Your plan (${plan}) cannot hold API keys. Ask the operator to move the workspace to a paid plan (<span class="code">tier_not_eligible</span>).</p></section>`
    }`
    return htmlResponse(document({ title: "API keys", signedIn: s.frame("API keys"), body }), status)
  })

export const page = (s: Signed) => {
  const revoked = s.url.searchParams.get("revoked")
  if (revoked === null) return render(s, {})
  // named as the list names it (its own workspace's key only; anything else is just an id)
  return Effect.flatMap(ApiKeyService.use((keys) => keys.find(revoked)), (k) => {
    const name = k !== undefined && k.workspace_id === s.workspace.id && k.name !== ""
      ? html`“${isolate(k.name)}” (${isolate(revoked)})`
      : isolate(revoked)
    return render(s, { message: html`Key ${name} was revoked. Requests with it are now refused.` })
  })
}

const whole = (form: Form, name: string, label: string) => {
  const raw = form.text(name)
  if (raw === undefined) return Effect.succeed(undefined)
  return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw))
    ? Effect.succeed(Number(raw))
    : Effect.fail(Errors.fail("validation_failed", `${label} must be a whole number (0 or more)`))
}

export const mint = (s: Signed) =>
  Effect.gen(function*() {
    const form = s.form
    const formId = form.get("form_id") ?? ""
    const now = yield* Clock.currentTimeMillis
    const mintedForms = yield* MintedForms
    const earlier = yield* mintedForms.keyOf(formId)
    if (earlier !== undefined) {
      return yield* render(s, {
        message: `This form already created key ${earlier}; its secret was shown once and cannot be shown again.`
      })
    }
    const expiresRaw = form.text("expires_at")
    // datetime-local sends no zone: the form says the time is UTC
    const expiresAt = expiresRaw === undefined
      ? undefined
      : new Date(/[zZ]|[+-]\d\d:\d\d$/.test(expiresRaw) ? expiresRaw : `${expiresRaw}Z`)
    const created = yield* Effect.gen(function*() {
      if (expiresAt !== undefined && Number.isNaN(expiresAt.getTime())) {
        return yield* Effect.fail(Errors.fail("validation_failed", "Expires at must be a date and time"))
      }
      // the operator CLI may set a past expiry (contract); a person minting here means a usable key
      if (expiresAt !== undefined && expiresAt.getTime() <= now) {
        return yield* Effect.fail(Errors.fail("validation_failed", "Expiry must be in the future"))
      }
      const name = form.text("name") ?? ""
      return yield* (yield* ApiKeyService).create({
        workspaceId: s.workspace.id,
        scopes: form.all("scopes"),
        name,
        spendCap24h: yield* whole(form, "spend_cap_24h", "Spend cap"),
        createsPerMinute: yield* whole(form, "creates_per_minute", "Creates per minute"),
        readsPerMinute: yield* whole(form, "reads_per_minute", "Reads per minute"),
        uploadsPerMinute: yield* whole(form, "uploads_per_minute", "Uploads per minute"),
        expiresAt
      })
    }).pipe(Effect.result)
    if (Result.isFailure(created)) {
      const e = created.failure
      return yield* render(s, { error: `${e.message} (${e.code})`, values: form }, Errors.statusOf(e.code))
    }
    if (formId !== "") yield* mintedForms.remember(formId, created.success.id)
    return yield* render(s, {
      secret: {
        name: created.success.name === "" ? created.success.id : created.success.name,
        value: created.success.secret
      }
    })
  })

export const confirmRevoke = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const key = yield* keyOf(s, id)
    const body = html`<h1>Revoke key ${
      key.name === "" ? html`<span class="h1-id">${key.id}</span>` : html`“${isolate(key.name)}”`
    }?</h1>
<section class="card stack">
  <p>Every request with this key is refused from the moment you revoke it (<span class="code">api_key_revoked</span>). This cannot be undone; a new key can be created at any time.</p>
  <dl class="facts"><dt>ID</dt><dd><code>${key.id}</code></dd><dt>Scopes</dt><dd>${key.scopes.join(", ")}</dd></dl>
  <form method="post" action="/portal/keys/${encodeURIComponent(key.id)}/revoke" class="actions" data-once>
    <input type="hidden" name="csrf" value="${s.session.csrf}">
    <button type="submit" class="button danger">Revoke key</button>
    <a class="button quiet" href="/portal/keys">Keep the key</a>
  </form>
</section>`
    return htmlResponse(document({ title: "Revoke key", signedIn: s.frame("API keys"), body }))
  })

export const revoke = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const key = yield* keyOf(s, id)
    yield* (yield* ApiKeyService).revoke(key.id)
    return HttpServerResponse.redirect(`/portal/keys?revoked=${encodeURIComponent(key.id)}`, { status: 303 })
  })
