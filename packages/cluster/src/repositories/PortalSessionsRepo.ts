import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * Portal sign-in links and browser sessions as rows (services/PortalSessionService.ts holds the rules).
 * Tokens are never stored, only their keyed hashes. Every instant is the caller's (from `Clock`),
 * so expiry is decided on the time the caller read.
 */
const Hash = Schema.Uint8Array
const Timestamp = Schema.Date

const LiveSession = Schema.Struct({
  workspace_id: Schema.String,
  id_hash: Hash,
  last_seen_at: Timestamp,
  status: Schema.Literals(["active", "inactive"])
})
interface LiveSession extends Schema.Schema.Type<typeof LiveSession> {}

/** A link that was only asked about: its claim is rolled back. */
class Unspent extends Data.TaggedError("Unspent")<{ readonly workspaceId: string }> {}

interface NewLink {
  readonly tokenHash: Uint8Array
  readonly workspaceId: string
  readonly now: Date
  readonly expiresAt: Date
}

export class PortalSessionsRepo extends Context.Service<PortalSessionsRepo>()("pic2video/PortalSessionsRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const deleteLapsedLinks = SqlSchema.void({
      Request: Timestamp,
      execute: (now) => sql`DELETE FROM portal_links WHERE expires_at < ${now}`
    })
    const insertLink = SqlSchema.void({
      Request: Schema.Struct({
        token_hash: Hash,
        workspace_id: Schema.String,
        created_at: Timestamp,
        expires_at: Timestamp
      }),
      execute: (link) => sql`INSERT INTO portal_links ${sql.insert(link)}`
    })
    const claimLink = SqlSchema.findOneOption({
      Request: Schema.Struct({ hash: Hash, now: Timestamp }),
      Result: Schema.Struct({ workspace_id: Schema.String, token_hash: Hash }),
      execute: (r) =>
        sql`
          UPDATE portal_links l SET used_at = ${r.now}
          FROM workspaces w
          WHERE l.token_hash = ${r.hash} AND l.used_at IS NULL AND l.expires_at > ${r.now}
            AND w.id = l.workspace_id AND w.status = 'active'
          RETURNING l.workspace_id, l.token_hash`
    })
    const insertSession = SqlSchema.void({
      Request: Schema.Struct({
        id_hash: Hash,
        workspace_id: Schema.String,
        created_at: Timestamp,
        last_seen_at: Timestamp,
        expires_at: Timestamp
      }),
      execute: (session) => sql`INSERT INTO portal_sessions ${sql.insert(session)}`
    })
    const selectLive = SqlSchema.findOneOption({
      Request: Schema.Struct({ hash: Hash, now: Timestamp, seenSince: Timestamp }),
      Result: LiveSession,
      execute: (r) =>
        sql`
          SELECT s.workspace_id, s.id_hash, s.last_seen_at, w.status FROM portal_sessions s JOIN workspaces w ON w.id = s.workspace_id
          WHERE s.id_hash = ${r.hash} AND s.ended_at IS NULL AND s.expires_at > ${r.now}
            AND s.last_seen_at > ${r.seenSince}`
    })
    const endSession = SqlSchema.void({
      Request: Schema.Struct({ hash: Hash, now: Timestamp }),
      execute: (r) => sql`UPDATE portal_sessions SET ended_at = ${r.now} WHERE id_hash = ${r.hash} AND ended_at IS NULL`
    })
    const touchSession = SqlSchema.void({
      Request: Schema.Struct({ hash: Hash, now: Timestamp }),
      execute: (r) => sql`UPDATE portal_sessions SET last_seen_at = ${r.now} WHERE id_hash = ${r.hash}`
    })

    return {
      /** Stores a new link, forgetting the lapsed ones (spent or not, they serve no purpose). */
      addLink: (link: NewLink) =>
        Effect.andThen(
          deleteLapsedLinks(link.now),
          insertLink({
            token_hash: link.tokenHash,
            workspace_id: link.workspaceId,
            created_at: link.now,
            expires_at: link.expiresAt
          })
        ).pipe(operation("PortalSessionsRepo.addLink")),
      /**
       * Claims a live link of an active workspace and, if `spend` says so for its workspace, starts
       * the session it signs in, in one transaction ("Started"). A link only asked about is claimed
       * and rolled back ("Usable": nothing changes). Undefined (and no session) when there is no such
       * link or `matches` refuses the stored hash.
       */
      redeem: (
        link: { readonly hash: Uint8Array; readonly now: Date },
        session: { readonly hash: Uint8Array; readonly expiresAt: Date },
        matches: (stored: Uint8Array) => boolean,
        spend: (workspaceId: string) => boolean
      ) =>
        sql.withTransaction(Effect.gen(function*() {
          const claimed = yield* claimLink(link)
          if (Option.isNone(claimed) || !matches(claimed.value.token_hash)) return undefined
          const workspaceId = claimed.value.workspace_id
          if (!spend(workspaceId)) return yield* Effect.fail(new Unspent({ workspaceId }))
          yield* insertSession({
            id_hash: session.hash,
            workspace_id: workspaceId,
            created_at: link.now,
            last_seen_at: link.now,
            expires_at: session.expiresAt
          })
          return { _tag: "Started", workspaceId } as const
        })).pipe(
          Effect.catchTag("Unspent", (u) => Effect.succeed({ _tag: "Usable", workspaceId: u.workspaceId } as const)),
          operation("PortalSessionsRepo.redeem")
        ),
      /** The session behind this hash unless ended, past `now`'s absolute end, or unseen since `seenSince`. */
      live: (hash: Uint8Array, now: Date, seenSince: Date) =>
        selectLive({ hash, now, seenSince }).pipe(
          Effect.map(Option.getOrUndefined),
          operation("PortalSessionsRepo.live")
        ),
      end: (hash: Uint8Array, now: Date) => endSession({ hash, now }).pipe(operation("PortalSessionsRepo.end")),
      touch: (hash: Uint8Array, now: Date) => touchSession({ hash, now }).pipe(operation("PortalSessionsRepo.touch"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
