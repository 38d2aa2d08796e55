import * as DriveConfig from "@pic2video/cluster/drive/DriveConfig"
import { Integrations, toApiFailure } from "@pic2video/cluster/drive/Integrations"
import { ImportService } from "@pic2video/cluster/services/ImportService"
import { IntegrationService } from "@pic2video/cluster/services/IntegrationService"
import { Errors, ImportState, Requests } from "@pic2video/domain"
import { Effect, Option, Result } from "effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { orNotFound, type Signed } from "../Context.ts"
import { dateTime, html, isolate } from "../Html.ts"
import { alert, document, htmlResponse, notice } from "../Layout.ts"

/**
 * The workspace's drive: the same connection (`Integrations`), folder listing (`IntegrationService`)
 * and imports (`ImportService`, the ImportEntity) as the API's endpoints. A consent started here
 * remembers it with the OAuth state, and the API's callback sends the browser back to this page.
 */
const running = (status: string) => status === "pending"

const connectMessages: Record<string, { readonly ok: boolean; readonly text: string }> = {
  connected: { ok: true, text: "Your drive is connected (read-only)." },
  refused: { ok: false, text: "Access to the drive was not granted. You can try again." },
  invalidstate: {
    ok: false,
    text: "That connection link expired or was already used. Start again with Connect drive."
  },
  unavailable: { ok: false, text: "The drive provider could not be reached. Try again in a few minutes." }
}

/**
 * Why a file was skipped or failed, and why an import stopped, in a sentence; the code follows in
 * brackets as everywhere in the portal (the API's items carry only the code).
 */
const reasons: Record<string, string> = {
  unsupported_media_type: `Not a photo the service can use (${Requests.photoTypesText})`,
  already_imported: "Already in the library from an earlier import",
  payload_too_large: `Larger than the ${Requests.maxUploadMiB} MiB a photo may have`,
  download_failed: "The file could not be downloaded from the drive",
  file_limit_reached: `The import reached its limit of ${ImportState.maxFilesPerImport} files`,
  storage_budget_exceeded: "The workspace's storage is full",
  integration_not_connected: "The drive was disconnected during the import",
  unknown_folder: "The folder was not found in the drive, or is no longer shared with this workspace"
}
const reasonText = (code: string) => html`${reasons[code] ?? "Not imported"} <span class="code">(${code})</span>`

export const page = (s: Signed) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    const folders = yield* IntegrationService
    const status = yield* integrations.status(s.workspace.id)
    // without the operator's OAuth client (GOOGLE_*), Connect could only end on an error page
    // (the same configuration the drive client is built from: GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET)
    const configured = yield* DriveConfig.config.pipe(
      Effect.map((c) => Option.isSome(c.client)),
      Effect.orElseSucceed(() => false)
    )
    const folderId = s.url.searchParams.get("folder") ?? "root"
    const trail = (s.url.searchParams.get("trail") ?? "").split(",").filter((t) =>
      t !== "" && Requests.isFolderIdShape(t)
    )
    const connect = connectMessages[s.url.searchParams.get("connect") ?? ""]
    // the folder's name and children, or why they cannot be shown
    const browse = status.connected
      ? yield* Effect.result(Effect.gen(function*() {
        const name = folderId === "root"
          ? "My drive"
          : (yield* Effect.flatMap(integrations.open(s.workspace.id), (c) => c.getFolder(folderId)).pipe(
            Effect.mapError(toApiFailure)
          )).name
        const list = yield* folders.folders(s.workspace.id, { parent: folderId })
        return { name, list }
      }))
      : undefined
    const imports = yield* (yield* ImportService).recent(s.workspace.id, 20)
    const active = imports.some((i) => running(i.status))
    const here = (id: string, path: ReadonlyArray<string>) =>
      `/portal/drive?${new URLSearchParams(id === "root" ? {} : { folder: id, trail: path.join(",") }).toString()}`
    const body = html`<h1>Drive</h1>
${connect === undefined ? "" : connect.ok ? notice(connect.text) : alert(connect.text)}
<section class="card stack" aria-labelledby="conn-h">
  <h2 id="conn-h">Connection</h2>
  <p class="big">${
      status.connected
        ? html`<span class="status completed">Connected</span>`
        : html`<span class="status">Not connected</span>`
    }</p>
  ${
      status.connected
        ? html`<p class="muted small">Since ${dateTime(status.connectedAt)} · read-only access</p>`
        : configured
        ? html`<p class="muted">Connect a cloud drive to import a folder of photos into the library. You will be asked to grant read-only access.</p>`
        : html`<p class="notice neutral" role="note">Drive import is not set up on this server. Ask the operator of this service to configure it; until then, upload photos in the <a href="/portal/library">Library</a>.</p>`
    }
  ${
      configured || status.connected ?
        html`<div class="actions">
    ${
          configured
            ? html`<form method="post" action="/portal/drive/connect"><input type="hidden" name="csrf" value="${s.session.csrf}"><button type="submit" class="button${
              status.connected ? "" : " primary"
            }">${status.connected ? "Reconnect drive" : "Connect drive"}</button></form>`
            : ""
        }
    ${
          status.connected
            ? html`<form method="post" action="/portal/drive/disconnect"><input type="hidden" name="csrf" value="${s.session.csrf}"><button type="submit" class="button quiet">Disconnect</button></form>`
            : ""
        }
  </div>` :
        ""
    }
</section>
${
      browse === undefined ?
        "" :
        Result.isFailure(browse) ?
        html`<section class="card">${
          alert(`${browse.failure.message} (${browse.failure.code})`)
        }<p><a href="/portal/drive">Back to My drive</a></p></section>` :
        html`<section class="card stack" aria-labelledby="folder-h">
  <h2 id="folder-h">Folder: ${isolate(browse.success.name)}</h2>
  ${
          folderId === "root"
            ? ""
            : html`<p><a href="${here(trail[trail.length - 1] ?? "root", trail.slice(0, -1))}">Up</a></p>`
        }
  ${
          browse.success.list.data.length === 0
            ? html`<p class="muted">No folders inside this one.</p>`
            : html`<ul class="folders" aria-label="Folders">${
              browse.success.list.data.map((f) =>
                html`<li><a href="${
                  here(f.id, folderId === "root" ? [] : [...trail, folderId])
                }"><span aria-hidden="true">📁</span> ${isolate(f.name)}</a></li>`
              )
            }</ul>`
        }
  <form method="post" action="/portal/drive/import" class="actions" data-once>
    <input type="hidden" name="csrf" value="${s.session.csrf}">
    <input type="hidden" name="folder_id" value="${folderId}">
    <button type="submit" class="button primary">Import this folder</button>
    <span class="muted small">Imports the photos directly in “${
          isolate(browse.success.name)
        }”, not its sub-folders.</span>
  </form>
</section>`
    }
<section class="card" id="imports" data-live="imports"${active ? html` data-live-active` : ""}>
  <h2>Imports</h2>
  ${
      imports.length === 0 ?
        html`<p class="muted">No imports yet.</p>` :
        html`<div class="table-wrap"><table class="cards-on-phone">
    <caption class="visually-hidden">Imports</caption>
    <thead><tr><th scope="col">Import</th><th scope="col">Status</th><th scope="col" class="num">Found</th><th scope="col" class="num">Imported</th><th scope="col" class="num">Skipped</th><th scope="col" class="num">Failed</th><th scope="col">Started</th></tr></thead>
    <tbody>${
          imports.map((i) =>
            html`<tr>
      <th scope="row"><a href="/portal/imports/${i.id}"><code>${i.id}</code></a></th>
      <td data-label="Status"><span class="status ${i.status}">${i.status}</span></td>
      <td class="num" data-label="Found">${i.discovered}</td><td class="num" data-label="Imported">${i.imported}</td><td class="num" data-label="Skipped">${i.skipped}</td><td class="num" data-label="Failed">${i.failed}</td>
      <td data-label="Started">${dateTime(i.created_at)}</td>
    </tr>`
          )
        }</tbody>
  </table></div>`
    }
</section>`
    return htmlResponse(document({ title: "Drive", signedIn: s.frame("Drive"), body }))
  })

export const connect = (s: Signed) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    const started = yield* integrations.startConnect(s.workspace.id, { returnTo: "/portal/drive" })
    return HttpServerResponse.redirect(started.authorizationUrl, { status: 303 })
  })

export const disconnect = (s: Signed) =>
  Effect.gen(function*() {
    const service = yield* IntegrationService
    yield* service.disconnect(s.workspace.id).pipe(
      Effect.catchIf((e) => e instanceof Errors.ApiFailure && e.code === "integration_not_connected", () => Effect.void)
    )
    return HttpServerResponse.redirect("/portal/drive", { status: 303 })
  })

export const startImport = (s: Signed) =>
  Effect.gen(function*() {
    const folderId = s.form.get("folder_id") ?? ""
    if (!Requests.isFolderIdShape(folderId)) {
      return yield* Effect.fail(Errors.fail("validation_failed", "folder_id must be a drive folder id, not a URL"))
    }
    const service = yield* ImportService
    const created = yield* service.create({ workspaceId: s.workspace.id, keyId: null }, folderId, null)
    return HttpServerResponse.redirect(`/portal/imports/${created.id}`, { status: 303 })
  })

export const importDetail = (s: Signed, id: string) =>
  Effect.gen(function*() {
    const service = yield* ImportService
    const doc = yield* service.get(s.workspace.id, id).pipe(
      Effect.catchIf(
        (e) => e instanceof Errors.ApiFailure && e.code === "import_not_found",
        () => orNotFound(undefined)
      )
    )
    // the folder's name when the drive still answers; its id otherwise
    const integrations = yield* Integrations
    const folderName = yield* Effect.flatMap(integrations.open(s.workspace.id), (c) => c.getFolder(doc.folder_id)).pipe(
      Effect.map((f) => f.name),
      Effect.timeout("3 seconds"),
      Effect.orElseSucceed(() => undefined)
    )
    const body = html`<h1>Import <span class="h1-id">${doc.id}</span></h1>
<div id="import-live" data-live="import"${running(doc.status) ? html` data-live-active` : ""}>
<section class="card">
  <p class="big"><span class="status ${doc.status}">${doc.status}</span></p>
  <dl class="facts">
    <dt>Folder</dt><dd>${folderName === undefined ? "" : html`${isolate(folderName)} `}<code class="muted">${
      isolate(doc.folder_id)
    }</code></dd>
    <dt>Found</dt><dd>${doc.counts.discovered}</dd>
    <dt>Imported</dt><dd>${doc.counts.imported}</dd>
    <dt>Skipped</dt><dd>${doc.counts.skipped}</dd>
    <dt>Failed</dt><dd>${doc.counts.failed}</dd>
    <dt>Started</dt><dd>${dateTime(new Date(doc.created_at))}</dd>
    <dt>Finished</dt><dd>${dateTime(doc.completed_at === null ? null : new Date(doc.completed_at))}</dd>
    ${doc.stopped_reason === null ? "" : html`<dt>Stopped</dt><dd>${reasonText(doc.stopped_reason)}</dd>`}
  </dl>
</section>
<section class="card">
  ${
      doc.items.length === 0 ?
        html`<p class="muted">${running(doc.status) ? "Looking at the folder…" : "No files."}</p>` :
        html`<div class="table-wrap"><table class="cards-on-phone">
    <caption>Files</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Photo</th></tr></thead>
    <tbody>${
          doc.items.map((item) =>
            html`<tr>
      <th scope="row">${isolate(item.name)}</th>
      <td data-label="Status"><span class="status ${
              item.status === "imported" ? "completed" : item.status === "failed" ? "failed" : ""
            }">${item.status}</span></td>
      <td data-label="Reason">${
              "reason" in item && item.reason !== undefined
                ? reasonText(item.reason)
                : html`<span class="muted">—</span>`
            }</td>
      <td data-label="Photo">${
              "media_id" in item
                ? html`<a href="/portal/renders/new?media_id=${item.media_id}">Render it</a>`
                : html`<span class="muted">—</span>`
            }</td>
    </tr>`
          )
        }</tbody>
  </table></div>`
    }
</section>
</div>
<p><a href="/portal/drive">Back to Drive</a></p>`
    return htmlResponse(document({ title: `Import ${doc.id}`, signedIn: s.frame("Drive"), body }))
  })
