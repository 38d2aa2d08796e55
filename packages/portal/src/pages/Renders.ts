import * as ByteRange from "@pic2video/api/ByteRange"
import { schemaFailure } from "@pic2video/api/ErrorResponse"
import * as MediaInference from "@pic2video/cluster/media/MediaInference"
import type { MediaRow } from "@pic2video/cluster/media/MediaLibrary"
import type { RenderRow } from "@pic2video/cluster/repositories/RendersRepo"
import { MediaService } from "@pic2video/cluster/services/MediaService"
import { PortalBatchService } from "@pic2video/cluster/services/PortalBatchService"
import { RenderService } from "@pic2video/cluster/services/RenderService"
import { Errors, Idempotency, RenderState, Requests, Resources, Text } from "@pic2video/domain"
import * as JsonBody from "@pic2video/domain/JsonBody"
import { Effect, FileSystem, Result, Schema } from "effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Form, orNotFound, type Signed } from "../Context.ts"
import { dateTime, flag, html, inertJson, isolate, isolated, type Markup, plain } from "../Html.ts"
import { alert, document, htmlResponse, sentence } from "../Layout.ts"

/**
 * Renders: listed and watched live (the page's own HTML, polled), created through the same
 * `RenderService.create` as `POST /api/v1/renders` — same validation, same charge transaction, same
 * allowance — with the workspace as the payer and no key (so no key's spend cap applies), canceled
 * through the same `cancel` as the operator CLI. The form carries its own idempotency key: a
 * double submit finds the render the first one charged.
 */
const pageSize = 25
const running = (status: string) => (RenderState.activeStatuses as ReadonlyArray<string>).includes(status)
const decodeStrict = Schema.decodeUnknownEffect(Requests.CreateRenderBody)
/** The API's decode of a create body: strict, the first problem only. */
export const decodeBody = (body: unknown) => decodeStrict(body, Requests.strict)

const renderOf = (s: Signed, id: string) =>
  Effect.flatMap(Effect.flatMap(RenderService, (renders) => renders.find(s.workspace.id, id)), orNotFound)

const statusBadge = (status: string) => html`<span class="status ${status}">${status}</span>`

/** A photo's name as the library shows it. */
export const photoName = (m: { readonly id: string; readonly label: string }) =>
  m.label === "" ? `Untitled photo (${m.id.slice(0, 8)})` : m.label
/** What the service saw in a photo, as the Photo list says it beside the size (nothing until it has looked). */
const seenNote = (m: MediaRow) => {
  const c = MediaInference.seenAs(m)
  return c === null ? "" : ` — seen as ${c}`
}

/** The first words of a caption, for a list row. */
const captionStart = (request: Record<string, unknown>) => {
  const quote = typeof request.quote === "string" ? request.quote.replace(/\s+/g, " ").trim() : ""
  const chars = Array.from(quote)
  return chars.length > 60 ? `${chars.slice(0, 60).join("").trimEnd()}…` : quote
}

/** A refusal recorded for one photo of a batch, in the portal's words where the API's are about keys. */
const batchRefusal = (code: string, message: string) =>
  code === "idempotency_conflict"
    ? "this form was already sent with another caption or options for this photo; open Render selected again to render it with these"
    : message

/**
 * The render's poster as a list thumbnail (9:16); before it has one, the photo being rendered, and a
 * neutral box for a render that ended without one (failed, canceled, or completed before posters).
 */
const thumbnail = (r: RenderRow, photo: MediaRow | undefined, caption: string) =>
  r.poster_blob_key !== null
    ? html`<img class="poster-thumb" src="/portal/renders/${r.id}/poster.jpg" alt="${
      posterAlt(caption, photo)
    }" width="45" height="80" loading="lazy">`
    : running(r.status) && photo !== undefined
    ? html`<img class="poster-thumb" src="/portal/media/${photo.id}/preview" alt="" width="45" height="80" loading="lazy">`
    : html`<span class="poster-thumb none" aria-hidden="true"></span>`

/** A poster's alt text: the caption it shows, else the photo's name (user text, isolated). */
const posterAlt = (caption: string, photo: MediaRow | undefined) =>
  caption !== ""
    ? `Poster: “${isolated(caption)}”`
    : photo !== undefined
    ? `Poster of ${isolated(photoName(photo))}`
    : "Poster of the render"

export const list = (s: Signed) =>
  Effect.gen(function*() {
    const raw = s.url.searchParams.get("status") ?? ""
    const status = Resources.RenderStatus.literals.find((st) => st === raw)
    const beforeAt = s.url.searchParams.get("before")
    const beforeId = s.url.searchParams.get("before_id")
    const before = beforeAt !== null && beforeId !== null && !Number.isNaN(new Date(beforeAt).getTime())
      ? { createdAt: new Date(beforeAt), id: beforeId }
      : undefined
    // ?batch=: the renders one "Render selected" form made (never paged: a batch is one Library page at most)
    const batchParam = s.url.searchParams.get("batch")
    const batch = batchParam === null
      ? undefined
      : yield* Effect.flatMap((yield* PortalBatchService).find(s.workspace.id, batchParam), orNotFound)
    const page = batch === undefined
      ? yield* (yield* RenderService).list(s.workspace.id, { status, limit: pageSize, before })
      : { rows: batch.renders.filter((r) => status === undefined || r.status === status), hasMore: false }
    const last = page.rows[page.rows.length - 1]
    const active = page.rows.some((r) => running(r.status))
    // the photos still in the library (an archived one has no preview to show)
    const mediaIds = [...page.rows.map((r) => r.media_id), ...(batch?.items.map((i) => i.media_id) ?? [])]
    const photos = new Map(
      (yield* Effect.forEach([...new Set(mediaIds)], (id) =>
        Effect.flatMap(MediaService, (media) => media.find(s.workspace.id, id)), { concurrency: 4 }))
        .flatMap((m) =>
          m === undefined ? [] : [[m.id, m] as const]
        )
    )
    const refused = batch?.items.filter((i) => i.render_id === null) ?? []
    const body = html`<h1>Renders</h1>
${
      batch === undefined ? "" : html`<section class="card" aria-labelledby="batch-h">
  <h2 id="batch-h">Batch of ${batch.items.length === 1 ? "1 photo" : `${batch.items.length} photos`}</h2>
  <p>Made with Render selected, ${dateTime(batch.batch.created_at)}: ${
        batch.renders.length === 1 ? "1 render" : `${batch.renders.length} renders`
      } created${refused.length === 0 ? "" : `, ${refused.length} not`}.</p>
  ${
        refused.length === 0 ?
          "" :
          html`<ul class="batch-refused" aria-label="Photos not rendered">${
            refused.map((i) => {
              const photo = photos.get(i.media_id)
              return html`<li><bdi>${
                photo === undefined ? "A photo no longer in the library" : photoName(photo)
              }</bdi>: ${
                sentence(batchRefusal(i.error_code ?? "", i.error_message ?? ""))
              } <span class="code">(${i.error_code})</span></li>`
            })
          }</ul>`
      }
  <p><a href="/portal/renders">All renders</a></p>
</section>`
    }
<div class="toolbar">
  <form method="get" action="/portal/renders">
    ${batch === undefined ? "" : html`<input type="hidden" name="batch" value="${batch.batch.id}">`}
    <div class="field"><label for="status-filter">Status</label>
      <select id="status-filter" name="status" data-autosubmit>
        <option value=""${flag(status === undefined, "selected")}>All</option>
        ${
      Resources.RenderStatus.literals.map((st) =>
        html`<option value="${st}"${flag(status === st, "selected")}>${st}</option>`
      )
    }
      </select></div>
    <button type="submit" class="button">Filter</button>
  </form>
  <a class="button primary" href="/portal/renders/new">New render</a>
</div>
<section class="card" id="renders-table" data-live="renders"${active ? html` data-live-active` : ""}>
  ${
      batch === undefined || batch.renders.length === 0
        ? ""
        : html`<p class="muted small" data-testid="batch-progress">${
          batch.renders.filter((r) => r.status === "completed").length
        } of ${batch.renders.length} completed${active ? " · updates by itself" : ""}</p>`
    }
  ${
      page.rows.length === 0 ?
        html`<p class="muted">${
          status === undefined
            ? (batch === undefined ? "No renders yet." : "No renders in this batch.")
            : `No ${status} renders${batch === undefined ? "" : " in this batch"}.`
        } <a href="/portal/renders/new">Make one</a> from a photo in your library.</p>` :
        html`<div class="table-wrap"><table class="cards-on-phone">
    <caption class="visually-hidden">Renders</caption>
    <thead><tr><th scope="col">Render</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Created</th></tr></thead>
    <tbody>${
          page.rows.map((r) => {
            const photo = photos.get(r.media_id)
            const caption = captionStart(r.request)
            return html`<tr>
      <th scope="row"><div class="render-cell">${
              thumbnail(r, photo, caption)
            }<div><a href="/portal/renders/${r.id}"><code>${r.id}</code></a>${
              caption === ""
                ? html`<span class="muted small row-caption">No caption</span>`
                : html`<span class="small row-caption">“${isolate(caption)}”</span>`
            }</div></div></th>
      <td data-label="Status">${statusBadge(r.status)}</td>
      <td data-label="Progress"><progress max="100" value="${r.progress}" aria-label="Progress of ${r.id}">${r.progress}%</progress></td>
      <td data-label="Created" class="nowrap">${dateTime(r.created_at)}</td>
    </tr>`
          })
        }</tbody>
  </table></div>`
    }
  ${
      page.hasMore && last !== undefined
        ? html`<nav class="pager" aria-label="Pages"><a href="/portal/renders?${
          new URLSearchParams({
            ...(status === undefined ? {} : { status }),
            before: last.created_at.toISOString(),
            before_id: last.id
          }).toString()
        }">Older renders</a></nav>`
        : ""
    }
</section>`
    return htmlResponse(document({ title: "Renders", signedIn: s.frame("Renders"), body }))
  })

const options = (values: ReadonlyArray<string>, chosen: string | undefined) =>
  html`<option value=""${flag(chosen === undefined || chosen === "", "selected")}>Default</option>${
    values.map((v) => html`<option value="${v}"${flag(chosen === v, "selected")}>${v}</option>`)
  }`

/** The caption's look, the motion and metadata: the same fields on the New render and Render selected forms. */
export const optionFields = (v: (name: string) => string) =>
  html`<div class="grid fields">
    <div class="field"><label for="r-style">Caption style</label><select id="r-style" name="caption_style">${
    options(Requests.captionStyles, v("caption_style"))
  }</select></div>
    <div class="field"><label for="r-color">Text colour</label><select id="r-color" name="text_color">${
    options(Requests.textColors, v("text_color"))
  }</select></div>
    <div class="field"><label for="r-size">Text size</label><select id="r-size" name="text_size">${
    options(Requests.textSizes, v("text_size"))
  }</select></div>
    <div class="field"><label for="r-class">Image class</label><select id="r-class" name="image_class" aria-describedby="r-class-hint">${
    options(Requests.imageClasses, v("image_class"))
  }</select><span class="hint" id="r-class-hint">What the photo shows, which shapes the motion. Default: what the service saw in the photo (the Library says, once it has looked).</span></div>
  </div>
  <div class="checks">
    <label class="check"><input type="checkbox" name="bold" value="true"${
    flag(v("bold") === "true", "checked")
  }> Bold</label>
    <label class="check"><input type="checkbox" name="bold_outline" value="true"${
    flag(v("bold_outline") === "true", "checked")
  }> Bold outline</label>
  </div>
  <div class="grid fields">
    <div class="field"><label for="r-theme">Page theme</label><input id="r-theme" name="page_theme" type="text" value="${
    v("page_theme")
  }" aria-describedby="r-theme-hint"><span class="hint" id="r-theme-hint">The name of one of the workspace’s page themes, if it uses them (up to 100 characters). Empty: none.</span></div>
    <div class="field"><label for="r-sub">Sub prompt</label><input id="r-sub" name="sub_prompt" type="text" value="${
    v("sub_prompt")
  }" aria-describedby="r-sub-hint"><span class="hint" id="r-sub-hint">Extra motion direction added to the generated one (advice, best effort). Up to 150 characters.</span></div>
    <div class="field"><label for="r-prompt">Render prompt</label><input id="r-prompt" name="render_prompt" type="text" value="${
    v("render_prompt")
  }" aria-describedby="r-prompt-hint"><span class="hint" id="r-prompt-hint">Replaces the generated motion description (advice, best effort). Up to 200 characters.</span></div>
  </div>
  <div class="field"><label for="r-meta">Metadata (JSON)</label>
    <textarea id="r-meta" name="metadata" spellcheck="false" placeholder='{"campaign": "spring"}' aria-describedby="r-meta-hint">${
    v("metadata")
  }</textarea>
    <span class="hint" id="r-meta-hint">Optional: a JSON object of up to 20 keys; values text, number, true/false or null.</span></div>`

const renderForm = (s: Signed, values: Form | undefined, error: string | undefined, status = 200) =>
  Effect.gen(function*() {
    const recent = yield* (yield* MediaService).rows(s.workspace.id, 100, undefined)
    const chosen = values?.get("media_id") ?? s.url.searchParams.get("media_id") ?? undefined
    // a photo chosen from the library's later pages (or an import) may be older than the newest 100:
    // it is offered too, so the form never falls back silently to another photo
    const older = chosen === undefined || chosen === "" || recent.rows.some((m) => m.id === chosen)
      ? undefined
      : yield* (yield* MediaService).find(s.workspace.id, chosen)
    const photos = { rows: older === undefined ? recent.rows : [older, ...recent.rows] }
    // chosen but gone (archived, another workspace's, mistyped): say so and preselect nothing
    const missing = chosen !== undefined && chosen !== "" && !photos.rows.some((m) => m.id === chosen)
    const v = (name: string) => values?.get(name) ?? ""
    const noRenders = s.workspace.included === 0
    // the photo the select shows first: the chosen one, or else the first (none when the chosen one is gone)
    const shown = photos.rows.find((m) => m.id === chosen) ?? (missing ? undefined : photos.rows[0])
    const body = html`<h1>New render</h1>
${alert(error)}
${
      missing && error === undefined && photos.rows.length > 0
        ? html`<p class="notice" role="status">The photo you chose is no longer in the library (it was archived, or the link is wrong). Choose another photo below.</p>`
        : ""
    }
${
      noRenders
        ? html`<p class="notice" role="note">This workspace's plan (${s.workspace.plan}) includes no renders: a create is refused (<span class="code">quota_exceeded</span>).</p>`
        : ""
    }
${
      photos.rows.length === 0 ?
        html`<section class="card"><p>Your library has no photos yet. <a href="/portal/library">Upload one</a> first.</p></section>` :
        html`<form method="post" action="/portal/renders" class="card stack" aria-label="New render" data-once>
  <input type="hidden" name="csrf" value="${s.session.csrf}">
  <input type="hidden" name="idempotency_key" value="${values?.get("idempotency_key") ?? crypto.randomUUID()}">
  <div class="photo-pick">
    ${
          shown === undefined
            ? html`<span id="r-photo-thumb-none" class="thumb big none" aria-hidden="true"></span>`
            : html`<img id="r-photo-thumb" class="thumb big" src="/portal/media/${shown.id}/preview" alt="${
              shown.label === "" ? "Photo" : isolated(shown.label)
            }" width="96" height="96">`
        }
    <div class="field"><label for="r-photo">Photo</label>
    <select id="r-photo" name="media_id" required data-preview="r-photo-thumb">${
          missing ? html`<option value="" selected disabled>Choose a photo</option>` : ""
        }${
          photos.rows.map((m) =>
            html`<option value="${m.id}" data-label="${m.label === "" ? "Photo" : isolated(m.label)}"${
              flag(chosen === m.id, "selected")
            }>${plain(photoName(m))} — ${m.width ?? "?"} × ${m.height ?? "?"}${seenNote(m)}</option>`
          )
        }</select></div>
  </div>
  <div class="field"><label for="r-quote">Quote</label>
    <textarea id="r-quote" name="quote" aria-describedby="r-quote-hint">${
          v("quote")
        }</textarea><span class="hint" id="r-quote-hint">Up to 500 characters. Empty: no caption.</span></div>
  ${optionFields(v)}
  <p class="muted small">A render uses one from the workspace's allowance; a failed or canceled render is refunded.</p>
  <div><button type="submit" class="button primary">Create render</button></div>
</form>`
    }`
    return htmlResponse(document({ title: "New render", signedIn: s.frame("Renders"), body }), status)
  })

export const newForm = (s: Signed) => renderForm(s, undefined, undefined)

/** The form as the API's JSON body: an empty field or "Default" is a field not sent. */
export const bodyOf = (form: Form): Result.Result<Record<string, unknown>, string> => {
  const body: Record<string, unknown> = { media_id: form.get("media_id") ?? "" }
  for (
    const name of [
      "caption_style",
      "text_color",
      "text_size",
      "image_class",
      "page_theme",
      "sub_prompt",
      "render_prompt"
    ]
  ) {
    const value = form.get(name)
    if (value !== undefined && value !== "") body[name] = value
  }
  const quote = form.get("quote")
  if (quote !== undefined && quote !== "") body.quote = Text.normaliseLineBreaks(quote)
  if (form.get("bold") === "true") body.bold = true
  if (form.get("bold_outline") === "true") body.bold_outline = true
  const metadata = form.get("metadata")?.trim()
  if (metadata !== undefined && metadata !== "") {
    // bounded like every JSON body of the API (docs/contract.md §10, H1)
    const parsed = JsonBody.parse(metadata)
    if (parsed._tag === "Invalid") return Result.fail("Metadata (JSON) is not valid JSON")
    if (parsed._tag === "TooDeep") return Result.fail(`Metadata (JSON): ${JsonBody.tooDeepMessage}`)
    body.metadata = parsed.value
  }
  return Result.succeed(body)
}

/** The API's own words for a body it refuses (the same decode, the same message). */
export const decodeFailure = (e: Schema.SchemaError) => Effect.succeed(schemaFailure(e))

export const create = (s: Signed) =>
  Effect.gen(function*() {
    const form = s.form
    const refuse = (failure: Errors.ApiFailure) =>
      renderForm(s, form, `${failure.message} (${failure.code})`, Errors.statusOf(failure.code))
    const key = form.get("idempotency_key") ?? ""
    if (!Idempotency.isValidKey(key)) {
      return yield* refuse(Errors.fail("validation_failed", "the form has lost its idempotency key; reload the page"))
    }
    const raw = bodyOf(form)
    if (Result.isFailure(raw)) return yield* refuse(Errors.fail("validation_failed", raw.failure))
    const decoded = yield* Effect.result(decodeBody(raw.success))
    if (Result.isFailure(decoded)) return yield* refuse(yield* decodeFailure(decoded.failure))
    const service = yield* RenderService
    const created = yield* Effect.result(
      service.create({ workspaceId: s.workspace.id, keyId: null, spendCap24h: null }, decoded.success, {
        key,
        recordId: null
      })
    )
    if (Result.isFailure(created)) {
      if (created.failure.code !== "idempotency_conflict") return yield* refuse(created.failure)
      // the form's key already made a render from other values (sent again after going back and
      // editing): 409 as the API answers, in the form's words, with a fresh key to send these values
      const fresh = new Form([...form.entries.filter(([k]) => k !== "idempotency_key"), [
        "idempotency_key",
        crypto.randomUUID()
      ]])
      return yield* renderForm(
        s,
        fresh,
        "This form was already sent with other values. Check them and send it again to create another render. (idempotency_conflict)",
        409
      )
    }
    return HttpServerResponse.redirect(`/portal/renders/${created.success.id}`, { status: 303 })
  })

const requestRows = (request: Record<string, unknown>): ReadonlyArray<Markup> => {
  const labels: Record<string, string> = {
    quote: "Quote",
    caption_style: "Caption style",
    text_color: "Text colour",
    text_size: "Text size",
    bold: "Bold",
    bold_outline: "Bold outline",
    page_theme: "Page theme",
    image_class: "Image class",
    sub_prompt: "Sub prompt",
    render_prompt: "Render prompt"
  }
  return Object.entries(labels).filter(([k]) => request[k] !== undefined).map(([k, label]) =>
    html`<dt>${label}</dt><dd>${
      typeof request[k] === "boolean" ? (request[k] ? "yes" : "no") : isolate(String(request[k]))
    }</dd>`
  )
}

export const detail = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const r = yield* renderOf(s, id)
    const media = yield* (yield* MediaService).find(s.workspace.id, r.media_id)
    const live = running(r.status)
    const rows = requestRows(r.request)
    const body = html`<h1>Render <span class="h1-id">${r.id}</span></h1>
<div id="render-live" data-live="render"${live ? html` data-live-active` : ""}>
<div class="player">
  <div>${
      r.status === "completed"
        ? html`<video controls preload="metadata" playsinline src="/portal/renders/${r.id}/video"${
          r.poster_blob_key === null ? "" : html` poster="/portal/renders/${r.id}/poster.jpg"`
        } aria-label="Video of render ${r.id}">${
          typeof r.request.quote === "string" && r.request.quote.trim() !== ""
            ? html`<track kind="captions" srclang="en" label="Caption" src="/portal/renders/${r.id}/captions.vtt">`
            : ""
        }</video>`
        : html`<div class="placeholder${live ? "" : " ended"}">${
          live
            ? html`<div><p>${
              r.status === "queued" ? "Waiting to start…" : "Rendering…"
            }</p><progress max="100" value="${r.progress}" aria-label="Render progress">${r.progress}%</progress></div>`
            : html`<p>No video: this render ${r.status === "failed" ? "failed" : "was canceled"}.</p>`
        }</div>`
    }</div>
  <div class="stack">
    <section class="card">
      <h2>Status</h2>
      <p class="big"><span data-testid="render-status" class="status ${r.status}">${r.status}</span></p>
      ${
      live
        ? html`<progress max="100" value="${r.progress}" aria-label="Progress">${r.progress}%</progress><p class="muted small">${r.progress}% · updates by itself</p>`
        : ""
    }
      ${
      r.status === "canceled"
        ? html`<p class="notice neutral" role="status">You canceled this render; it was refunded.</p>`
        : r.error_code === null
        ? ""
        : html`<div class="alert" role="alert">${
          sentence(r.error_message ?? r.error_code)
        } <span class="code">(${r.error_code})</span>${r.status === "failed" ? html` It was refunded.` : ""}</div>`
    }
      <div class="actions">
        ${
      r.status === "completed"
        ? html`<a class="button primary" href="/portal/renders/${r.id}/download" download>Download</a>`
        : ""
    }
        ${
      live ? html`<a role="button" class="button danger" href="/portal/renders/${r.id}/cancel">Cancel render</a>` : ""
    }
      </div>
      <dl class="facts">
        <dt>Created</dt><dd>${dateTime(r.created_at)}</dd>
        <dt>${r.status === "failed" || r.status === "canceled" ? "Ended" : "Completed"}</dt><dd>${
      dateTime(r.completed_at)
    }</dd>
        ${
      r.status === "completed"
        ? html`<dt>File</dt><dd>${r.asset_width} × ${r.asset_height}, ${r.asset_duration_sec ?? 0} s, ${
          r.asset_byte_size === null ? "" : `${Math.round(r.asset_byte_size / 1024)} KB`
        }</dd>`
        : ""
    }
        <dt>Photo</dt><dd>${
      media === undefined
        ? html`<span class="muted">archived</span>`
        : html`<div class="photo-ref"><img class="thumb big" src="/portal/media/${media.id}/preview" alt="" width="64" height="64"><div><span class="photo-label">${
          isolate(photoName(media))
        }</span><br><a href="/portal/renders/new?media_id=${media.id}">Render this photo again</a></div></div>`
    }</dd>
        <dt>Made with</dt><dd>${r.api_key_id === null ? "the portal" : html`key <code>${r.api_key_id}</code>`}</dd>
        ${r.idempotency_key === null ? "" : html`<dt>Idempotency key</dt><dd><code>${r.idempotency_key}</code></dd>`}
      </dl>
    </section>
    <section class="card">
      <h2>Caption and options</h2>
      ${
      rows.length === 0
        ? html`<p class="muted">No caption; every option at its default.</p>`
        : html`<dl class="facts">${rows}</dl>`
    }
    </section>
    <section class="card">
      <h2>Metadata</h2>
      ${
      Object.keys(r.metadata).length === 0
        ? html`<p class="muted">None.</p>`
        : html`<pre>${inertJson(r.metadata)}</pre>`
    }
    </section>
  </div>
</div>
</div>`
    return htmlResponse(document({ title: `Render ${r.id}`, signedIn: s.frame("Renders"), body }))
  })

/** The finished MP4 (the same file `GET /api/v1/renders/{id}/download` sends), with byte ranges for the player. */
export const file = (s: Signed, id: string, disposition: "inline" | "attachment") =>
  Effect.gen(function*() {
    const service = yield* RenderService
    const asset = yield* service.downloadFile(s.workspace.id, id).pipe(
      Effect.catchIf(
        (e) => e instanceof Errors.ApiFailure && e.code === "render_not_found",
        () => orNotFound(undefined)
      )
    )
    const fs = yield* FileSystem.FileSystem
    const size = Number((yield* Effect.orDie(fs.stat(asset.path))).size)
    const headers = {
      "content-disposition": `${disposition}; filename="${asset.filename}"`,
      "cache-control": "private, no-store",
      "accept-ranges": "bytes"
    }
    const range = ByteRange.parse(s.request.headers["range"], size)
    switch (range._tag) {
      case "Whole":
        return yield* Effect.orDie(HttpServerResponse.file(asset.path, { contentType: asset.contentType, headers }))
      case "Unsatisfiable":
        return HttpServerResponse.empty({
          status: 416,
          headers: { ...headers, "content-range": ByteRange.contentRange(range, size) }
        })
      case "Partial":
        return yield* Effect.orDie(HttpServerResponse.file(asset.path, {
          status: 206,
          contentType: asset.contentType,
          offset: range.start,
          bytesToRead: range.end - range.start + 1,
          headers: { ...headers, "content-range": ByteRange.contentRange(range, size) }
        }))
    }
  })

/**
 * A completed render's poster, for this workspace only (a foreign, unknown or poster-less render is
 * the portal's 404 page). The API has no poster: the portal serves it on its own route.
 */
export const poster = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const service = yield* RenderService
    const { blob, contentType } = yield* service.poster(s.workspace.id, id).pipe(
      Effect.catchIf((e) => e instanceof Errors.ApiFailure && e.code === "render_not_found", () =>
        Effect.succeed(undefined)),
      Effect.flatMap(orNotFound)
    )
    // a render's poster never changes (its key is written once): the browser may keep it
    return HttpServerResponse.stream(blob.stream, {
      contentType,
      contentLength: blob.size,
      headers: { "cache-control": "private, max-age=86400", ...(blob.etag === undefined ? {} : { etag: blob.etag }) }
    })
  })

export const confirmCancel = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const r = yield* renderOf(s, id)
    if (!running(r.status)) return HttpServerResponse.redirect(`/portal/renders/${r.id}`, { status: 303 })
    const body = html`<h1>Cancel render ${r.id}?</h1>
<section class="card stack">
  <p>The render stops and is refunded: it gives its render back to this cycle's allowance. This cannot be undone.</p>
  <form method="post" action="/portal/renders/${r.id}/cancel" class="actions" data-once>
    <input type="hidden" name="csrf" value="${s.session.csrf}">
    <button type="submit" class="button danger">Cancel render</button>
    <a class="button quiet" href="/portal/renders/${r.id}">Keep rendering</a>
  </form>
</section>`
    return htmlResponse(document({ title: "Cancel render", signedIn: s.frame("Renders"), body }))
  })

export const cancel = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const r = yield* renderOf(s, id)
    const service = yield* RenderService
    yield* service.cancel(s.workspace.id, r.id)
    return HttpServerResponse.redirect(`/portal/renders/${r.id}`, { status: 303 })
  })

const vttTime = (seconds: number) => {
  const ms = Math.max(0, Math.round(seconds * 1000))
  const pad = (n: number, w = 2) => String(n).padStart(w, "0")
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${
    pad(ms % 1000, 3)
  }`
}

/** The caption burned into the video, as a text track for screen readers and caption users. */
export const captions = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const r = yield* renderOf(s, id)
    const quote = typeof r.request.quote === "string" ? r.request.quote.trim() : ""
    if (r.status !== "completed" || quote === "") return yield* orNotFound(undefined)
    // a cue's text cannot hold a blank line (CR and CR LF end lines too) or "-->"
    const text = Text.normaliseLineBreaks(quote).replace(/\n\s*\n/g, "\n").replace(/-->/g, "→")
    return HttpServerResponse.text(`WEBVTT\n\n${vttTime(0)} --> ${vttTime(r.asset_duration_sec ?? 0)}\n${text}\n`, {
      contentType: "text/vtt; charset=utf-8",
      headers: { "cache-control": "private, no-store" }
    })
  })
