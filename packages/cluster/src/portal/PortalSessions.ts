import { SqlClient } from "@effect/sql"
import { Errors } from "@pic2video/domain"
import { Data, Effect } from "effect"
import { Buffer } from "node:buffer"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { KeyHasher } from "../config/KeyHasher.ts"
import * as Workspaces from "../repositories/Workspaces.ts"

/**
 * Sign-in to the account portal. The operator issues a single-use link (`admin portal link`); the page
 * it opens signs in with a POST from the portal's own page, which starts a browser session. Link tokens and session ids are 256 random bits; only their HMAC under
 * the service's key (the one API key secrets use) is stored, so the database alone signs nobody in,
 * and a lookup by that keyed hash leaks nothing usable about the token through its timing. The
 * workspace's status is read with the session on every request: an inactive workspace's sessions
 * stop at once.
 */
export const defaultLinkTtlMinutes = 15
export const maxLinkTtlMinutes = 24 * 60
/** A session unused this long ends (idle expiry)… */
export const sessionIdleMillis = 30 * 60_000
/** …and every session ends this long after sign-in, however busy (absolute expiry). */
export const sessionAbsoluteMillis = 12 * 3600_000
/** last_seen_at is written at most this often per session. */
const touchEvery = 60_000

const newToken = () => randomBytes(32).toString("base64url")

/** Anything that is not the shape we mint is not looked up at all (still hashed, so it times alike). */
const tokenShape = /^[A-Za-z0-9_-]{43}$/

const hashOf = (token: string) => Effect.map(KeyHasher, (h) => Buffer.from(h.hash(`portal:${token}`)))

export const issueLink = (workspaceId: string, ttlMinutes: number, publicBaseUrl: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workspace = yield* Workspaces.get(workspaceId)
    if (workspace.status !== "active") {
      return yield* Effect.fail(Errors.fail("tenant_inactive", `workspace ${workspaceId} is inactive; activate it before issuing a sign-in link`))
    }
    const token = newToken()
    const now = new Date()
    const expiresAt = new Date(now.getTime() + ttlMinutes * 60_000)
    // spent and lapsed links serve no purpose
    yield* sql`DELETE FROM portal_links WHERE expires_at < ${now}`.pipe(Effect.orDie)
    yield* sql`INSERT INTO portal_links ${sql.insert({
      token_hash: yield* hashOf(token),
      workspace_id: workspace.id,
      created_at: now,
      expires_at: expiresAt
    })}`.pipe(Effect.orDie)
    return {
      object: "portal_link" as const,
      url: `${publicBaseUrl}/portal/sign-in?token=${token}`,
      expires_at: expiresAt.toISOString()
    }
  })

/** What a sign-in asks of a link. */
export interface Redeeming {
  /** Spend it and start a session; false: only say whose it is (the page a link opens spends nothing). */
  readonly spend: boolean
  /**
   * Spend it only if it is this workspace's link (the browser is signed in to it already); another
   * workspace's link is then only named, so the person is asked before their session is replaced.
   */
  readonly onlyFor?: string | undefined
}

export type Redeemed =
  | { readonly _tag: "Started"; readonly session: string; readonly workspaceId: string; readonly expiresAt: Date }
  | { readonly _tag: "Usable"; readonly workspaceId: string }

/** A usable link that was asked about and not spent: its claim is rolled back. */
class Unspent extends Data.TaggedError("Unspent")<{ readonly workspaceId: string }> {}

/**
 * The link's one rule (once, while live, for an active workspace), asked by claiming it: spent, it
 * starts a session ("Started"); only asked about (see Redeeming), the claim is rolled back ("Usable").
 * Undefined when the link cannot be used — used, expired, unknown, or its workspace inactive — and
 * then nothing starts.
 */
export const redeem = (token: string, redeeming: Redeeming = { spend: true }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hash = yield* hashOf(token)
    if (!tokenShape.test(token)) return undefined
    const now = new Date()
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [claimed] = yield* sql<{ workspace_id: string; token_hash: Uint8Array }>`
        UPDATE portal_links l SET used_at = ${now}
        FROM workspaces w
        WHERE l.token_hash = ${hash} AND l.used_at IS NULL AND l.expires_at > ${now}
          AND w.id = l.workspace_id AND w.status = 'active'
        RETURNING l.workspace_id, l.token_hash`
      if (claimed === undefined || !timingSafeEqual(Buffer.from(claimed.token_hash), hash)) return undefined
      if (!redeeming.spend || (redeeming.onlyFor !== undefined && redeeming.onlyFor !== claimed.workspace_id)) {
        return yield* Effect.fail(new Unspent({ workspaceId: claimed.workspace_id }))
      }
      const session = newToken()
      yield* sql`INSERT INTO portal_sessions ${sql.insert({
        id_hash: yield* hashOf(session),
        workspace_id: claimed.workspace_id,
        created_at: now,
        last_seen_at: now,
        expires_at: new Date(now.getTime() + sessionAbsoluteMillis)
      })}`
      return { _tag: "Started", session, workspaceId: claimed.workspace_id, expiresAt: new Date(now.getTime() + sessionAbsoluteMillis) } satisfies Redeemed
    })).pipe(Effect.catchTag("Unspent", (u): Effect.Effect<Redeemed> => Effect.succeed({ _tag: "Usable", workspaceId: u.workspaceId })))
  }).pipe(Effect.orDie)

export interface Session {
  readonly workspaceId: string
  /** the token every mutation of this session must carry (bound to the session id) */
  readonly csrf: string
}

/** The live session behind a cookie value, or undefined (ended, idle, past its end, workspace inactive). */
export const resolve = (token: string | undefined) =>
  Effect.gen(function*() {
    if (token === undefined || !tokenShape.test(token)) return undefined
    const sql = yield* SqlClient.SqlClient
    const hash = yield* hashOf(token)
    const now = new Date()
    const [row] = yield* sql<{ workspace_id: string; id_hash: Uint8Array; last_seen_at: Date; status: "active" | "inactive" }>`
      SELECT s.workspace_id, s.id_hash, s.last_seen_at, w.status FROM portal_sessions s JOIN workspaces w ON w.id = s.workspace_id
      WHERE s.id_hash = ${hash} AND s.ended_at IS NULL AND s.expires_at > ${now}
        AND s.last_seen_at > ${new Date(now.getTime() - sessionIdleMillis)}`
    if (row === undefined || !timingSafeEqual(Buffer.from(row.id_hash), hash)) return undefined
    if (row.status !== "active") {
      // seen while the workspace is inactive: the session ends for good (reactivation needs a new link)
      yield* sql`UPDATE portal_sessions SET ended_at = ${now} WHERE id_hash = ${hash}`
      return undefined
    }
    if (now.getTime() - row.last_seen_at.getTime() >= touchEvery) {
      yield* sql`UPDATE portal_sessions SET last_seen_at = ${now} WHERE id_hash = ${hash}`
    }
    return { workspaceId: row.workspace_id, csrf: yield* csrfFor(token) } satisfies Session
  }).pipe(Effect.orDie)

/** Sign-out: the session ends for good (the cookie is worthless from now on). */
export const end = (token: string | undefined) =>
  Effect.gen(function*() {
    if (token === undefined || !tokenShape.test(token)) return
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE portal_sessions SET ended_at = ${new Date()} WHERE id_hash = ${yield* hashOf(token)} AND ended_at IS NULL`
  }).pipe(Effect.orDie)

const csrfFor = (token: string) => Effect.map(KeyHasher, (h) => Buffer.from(h.hash(`portal-csrf:${token}`)).toString("base64url"))

/** Constant-time check of a mutation's CSRF token against its session. */
export const csrfMatches = (session: Session, given: string | undefined) => {
  if (given === undefined) return false
  const a = Buffer.from(session.csrf)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}
