import { Errors } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer } from "effect"
import { Buffer } from "node:buffer"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { KeyHasher } from "../config/KeyHasher.ts"
import { PortalSessionsRepo } from "../repositories/PortalSessionsRepo.ts"
import { WorkspacesRepo } from "../repositories/WorkspacesRepo.ts"

/**
 * Sign-in to the account portal. The operator issues a single-use link (`admin portal link`); the page
 * it opens signs in with a POST from the portal's own page, which starts a browser session. Link tokens and session ids are 256 random bits; only their HMAC under
 * the service's key (the one API key secrets use) is stored, so the database alone signs nobody in,
 * and a lookup by that keyed hash leaks nothing usable about the token through its timing. The
 * workspace's status is read with the session on every request: an inactive workspace's sessions
 * stop at once. Expiry is decided on `Clock`'s time.
 */
export const defaultLinkTtlMinutes = 15
export const maxLinkTtlMinutes = 24 * 60
/** A session unused this long ends (idle expiry)… */
const sessionIdleMillis = 30 * 60_000
/** …and every session ends this long after sign-in, however busy (absolute expiry). */
const sessionAbsoluteMillis = 12 * 3600_000
/** last_seen_at is written at most this often per session. */
const touchEvery = 60_000

const newToken = () => randomBytes(32).toString("base64url")

/** Anything that is not the shape we mint is not looked up at all (still hashed, so it times alike). */
const tokenShape = /^[A-Za-z0-9_-]{43}$/

/** What a sign-in asks of a link. */
interface Redeeming {
  /** Spend it and start a session; false: only say whose it is (the page a link opens spends nothing). */
  readonly spend: boolean
  /**
   * Spend it only if it is this workspace's link (the browser is signed in to it already); another
   * workspace's link is then only named, so the person is asked before their session is replaced.
   */
  readonly onlyFor?: string | undefined
}

type Redeemed =
  | { readonly _tag: "Started"; readonly session: string; readonly workspaceId: string; readonly expiresAt: Date }
  | { readonly _tag: "Usable"; readonly workspaceId: string }

export interface Session {
  readonly workspaceId: string
  /** the token every mutation of this session must carry (bound to the session id) */
  readonly csrf: string
}

/** Constant-time check of a mutation's CSRF token against its session. */
export const csrfMatches = (session: Session, given: string | undefined) => {
  if (given === undefined) return false
  const a = Buffer.from(session.csrf)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Portal sign-in links and the browser sessions they start, as the operator CLI and the portal use them. */
export class PortalSessionService extends Context.Service<PortalSessionService>()("pic2video/PortalSessionService", {
  make: Effect.gen(function*() {
    const sessions = yield* PortalSessionsRepo
    const workspaces = yield* WorkspacesRepo
    const hasher = yield* KeyHasher

    const hashOf = (token: string) => Buffer.from(hasher.hash(`portal:${token}`))
    const csrfFor = (token: string) => Buffer.from(hasher.hash(`portal-csrf:${token}`)).toString("base64url")

    const issueLink = (workspaceId: string, ttlMinutes: number, publicBaseUrl: string) =>
      Effect.gen(function*() {
        const workspace = yield* workspaces.get(workspaceId)
        if (workspace.status !== "active") {
          return yield* Effect.fail(
            Errors.fail(
              "tenant_inactive",
              `workspace ${workspaceId} is inactive; activate it before issuing a sign-in link`
            )
          )
        }
        const token = newToken()
        const now = yield* DateTime.nowAsDate
        const expiresAt = new Date(now.getTime() + ttlMinutes * 60_000)
        yield* sessions.addLink({ tokenHash: hashOf(token), workspaceId: workspace.id, now, expiresAt })
        return {
          object: "portal_link" as const,
          url: `${publicBaseUrl}/portal/sign-in?token=${token}`,
          expires_at: expiresAt.toISOString()
        }
      })

    /**
     * The link's one rule (once, while live, for an active workspace), asked by claiming it: spent, it
     * starts a session ("Started"); only asked about (see Redeeming), the claim is rolled back ("Usable").
     * Undefined when the link cannot be used — used, expired, unknown, or its workspace inactive — and
     * then nothing starts.
     */
    const redeem = (token: string, redeeming: Redeeming = { spend: true }) =>
      Effect.gen(function*() {
        const hash = hashOf(token)
        if (!tokenShape.test(token)) return undefined
        const now = yield* DateTime.nowAsDate
        const session = newToken()
        const expiresAt = new Date(now.getTime() + sessionAbsoluteMillis)
        const outcome = yield* sessions.redeem(
          { hash, now },
          { hash: hashOf(session), expiresAt },
          (stored) => timingSafeEqual(Buffer.from(stored), hash),
          (workspaceId) => redeeming.spend && (redeeming.onlyFor === undefined || redeeming.onlyFor === workspaceId)
        )
        if (outcome === undefined) return undefined
        return outcome._tag === "Usable"
          ? outcome satisfies Redeemed
          : { _tag: "Started", session, workspaceId: outcome.workspaceId, expiresAt } satisfies Redeemed
      })

    /** The live session behind a cookie value, or undefined (ended, idle, past its end, workspace inactive). */
    const resolve = (token: string | undefined) =>
      Effect.gen(function*() {
        if (token === undefined || !tokenShape.test(token)) return undefined
        const hash = hashOf(token)
        const now = yield* DateTime.nowAsDate
        const row = yield* sessions.live(hash, now, new Date(now.getTime() - sessionIdleMillis))
        if (row === undefined || !timingSafeEqual(Buffer.from(row.id_hash), hash)) return undefined
        if (row.status !== "active") {
          // seen while the workspace is inactive: the session ends for good (reactivation needs a new link)
          yield* sessions.end(hash, now)
          return undefined
        }
        if (now.getTime() - row.last_seen_at.getTime() >= touchEvery) yield* sessions.touch(hash, now)
        return { workspaceId: row.workspace_id, csrf: csrfFor(token) } satisfies Session
      })

    /** Sign-out: the session ends for good (the cookie is worthless from now on). */
    const end = (token: string | undefined) =>
      Effect.gen(function*() {
        if (token === undefined || !tokenShape.test(token)) return
        yield* sessions.end(hashOf(token), yield* DateTime.nowAsDate)
      })

    return { issueLink, redeem, resolve, end } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
