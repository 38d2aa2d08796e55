import type { Plans } from "@pic2video/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { ApiKeyRow } from "./ApiKeysRepo.ts"
import { RenderRow } from "./RendersRepo.ts"

/** What authenticating a request reads: the key's standing and limits, and its workspace's gates. */
interface KeyAndAccount extends
  Pick<
    ApiKeyRow,
    | "id"
    | "workspace_id"
    | "secret_hash"
    | "scopes"
    | "spend_cap_24h"
    | "creates_per_minute"
    | "reads_per_minute"
    | "uploads_per_minute"
    | "expires_at"
    | "revoked_at"
  >
{
  readonly ws_status: "active" | "inactive"
  readonly ws_api_enabled: boolean
  readonly ws_plan: Plans.Plan
}

const decodeRender = Schema.decodeUnknownEffect(RenderRow)

/**
 * The request path's reads of a key (contract §4.2–4.3, §14), run on every authenticated request:
 * reading the key's row and its workspace's gates fresh each time is what makes a revocation, an
 * expiry or a gate count on the very next request in every process. One statement whatever the key:
 * the caller looks up a decoy id for a malformed key (same cost). Only the columns authentication uses.
 *
 * Unlike the other repositories' operations these make no span of their own: on the hottest path
 * (every poll) a span, even a disabled one, provides a parent span, which copies the request's whole
 * context; the statement's own span (@effect/sql) is kept when traces are exported.
 */
export class KeyAccessRepo extends Context.Service<KeyAccessRepo>()("pic2video/KeyAccessRepo", {
  make: Effect.map(SqlClient.SqlClient, (sql) => ({
    findKeyAndAccount: (keyId: string) =>
      Effect.map(
        sql<KeyAndAccount>`
          SELECT k.id, k.workspace_id, k.secret_hash, k.scopes, k.spend_cap_24h, k.creates_per_minute,
            k.reads_per_minute, k.uploads_per_minute, k.expires_at, k.revoked_at,
            w.status AS ws_status, w.api_enabled AS ws_api_enabled, w.plan AS ws_plan
          FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
          WHERE k.id = ${keyId}`,
        (rows): KeyAndAccount | undefined => rows[0]
      ).pipe(Effect.orDie),

    /**
     * The same, with the render `renderId` names in the key's workspace read in the same statement
     * (one round trip for a poll). The key's columns are those of `findKeyAndAccount` and
     * decide as they do; the render is undefined when the key is unknown, its workspace has no render
     * by that id, or `renderId` is null (not a render id: the same statement, matching nothing, so a
     * poll costs the same whatever it names).
     */
    findKeyAccountAndRender: (keyId: string, renderId: string | null) =>
      Effect.gen(function*() {
        // the render's columns as they are (`r.*`, decoded by its schema, which ignores the key's),
        // the key's two that share a name with a render's under other names: a short statement,
        // which a traced poll exports with every span
        const rows = yield* sql<
          Omit<KeyAndAccount, "id" | "workspace_id"> & {
            readonly key_id: string
            readonly key_workspace_id: string
            readonly id: string | null
          }
        >`
          SELECT r.*, k.id AS key_id, k.workspace_id AS key_workspace_id, k.secret_hash, k.scopes,
            k.spend_cap_24h, k.creates_per_minute, k.reads_per_minute, k.uploads_per_minute, k.expires_at,
            k.revoked_at, w.status AS ws_status, w.api_enabled AS ws_api_enabled, w.plan AS ws_plan
          FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
            LEFT JOIN renders r ON r.id = ${renderId} AND r.workspace_id = k.workspace_id
          WHERE k.id = ${keyId}`
        const row = rows[0]
        if (row === undefined) return { key: undefined, render: undefined }
        const key: KeyAndAccount = {
          id: row.key_id,
          workspace_id: row.key_workspace_id,
          secret_hash: row.secret_hash,
          scopes: row.scopes,
          spend_cap_24h: row.spend_cap_24h,
          creates_per_minute: row.creates_per_minute,
          reads_per_minute: row.reads_per_minute,
          uploads_per_minute: row.uploads_per_minute,
          expires_at: row.expires_at,
          revoked_at: row.revoked_at,
          ws_status: row.ws_status,
          ws_api_enabled: row.ws_api_enabled,
          ws_plan: row.ws_plan
        }
        return { key, render: row.id === null ? undefined : yield* decodeRender(row) }
      }).pipe(Effect.orDie),

    /**
     * A key's secret hashed again (a rotation's window), unless its hash changed meanwhile; its use
     * recorded with it, so keys not yet moved are those not used since the switch.
     */
    rehash: (keyId: string, from: Uint8Array, to: Uint8Array, now: Date) =>
      Effect.asVoid(
        sql`UPDATE api_keys SET secret_hash = ${to}, last_used_at = ${now} WHERE id = ${keyId} AND secret_hash = ${from}`
      ).pipe(Effect.orDie),

    /** Sets last_used_at unless it is already more recent than `unlessSince`. */
    touchLastUsed: (keyId: string, now: Date, unlessSince: Date) =>
      Effect.asVoid(sql`UPDATE api_keys SET last_used_at = ${now} WHERE id = ${keyId}
        AND (last_used_at IS NULL OR last_used_at < ${unlessSince})`).pipe(Effect.orDie)
  }))
}) {
  static readonly layer = Layer.effect(this, this.make)
}
