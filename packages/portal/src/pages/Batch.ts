import { MediaService } from "@pic2video/cluster/services/MediaService"
import { isBatchId, PortalBatchService } from "@pic2video/cluster/services/PortalBatchService"
import { RenderService } from "@pic2video/cluster/services/RenderService"
import { Errors, Ids, Requests } from "@pic2video/domain"
import { Effect, Result } from "effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Form, type Signed } from "../Context.ts"
import { html, isolated } from "../Html.ts"
import { alert, document, htmlResponse } from "../Layout.ts"
import { bodyOf, decodeBody, decodeFailure, optionFields, photoName } from "./Renders.ts"

/**
 * "Render selected": the Library's selection (a GET form of checkboxes, so it works without
 * JavaScript) opens one form, a caption and options for all or a caption per photo, whose post
 * makes one render per photo through `PortalBatchService`, which creates each with the same
 * `RenderService.create` as `POST /api/v1/renders`. Each render's idempotency key is derived from the
 * form's batch id and the photo, so the form sent twice charges nothing more. Before any is created
 * the allowance is asked once for all of them; then each is created and decided on its own, and the
 * renders list filtered to the batch shows what each photo came to.
 */

/** At most a Library page of photos in one batch. */
export const maxBatch = 24

/** The per-photo caption's field name. */
const quoteField = (mediaId: string) => `quote.${mediaId}`

/** The chosen photos, in order, each once; ids of the wrong shape are dropped. */
const chosenIds = (ids: ReadonlyArray<string>) => [...new Set(ids.filter(Ids.isMediaId).map((id) => id.toLowerCase()))]

const batchForm = (
  s: Signed,
  ids: ReadonlyArray<string>,
  values: Form | undefined,
  error: string | undefined,
  status = 200
) =>
  Effect.gen(function*() {
    const found = yield* Effect.forEach(ids.slice(0, maxBatch), (id) =>
      Effect.flatMap(MediaService, (media) => media.find(s.workspace.id, id)), { concurrency: 4 })
    const photos = found.flatMap((m) =>
      m === undefined ? [] : [m]
    )
    const gone = ids.slice(0, maxBatch).length - photos.length
    const v = (name: string) => values?.get(name) ?? ""
    const usage = yield* Effect.flatMap(RenderService, (r) => r.usage(s.workspace.id))
    const { used, included } = usage.aesthetic_quotes
    const left = included === null ? null : Math.max(0, included - used)
    const body = html`<h1>Render selected</h1>
${alert(error)}
${
      ids.length > maxBatch
        ? html`<p class="notice" role="status">At most ${maxBatch} photos go in one batch: the first ${maxBatch} you chose are below.</p>`
        : ""
    }
${
      gone > 0
        ? html`<p class="notice" role="status">${
          gone === 1 ? "One photo you chose is" : `${gone} photos you chose are`
        } no longer in the library (archived, or the link is wrong); ${gone === 1 ? "it is" : "they are"} left out.</p>`
        : ""
    }
${
      photos.length === 0
        ? html`<section class="card"><p>No photos are selected. In the <a href="/portal/library">Library</a>, tick the photos to render and choose <strong>Render selected</strong>.</p></section>`
        : html`<form method="post" action="/portal/renders/batch" class="card stack" aria-label="Render selected" data-once>
  <input type="hidden" name="csrf" value="${s.session.csrf}">
  <input type="hidden" name="batch_id" value="${values?.get("batch_id") ?? crypto.randomUUID()}">
  <p>${
          photos.length === 1 ? "One render" : `${photos.length} renders`
        }, one for each photo below, with the caption and options you choose here.
  ${
          left === null
            ? ""
            : html`This workspace has <strong>${left}</strong> of its ${included} renders left this billing cycle.`
        }</p>
  ${
          left !== null && left < photos.length
            ? html`<p class="notice" role="note">That is fewer than ${photos.length}: the batch will be refused whole (<span class="code">quota_exceeded</span>). Choose fewer photos in the <a href="/portal/library">Library</a>.</p>`
            : ""
        }
  <ul class="batch-photos" aria-label="Selected photos">${
          photos.map((m) =>
            html`<li><input type="hidden" name="media_id" value="${m.id}"><img class="thumb big" src="/portal/media/${m.id}/preview" alt="${
              isolated(m.label === "" ? "Photo" : m.label)
            }" width="64" height="64" loading="lazy"><span class="photo-label"><bdi>${photoName(m)}</bdi></span></li>`
          )
        }</ul>
  <div class="field"><label for="b-quote">Quote</label>
    <textarea id="b-quote" name="quote" aria-describedby="b-quote-hint">${
          v("quote")
        }</textarea><span class="hint" id="b-quote-hint">The caption of every photo below, up to 500 characters. Empty: no caption (unless a photo has its own).</span></div>
  <details class="per-photo"${
          values !== undefined && photos.some((m) => v(quoteField(m.id)) !== "") ? html` open` : ""
        }>
    <summary>A caption per photo</summary>
    <p class="muted small">A photo's own caption replaces the one above for that photo; left empty, the photo has the caption above.</p>
    <div class="stack">${
          photos.map((m, i) =>
            html`<div class="field"><label for="b-quote-${i}">Quote for <bdi>${photoName(m)}</bdi></label>
      <textarea id="b-quote-${i}" name="${quoteField(m.id)}" rows="2">${v(quoteField(m.id))}</textarea></div>`
          )
        }</div>
  </details>
  ${optionFields(v)}
  <p class="muted small">Each render uses one from the workspace's allowance; a failed or canceled render is refunded.</p>
  <div><button type="submit" class="button primary">Create ${
          photos.length === 1 ? "1 render" : `${photos.length} renders`
        }</button></div>
</form>`
    }`
    return htmlResponse(document({ title: "Render selected", signedIn: s.frame("Renders"), body }), status)
  })

/** The form for the Library's selection (`?media_id=…&media_id=…`). */
export const form = (s: Signed) => batchForm(s, chosenIds(s.url.searchParams.getAll("media_id")), undefined, undefined)

/** Each photo's create body, or the first field the API would refuse (in its words). */
const bodies = (form: Form, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const shared = bodyOf(form)
    if (Result.isFailure(shared)) return Result.fail(Errors.fail("validation_failed", shared.failure))
    const out: Array<{ readonly mediaId: string; readonly body: Requests.CreateRenderBody }> = []
    for (const mediaId of ids) {
      const own = form.get(quoteField(mediaId))?.replace(/\r\n/g, "\n") ?? ""
      const raw: Record<string, unknown> = {
        ...shared.success,
        media_id: mediaId,
        ...(own === "" ? {} : { quote: own })
      }
      const decoded = yield* Effect.result(decodeBody(raw))
      if (Result.isFailure(decoded)) return Result.fail(yield* decodeFailure(decoded.failure))
      out.push({ mediaId, body: decoded.success })
    }
    return Result.succeed(out)
  })

/**
 * The form's post: validated whole, the allowance asked once for every render not yet made under
 * this batch's keys (refused whole when it cannot cover them), then one create per photo, each
 * recorded with its outcome. Answers the renders list filtered to the batch.
 */
export const create = (s: Signed) =>
  Effect.gen(function*() {
    const ids = chosenIds(s.form.all("media_id"))
    const refuse = (failure: Errors.ApiFailure) =>
      batchForm(s, ids, s.form, `${failure.message} (${failure.code})`, Errors.statusOf(failure.code))
    const batchId = s.form.get("batch_id") ?? ""
    if (!isBatchId(batchId)) {
      return yield* refuse(Errors.fail("validation_failed", "the form has lost its batch id; reload the page"))
    }
    if (ids.length === 0) return yield* refuse(Errors.fail("validation_failed", "no photos were selected"))
    if (ids.length > maxBatch) {
      return yield* refuse(Errors.fail("validation_failed", `at most ${maxBatch} photos go in one batch`))
    }
    const made = yield* bodies(s.form, ids)
    if (Result.isFailure(made)) return yield* refuse(made.failure)

    const batches = yield* PortalBatchService
    const refusal = yield* batches.refusal(s.workspace.id, batchId, ids)
    if (refusal !== undefined) {
      return yield* refuse(Errors.fail(refusal.code, `${refusal.message}: nothing was created`))
    }
    yield* batches.create(s.workspace.id, batchId, made.success)
    return HttpServerResponse.redirect(`/portal/renders?batch=${batchId}`, { status: 303 })
  })
