import { securityHeaders } from "@pic2video/api/PageHeaders"
import { Errors } from "@pic2video/domain"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { html, type Interpolated, isolate, type Markup, plain } from "./Html.ts"

/**
 * The frame of every portal page and the headers every portal response carries (the service's page
 * headers: no inline script or style anywhere, the Content-Security-Policy allows only the portal's
 * own files).
 */
export { securityHeaders }

export const nav = [
  ["Overview", "/portal"],
  ["API keys", "/portal/keys"],
  ["Library", "/portal/library"],
  ["Renders", "/portal/renders"],
  ["Drive", "/portal/drive"]
] as const

export type Section = (typeof nav)[number][0]

export interface Frame {
  readonly title: string
  /** the signed-in frame (nav + sign-out) when set */
  readonly signedIn?: { readonly csrf: string; readonly workspaceName: string; readonly section: Section | undefined }
  readonly body: Interpolated
}

export const document = (frame: Frame): Markup =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · pic2video portal</title>
<link rel="icon" href="/portal/static/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/portal/static/portal.css">
<script src="/portal/static/portal.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <div class="top-inner">
    <a class="brand" href="/portal"><span class="logo" aria-hidden="true">▶</span> pic2video</a>
    ${
    frame.signedIn === undefined ? "" : html`
    <nav aria-label="Portal">
      <ul>${
      nav.map(([name, href]) =>
        html`<li><a href="${href}"${
          frame.signedIn?.section === name ? html` aria-current="page"` : ""
        }>${name}</a></li>`
      )
    }</ul>
    </nav>
    <form class="signout" method="post" action="/portal/sign-out">
      <input type="hidden" name="csrf" value="${frame.signedIn.csrf}">
      <span class="workspace" title="Workspace: ${plain(frame.signedIn.workspaceName)}">${
      isolate(frame.signedIn.workspaceName)
    }</span>
      <button type="submit" class="button quiet">Sign out</button>
    </form>`
  }
  </div>
</header>
<main id="main" tabindex="-1">
${frame.body}
</main>
</body>
</html>
`

export const htmlResponse = (markup: Markup, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(markup.value, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { "cache-control": "no-store", ...securityHeaders, ...headers }
  })

/** A page that only says something (sign-in problems, errors, not found). */
export const messagePage = (
  status: number,
  title: string,
  text: Interpolated,
  frame?: Frame["signedIn"],
  headers?: Record<string, string>
) =>
  htmlResponse(
    document({
      title,
      signedIn: frame,
      body: html`<h1>${title}</h1>
<div class="card message${status >= 400 ? " problem" : ""}"${status >= 400 ? html` role="alert"` : ""}>${text}</div>
${frame !== undefined ? html`<p><a href="/portal">Back to the overview</a></p>` : ""}`
    }),
    status,
    headers
  )

/**
 * A message as a sentence: the first letter a capital (the API's messages start in lower case, as in
 * `quote: Expected string`); otherwise the API's own words, which the form promises to show.
 */
export const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1)

/** An error's message (it may quote what was sent: its bidi controls are removed, see `plain`). */
export const alert = (message: string | undefined) =>
  message === undefined ? "" : html`<div class="alert" role="alert">${plain(sentence(message))}</div>`
export const notice = (message: Interpolated | undefined) =>
  message === undefined ? "" : html`<div class="notice" role="status">${message}</div>`

/** A change without its session's CSRF token (another site's form, or a page open too long): nothing changes. */
export const expiredPage = (frame?: Frame["signedIn"]) =>
  messagePage(
    403,
    "This form has expired",
    html`<p>The page you sent this from is no longer valid (it was open too long, or it came from elsewhere). Nothing was changed.</p><p>Go back, reload the page and try again.</p>`,
    frame
  )

/** A form body that could not be read: too large (413, the connection closes, as the API's) or unreadable. */
export const formRefusal = (failure: Errors.ApiFailure, frame?: Frame["signedIn"]) =>
  failure.code === "payload_too_large"
    ? messagePage(413, "That form is too large", "Send less text in the form.", frame, Errors.failureHeaders(failure))
    : messagePage(400, "That form could not be read", "Send the form from the portal's own page.", frame)
