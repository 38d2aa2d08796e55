import { csrfMatches, PortalSessionService, type Session } from "@pic2video/cluster/services/PortalSessionService"
import { WorkspaceService } from "@pic2video/cluster/services/WorkspaceService"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Form, readForm } from "../Context.ts"
import { html, isolate } from "../Html.ts"
import { document, expiredPage, formRefusal, htmlResponse, messagePage, securityHeaders } from "../Layout.ts"

/**
 * Signing in and out (docs/portal.md, "Signing in"). A sign-in link opens a page; the page signs in
 * with a POST from this site (its script sends the form at once; without script, one button), so
 * nothing that only fetches the link — a mail scanner's GET, a HEAD — uses it up. The POST carries the
 * session cookie when there is one (it comes from this site), so a link of another workspace than the
 * one the browser is signed in to asks first (login CSRF: another site cannot switch a person into
 * its own workspace unasked). Sign-out is a change like every other: it needs the session's CSRF token.
 */
export const cookieName = "p2v_portal"
export const path = "/portal/sign-in"

const refused = messagePage(
  400,
  "This sign-in link cannot be used",
  html`<p>The link has already been used, has expired, or is not valid. A sign-in link works once, for a short time.</p>
<p>Ask the operator of this service for a new link. If you are still signed in in this browser, <a href="/portal">open the portal</a>.</p>`
)

const nameOf = (workspaceId: string) => WorkspaceService.use((workspaces) => workspaces.nameOf(workspaceId))

/** The page a link opens: a form that POSTs its token here (sent by the script at once when `auto`). */
const signInPage = (token: string, workspace: string, auto: boolean) =>
  htmlResponse(document({
    title: "Sign in",
    body: html`<h1>Sign in</h1>
<form method="post" action="${path}" class="card stack"${auto ? html` data-submit-on-load` : ""}>
  <input type="hidden" name="token" value="${token}">
  <p>This link signs you in to the workspace ${isolate(workspace)} in the pic2video portal.</p>
  <div><button type="submit" class="button primary">Sign in</button></div>
</form>`
  }))

/** Signed in to one workspace, the link is another's: the person chooses (the session's token confirms). */
const switchPage = (token: string, session: Session, current: string, other: string) =>
  htmlResponse(document({
    title: "Switch workspace",
    body: html`<h1>Sign in to ${isolate(other)} instead?</h1>
<form method="post" action="${path}" class="card stack">
  <input type="hidden" name="token" value="${token}">
  <input type="hidden" name="csrf" value="${session.csrf}">
  <p>You are signed in to ${isolate(current)} in this browser. This sign-in link is for the workspace ${
      isolate(other)
    }: signing in to it ends your session in ${isolate(current)}, and what you upload or create from then on goes to ${
      isolate(other)
    }.</p>
  <p>If you did not open this link yourself, stay where you are.</p>
  <div class="actions">
    <button type="submit" class="button primary"><span>Sign in to ${isolate(other)}</span></button>
    <a class="button quiet" href="/portal"><span>Stay in ${isolate(current)}</span></a>
  </div>
</form>`
  }))

const cookieOptions = (secure: boolean) => ({ httpOnly: true, sameSite: "strict", path: "/portal", secure }) as const

/** The one link token a request names (exactly one, or none). */
const single = (values: ReadonlyArray<string>) => (values.length === 1 ? values[0] : undefined)

/**
 * Whether a POST comes from a page of this service. Browsers say so (`Sec-Fetch-Site`, or else
 * `Origin`, which they send with every POST); a client that sends neither is no browser, and no other
 * site's page can make a browser omit them.
 */
const fromThisSite = (request: HttpServerRequest, publicBaseUrl: string) => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) return site === "same-origin"
  const origin = request.headers["origin"]
  if (origin === undefined) return true
  try {
    return origin === new URL(publicBaseUrl).origin || new URL(origin).host === request.headers["host"]
  } catch {
    return false
  }
}

/** GET (and HEAD) of a sign-in link: the page that signs in; nothing is spent. */
export const open = (request: HttpServerRequest, url: URL) =>
  Effect.gen(function*() {
    const sessions = yield* PortalSessionService
    const token = single(url.searchParams.getAll("token"))
    const link = token === undefined ? undefined : yield* sessions.redeem(token, { spend: false })
    if (token === undefined || link === undefined) return refused
    // a link opened from this site (typed, pasted) comes with the session cookie: ask at once
    const session = yield* sessions.resolve(request.cookies[cookieName])
    if (session !== undefined && session.workspaceId !== link.workspaceId) {
      return switchPage(token, session, yield* nameOf(session.workspaceId), yield* nameOf(link.workspaceId))
    }
    return signInPage(token, yield* nameOf(link.workspaceId), true)
  })

/** POST of the sign-in form: starts the session, or asks first (see the top of this file). */
export const submit = (request: HttpServerRequest, publicBaseUrl: string, secure: boolean) =>
  Effect.gen(function*() {
    const sessions = yield* PortalSessionService
    const form = yield* readForm(request)
    if (!(form instanceof Form)) return formRefusal(form)
    const token = single(form.all("token"))
    if (token === undefined) return refused
    if (!fromThisSite(request, publicBaseUrl)) {
      // another site's form: it may not start a session (the browser withheld the session cookie,
      // so the person's own session would be replaced unseen). The page, for the person to choose.
      const link = yield* sessions.redeem(token, { spend: false })
      return link === undefined ? refused : signInPage(token, yield* nameOf(link.workspaceId), false)
    }
    const previous = request.cookies[cookieName]
    const session = yield* sessions.resolve(previous)
    const confirmed = session !== undefined && csrfMatches(session, form.get("csrf"))
    const redeemed = yield* sessions.redeem(token, {
      spend: true,
      onlyFor: confirmed ? undefined : session?.workspaceId
    })
    if (redeemed === undefined) return refused
    if (redeemed._tag === "Usable") {
      return switchPage(token, session!, yield* nameOf(session!.workspaceId), yield* nameOf(redeemed.workspaceId))
    }
    // the session this one replaces ends for good
    if (session !== undefined) yield* sessions.end(previous)
    return HttpServerResponse.redirect("/portal", {
      status: 303,
      headers: { "cache-control": "no-store", ...securityHeaders }
    }).pipe(
      HttpServerResponse.setCookieUnsafe(cookieName, redeemed.session, {
        ...cookieOptions(secure),
        expires: redeemed.expiresAt
      })
    )
  })

export const signedOut = HttpServerResponse.redirect("/portal/signed-out", {
  status: 303,
  headers: { "cache-control": "no-store", ...securityHeaders }
})

/**
 * POST /portal/sign-out: with the session's CSRF token it ends the session (in the database: the
 * cookie is worthless from then on) and clears the cookie. Without a live session there is nothing
 * to end; a cookie is cleared only when the browser sent it (this site's request: another site's
 * never carries it, and its answer must not clear the cookie it could not see).
 */
export const signOut = (request: HttpServerRequest, secure: boolean) =>
  Effect.gen(function*() {
    const token = request.cookies[cookieName]
    const clear = HttpServerResponse.expireCookieUnsafe(cookieName, cookieOptions(secure))
    const sessions = yield* PortalSessionService
    const session = yield* sessions.resolve(token)
    if (session === undefined) return token === undefined ? signedOut : clear(signedOut)
    const form = yield* readForm(request)
    if (!(form instanceof Form)) return formRefusal(form)
    if (!csrfMatches(session, form.get("csrf"))) return expiredPage()
    yield* sessions.end(token)
    return clear(signedOut)
  })
