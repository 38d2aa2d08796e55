import * as RouteMetrics from "@pic2video/api/RouteMetrics"
import { AppConfig } from "@pic2video/cluster/config/AppConfig"
import { csrfMatches, PortalSessionService } from "@pic2video/cluster/services/PortalSessionService"
import { WorkspaceService } from "@pic2video/cluster/services/WorkspaceService"
import { Errors } from "@pic2video/domain"
import { Cause, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { Form, NotFound, readForm, type Signed } from "./Context.ts"
import { html } from "./Html.ts"
import { expiredPage, formRefusal, messagePage, securityHeaders, sentence } from "./Layout.ts"
import { MintedForms } from "./MintedForms.ts"
import * as Batch from "./pages/Batch.ts"
import * as Drive from "./pages/Drive.ts"
import * as Keys from "./pages/Keys.ts"
import * as Library from "./pages/Library.ts"
import * as Overview from "./pages/Overview.ts"
import * as Renders from "./pages/Renders.ts"
import * as SignIn from "./pages/SignIn.ts"
import { RequestWindows } from "./RequestWindows.ts"

/**
 * The account portal (served by the API process under /portal, beside the v1 API, never through
 * it): server-rendered pages, a small script and a stylesheet. It signs people in with the
 * operator's single-use links and keeps a session cookie that only /portal ever sees; the public
 * API never reads a cookie. Every page and action goes through the same code the API and the
 * operator CLI use (keys, uploads, renders, archive, imports, drive).
 */
export const cookieName = SignIn.cookieName

/** Per workspace, per minute (RateLimit's fixed windows): every request, and mutations apart. */
export const requestsPerMinute = 600
export const mutationsPerMinute = 120

const staticFile = (name: string, contentType: string) => {
  const body = readFileSync(new URL(`../static/${name}`, import.meta.url))
  return {
    body: new Uint8Array(body),
    contentType,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`
  }
}
const statics: Record<string, ReturnType<typeof staticFile>> = {
  "/portal/static/portal.css": staticFile("portal.css", "text/css; charset=utf-8"),
  "/portal/static/portal.js": staticFile("portal.js", "text/javascript; charset=utf-8"),
  "/portal/static/icon.svg": staticFile("icon.svg", "image/svg+xml")
}

export const isPortalPath = (pathname: string) => pathname === "/portal" || pathname.startsWith("/portal/")

/**
 * What the portal holds in this process (its request windows, the key-minting forms already used),
 * provided where the portal is put beside the API; the pages' other services come with the API's.
 */
export const layer = Layer.mergeAll(RequestWindows.layer, MintedForms.layer)

const signedOut = SignIn.signedOut

const expired = (frame?: Signed["frame"]) => expiredPage(frame?.(undefined))

/** A failure from the shared code paths: its catalogue status, its message and code; never a trace. */
export const failurePage = (failure: Errors.ApiFailure, frame?: Signed["frame"]) =>
  messagePage(
    Errors.statusOf(failure.code),
    Errors.statusOf(failure.code) === 404 ? "Not found" : "That did not work",
    html`<p>${sentence(failure.message)} <span class="code">(${failure.code})</span></p>`,
    frame?.(undefined),
    Errors.failureHeaders(failure)
  )

export const notFoundPage = (frame?: Signed["frame"]) =>
  messagePage(
    404,
    "Not found",
    html`<p>There is nothing here, or it belongs to another workspace.</p>`,
    frame?.(undefined)
  )

type Handler<R> = (
  s: Signed,
  ...ids: Array<string>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Errors.ApiFailure | NotFound, R>
/**
 * A route by its template, as metrics name it (`/portal/renders/{id}`): each `{id}` matches one path
 * segment, passed on to the handler; the overview also answers with a trailing slash.
 */
const route = <R>(method: "GET" | "POST", template: string, handler: Handler<R>) => {
  const pattern = template.replace(/[.]/g, "\\.").replace(/\{[a-z]+\}/g, "([^/]+)")
  return [method, new RegExp(`^${pattern}${template === "/portal" ? "/?" : ""}$`), handler, template] as const
}

/** Method and path → handler; `{id}` segments are passed on. */
const routes = [
  route("GET", "/portal", Overview.page),
  route("GET", "/portal/keys", Keys.page),
  route("POST", "/portal/keys", Keys.mint),
  route("GET", "/portal/keys/{id}/revoke", Keys.confirmRevoke),
  route("POST", "/portal/keys/{id}/revoke", Keys.revoke),
  route("GET", "/portal/library", Library.page),
  route("POST", "/portal/library/upload", Library.upload),
  route("GET", "/portal/media/{id}/preview", Library.preview),
  route("GET", "/portal/media/{id}/archive", Library.confirmArchive),
  route("POST", "/portal/media/{id}/archive", Library.archive),
  route("GET", "/portal/renders", Renders.list),
  route("GET", "/portal/renders/new", Renders.newForm),
  route("POST", "/portal/renders", Renders.create),
  route("GET", "/portal/renders/batch", Batch.form),
  route("POST", "/portal/renders/batch", Batch.create),
  route("GET", "/portal/renders/{id}", Renders.detail),
  route("GET", "/portal/renders/{id}/video", (s, id) => Renders.file(s, id, "inline")),
  route("GET", "/portal/renders/{id}/download", (s, id) => Renders.file(s, id, "attachment")),
  route("GET", "/portal/renders/{id}/captions.vtt", Renders.captions),
  route("GET", "/portal/renders/{id}/poster.jpg", Renders.poster),
  route("GET", "/portal/renders/{id}/cancel", Renders.confirmCancel),
  route("POST", "/portal/renders/{id}/cancel", Renders.cancel),
  route("GET", "/portal/drive", Drive.page),
  route("POST", "/portal/drive/connect", Drive.connect),
  route("POST", "/portal/drive/disconnect", Drive.disconnect),
  route("POST", "/portal/drive/import", Drive.startImport),
  route("GET", "/portal/imports/{id}", Drive.importDetail)
]
/** What the pages need from the service (the database, the key hasher, stored files, the cluster…). */
type PageContext = Effect.Services<ReturnType<(typeof routes)[number][2]>>

/** The routes whose template the path fits (one per method), with its `{id}` segments. */
const routesOf = (path: string) =>
  routes.flatMap(([m, pattern, handler, template]) => {
    const match = pattern.exec(path)
    return match === null ? [] : [{ method: m, handler, template, ids: match.slice(1).map(safeDecode) }]
  })

/** The route a request is measured under: a page's template, a fixed path, or `unmatched`. */
const routeLabel = (path: string) =>
  statics[path] !== undefined || fixedPaths.has(path) ? path : routesOf(path)[0]?.template ?? RouteMetrics.unmatched
const fixedPaths = new Set(["/portal/sign-in", "/portal/signed-out", "/portal/sign-out"])

/** The portal as one HttpApp: the server's top-level dispatcher sends every /portal request here. */
export const app = Effect.gen(function*() {
  const request = yield* HttpServerRequest
  const url = new URL(request.url, "http://localhost")
  const path = url.pathname
  RouteMetrics.setRoute(request, routeLabel(path))
  const method = request.method === "HEAD" ? "GET" : request.method
  const config = yield* AppConfig
  const secure = config.publicBaseUrl.startsWith("https:")

  const file = statics[path]
  if (file !== undefined) {
    if (method !== "GET") {
      return messagePage(405, "Not allowed", "This address only answers GET.", undefined, { allow: "GET, HEAD" })
    }
    if (request.headers["if-none-match"] === file.etag) {
      return HttpServerResponse.empty({ status: 304, headers: { etag: file.etag, ...securityHeaders } })
    }
    return HttpServerResponse.uint8Array(file.body, {
      contentType: file.contentType,
      headers: { etag: file.etag, "cache-control": "no-cache", ...securityHeaders }
    })
  }
  if (path === SignIn.path) {
    if (method === "GET") return yield* SignIn.open(request, url)
    if (method === "POST") return yield* SignIn.submit(request, config.publicBaseUrl, secure)
    return messagePage(405, "Not allowed", "Open the sign-in link in your browser.", undefined, {
      allow: "GET, HEAD, POST"
    })
  }
  if (path === "/portal/signed-out") {
    return messagePage(
      200,
      "You are signed out",
      html`<p>Your session has ended (you signed out, it expired, or the workspace is not active).</p>
<p>To sign in again, ask the operator of this service for a new sign-in link.</p>`
    )
  }
  if (path === "/portal/sign-out") {
    if (method !== "POST") {
      return messagePage(405, "Not allowed", "Use the Sign out button.", undefined, { allow: "POST" })
    }
    return yield* SignIn.signOut(request, secure)
  }

  const session = yield* (yield* PortalSessionService).resolve(request.cookies[cookieName])
  if (session === undefined) return signedOut
  const workspace = yield* (yield* WorkspaceService).find(session.workspaceId)
  if (workspace === undefined) return signedOut
  const frame: Signed["frame"] = (section) => ({ csrf: session.csrf, workspaceName: workspace.name, section })

  const mutation = method !== "GET"
  const windows = yield* RequestWindows
  const overall = yield* windows.admit(`all:${workspace.id}`, requestsPerMinute)
  const writes = mutation ? yield* windows.admit(`mutations:${workspace.id}`, mutationsPerMinute) : overall
  if (!overall.allowed || !writes.allowed) {
    RouteMetrics.rateLimited.portal.unsafeUpdate(1, [])
    const wait = Math.max(overall.allowed ? 0 : overall.resetSeconds, writes.allowed ? 0 : writes.resetSeconds)
    return messagePage(
      429,
      "Too many requests",
      html`<p>This workspace sent too many requests this minute, so this one was not carried out: nothing was changed.</p><p>Wait ${wait} seconds and try again.</p>`,
      frame(undefined),
      {
        "retry-after": String(wait)
      }
    )
  }

  const matched = routesOf(path)
  if (matched.length === 0) return notFoundPage(frame)
  const chosen = matched.find((r) => r.method === method)
  if (chosen === undefined) {
    return messagePage(405, "Not allowed", "This address does not answer that kind of request.", frame(undefined), {
      allow: [...new Set(matched.map((r) => r.method))].join(", ")
    })
  }

  let form = new Form([])
  if (mutation) {
    // uploads carry their token in a header (the body is the file); forms in a hidden field
    const isUpload = (request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")
    if (isUpload) {
      if (!csrfMatches(session, request.headers["x-csrf-token"])) return expired(frame)
    } else {
      const read = yield* readForm(request)
      if (!(read instanceof Form)) return formRefusal(read, frame(undefined))
      if (!csrfMatches(session, read.get("csrf") ?? request.headers["x-csrf-token"])) {
        return expired(frame)
      }
      form = read
    }
  }

  const signed: Signed = { request, url, session, workspace, form, frame }
  const handler = chosen.handler as Handler<PageContext>
  return yield* handler(signed, ...chosen.ids).pipe(
    Effect.catchIf(
      (e): e is Errors.ApiFailure => e instanceof Errors.ApiFailure,
      (e) => Effect.succeed(failurePage(e, frame))
    ),
    Effect.catchIf((e): e is NotFound => e instanceof NotFound, () => Effect.succeed(notFoundPage(frame)))
  )
}).pipe(
  // never a trace: a fault is logged, and the person sees a plain page
  Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause)
      : Effect.as(
        Effect.logError("portal request failed", cause),
        messagePage(
          500,
          "Something went wrong",
          html`<p>The service could not finish this request. Nothing you entered is lost: go back and try again.</p>`
        )
      )
  ),
  Effect.map(HttpServerResponse.setHeaders(securityHeaders))
)

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
