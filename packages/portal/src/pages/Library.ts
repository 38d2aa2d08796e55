import { schemaFailure, toFailure } from "@pic2video/api/ErrorResponse"
import * as RouteTable from "@pic2video/api/RouteTable"
import * as UploadBody from "@pic2video/api/UploadBody"
import * as MediaInference from "@pic2video/cluster/media/MediaInference"
import type { MediaRow } from "@pic2video/cluster/media/MediaLibrary"
import { MediaService } from "@pic2video/cluster/services/MediaService"
import { Cursor, Errors, Ids, Requests } from "@pic2video/domain"
import { UploadPayload } from "@pic2video/domain/api/Api"
import { Effect, Exit, Option, Schema } from "effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Multipart from "effect/http/Multipart"
import { orNotFound, type Signed } from "../Context.ts"
import { bytes, dateTime, html, isolate, isolated, plain } from "../Html.ts"
import { document, htmlResponse, notice } from "../Layout.ts"

/**
 * The photo library. Uploads go one file per request through the API's own multipart reader, the
 * same `UploadPayload` schema and limits, and the same `MediaService.upload` as the API, so a
 * file is accepted or refused exactly as `POST /api/v1/media` would, with the same codes.
 */
const pageSize = 24
const limits = Option.getOrUndefined(RouteTable.forEndpoint("uploadMedia")!.multipartLimits)
const decodeStrict = Schema.decodeUnknownEffect(UploadPayload)
/** The API's decode of an upload's parts: strict, the first problem only. */
const decodePayload = (parts: unknown) => decodeStrict(parts, Requests.strict)

export const page = (s: Signed) =>
  Effect.gen(function*() {
    const cursorParam = s.url.searchParams.get("cursor")
    const cursor = cursorParam === null ? undefined : Cursor.decodeCursor(cursorParam)
    const position = cursor !== undefined && Ids.isMediaId(cursor.id) ? cursor : undefined
    const list = yield* (yield* MediaService).rows(s.workspace.id, pageSize, position)
    const archived = s.url.searchParams.get("archived") === null ? undefined : s.url.searchParams.get("label") ?? ""
    const body = html`<h1>Library</h1>
${
      notice(
        archived === undefined
          ? undefined
          : archived === ""
          ? "The photo was archived."
          : html`The photo “${isolate(archived)}” was archived.`
      )
    }
<section class="card" aria-labelledby="upload-h">
  <h2 id="upload-h">Add to the library</h2>
  ${
      s.workspace.storage_budget_bytes === 0
        ? html`<p class="notice" role="note">This workspace's plan (${s.workspace.plan}) holds no photos: an upload is refused (<span class="code">quota_exceeded</span>). Ask the operator to move the workspace to a paid plan.</p>`
        : ""
    }
  <form class="upload stack" method="post" action="/portal/library/upload" enctype="multipart/form-data" data-upload data-csrf="${s.session.csrf}">
    <div class="dropzone" data-dropzone>
      <label for="photos">Photos</label>
      <input id="photos" name="file" type="file" multiple accept="image/jpeg,image/png,image/webp,image/gif" aria-describedby="photos-hint">
      <p id="photos-hint" class="muted small">${Requests.photoTypesText}, up to ${Requests.maxUploadMiB} MiB each. Choose files or drop them here.</p>
    </div>
    <div class="field"><label for="upload-label">Label (optional)</label><input id="upload-label" name="label" type="text" autocomplete="off" aria-describedby="upload-label-hint"><span class="hint" id="upload-label-hint">Up to ${Requests.maxLabelLength} characters. Empty: each photo is labelled with its file name.</span></div>
    <div><button type="submit" class="button primary">Upload</button></div>
    <noscript><p class="alert" role="alert">Uploading needs JavaScript in this browser.</p></noscript>
  </form>
  <ul class="uploads" aria-label="Uploads" aria-live="polite" data-uploads></ul>
</section>
<section aria-labelledby="photos-h" data-live="library-grid" id="library-grid">
  <h2 id="photos-h">In the library</h2>
  ${
      list.rows.length === 0 ?
        html`<p class="muted">${
          s.workspace.storage_budget_bytes === 0 ? "No photos." : "No photos yet. Upload some above."
        }</p>` :
        html`<form method="get" action="/portal/renders/batch" class="select-photos" data-select aria-label="Photos to render">
  <div class="select-bar">
    <button type="submit" class="button primary">Render selected</button>
    <label class="check" data-select-all hidden><input type="checkbox"> Select all on this page</label>
    <span class="muted small" role="status" data-select-count hidden></span>
    <span class="muted small" data-select-hint>Tick photos, then Render selected: one render each, one caption for all or one per photo.</span>
  </div>
  <ul class="photos" aria-label="Photos">${
          list.rows.map((m) =>
            html`<li class="photo card">
    <img src="/portal/media/${m.id}/preview" alt="${
              m.label === "" ? "Photo" : isolated(m.label)
            }" loading="lazy" width="${m.width ?? 300}" height="${m.height ?? 300}">
    <label class="check select-photo"><input type="checkbox" name="media_id" value="${m.id}"> Select<span class="visually-hidden"> ${
              m.label === "" ? "untitled photo" : isolate(m.label)
            }</span></label>
    <div class="photo-body">
      <p class="photo-label">${m.label === "" ? html`<span class="muted">Untitled</span>` : isolate(m.label)}</p>
      <p class="muted small"><span class="nowrap">${m.width ?? "?"} × ${
              m.height ?? "?"
            }</span> · <span class="nowrap">${bytes(m.file_size_bytes)}</span> · <span class="nowrap">${
              dateTime(m.created_at)
            }</span></p>
      <p class="muted small">${seen(m)}</p>
      ${m.tags.length === 0 ? "" : html`<p>${m.tags.map((t) => html`<span class="chip">${isolate(t)}</span> `)}</p>`}
      <div class="actions">
        <a class="button small" href="/portal/renders/new?media_id=${m.id}" aria-label="Render ${
              m.label === "" ? "photo" : plain(m.label)
            }">Render</a>
        <a role="button" class="button quiet small" href="/portal/media/${m.id}/archive" aria-label="Archive ${
              m.label === "" ? "photo" : plain(m.label)
            }">Archive</a>
      </div>
    </div>
  </li>`
          )
        }</ul>
  </form>`
    }
  <nav class="pager" aria-label="Pages">
    ${position === undefined ? "" : html`<a href="/portal/library">First page</a>`}
    ${
      list.nextCursor === null
        ? ""
        : html`<a href="/portal/library?cursor=${encodeURIComponent(list.nextCursor)}">Next page</a>`
    }
  </nav>
</section>`
    return htmlResponse(document({ title: "Library", signedIn: s.frame("Library"), body }))
  })

/**
 * What the service saw in the photo (the class a render uses unless its Image class says otherwise),
 * in the same words as the New render form's Image class field.
 */
const seen = (m: MediaRow) => {
  const c = MediaInference.seenAs(m)
  if (c !== null) return html`Seen as <span class="code">${c}</span>`
  return m.inference_status === "pending" ? "Being looked at…" : "Not classified: renders use the default class"
}

const outcome = (status: number, text: string) =>
  HttpServerResponse.text(text, {
    status,
    contentType: "text/plain; charset=utf-8",
    headers: { "cache-control": "no-store" }
  })

/** One file, as `POST /api/v1/media` takes it; answers the outcome as one line of text. */
export const upload = (s: Signed) =>
  Effect.gen(function*() {
    const type = (s.request.headers["content-type"] ?? "").toLowerCase()
    if (!type.startsWith("multipart/form-data") || !/;\s*boundary=/i.test(type)) {
      return outcome(400, "send the upload as multipart/form-data (invalid_request)")
    }
    const read = UploadBody.read(s.request).pipe(
      (m) => limits === undefined ? m : Effect.provideContext(m, Multipart.limitsServices(limits)),
      Effect.flatMap((parts) => Effect.mapError(decodePayload(parts), schemaFailure)),
      Effect.flatMap((payload) =>
        Effect.flatMap(MediaService, (media) =>
          Effect.as(
            media.upload(s.workspace.id, {
              source: "portal",
              path: payload.file.path,
              filename: payload.file.name,
              contentType: payload.file.contentType,
              label: payload.label,
              tags: payload.tags
            }),
            { name: payload.file.name }
          ))
      ),
      Effect.scoped
    )
    const exit = yield* Effect.exit(read)
    if (Exit.isSuccess(exit)) {
      return outcome(201, `Uploaded ${exit.value.name}`)
    }
    const { failure, unexpected } = toFailure(exit.cause)
    if (unexpected) {
      yield* Effect.logError("portal upload failed", exit.cause)
    }
    // the API's headers for it: past the size limit the reader stopped reading, and the connection closes
    return HttpServerResponse.setHeaders(
      outcome(Errors.statusOf(failure.code), `${failure.message} (${failure.code})`),
      Errors.failureHeaders(failure)
    )
  })

const photoOf = (s: Signed, id: string) =>
  Effect.flatMap(Effect.flatMap(MediaService, (media) => media.find(s.workspace.id, id)), orNotFound)

export const preview = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const media = yield* photoOf(s, id)
    const preview = yield* (yield* MediaService).previewOf(media)
    return HttpServerResponse.uint8Array(preview.bytes, {
      contentType: preview.contentType,
      headers: { "cache-control": "private, max-age=300" }
    })
  })

export const confirmArchive = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const m = yield* photoOf(s, id)
    const name = m.label === "" ? "this photo" : html`“${isolate(m.label)}”`
    const body = html`<h1>Archive ${name}?</h1>
<section class="card stack">
  <div class="confirm-photo"><img src="/portal/media/${m.id}/preview" alt="${
      m.label === "" ? "Photo" : isolated(m.label)
    }" width="${m.width ?? 300}" height="${m.height ?? 300}"></div>
  <p>An archived photo leaves the library and frees its storage; it can no longer be rendered. Renders already made from it keep their videos.</p>
  <form method="post" action="/portal/media/${m.id}/archive" class="actions" data-once>
    <input type="hidden" name="csrf" value="${s.session.csrf}">
    <button type="submit" class="button danger">Archive photo</button>
    <a class="button quiet" href="/portal/library">Keep it</a>
  </form>
</section>`
    return htmlResponse(document({ title: "Archive photo", signedIn: s.frame("Library"), body }))
  })

/** The operator CLI's `media archive` path, for this workspace's own photo only. */
export const archive = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const m = yield* photoOf(s, id)
    yield* (yield* MediaService).archive(m.id)
    const query = new URLSearchParams(m.label === "" ? { archived: "1" } : { archived: "1", label: m.label })
    return HttpServerResponse.redirect(`/portal/library?${query.toString()}`, { status: 303 })
  })
