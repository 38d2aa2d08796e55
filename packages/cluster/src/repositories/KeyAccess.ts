import { SqlClient } from "@effect/sql"
import type { Plans } from "@pic2video/domain"
import { Effect } from "effect"
import type { ApiKeyRow } from "./ApiKeys.ts"

/** What authenticating a request reads: the key's standing and limits, and its workspace's gates. */
export interface KeyAndAccount extends
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

/**
 * The client is passed in rather than read from the context: providing it per request copied the
 * request's whole context (a Map of every service) twice per request (allocation profile, issue 15).
 *
 * One query whatever the key: the caller looks up a decoy id for a malformed key (same cost). Run
 * on every authenticated request (contract §14): it is what makes a revocation, an expiry or a gate
 * count on the very next request in every process. Only the columns authentication uses.
 */
export const findKeyAndAccount = (sql: SqlClient.SqlClient, keyId: string) =>
  Effect.gen(function*() {
    const rows = yield* sql<KeyAndAccount>`
      SELECT k.id, k.workspace_id, k.secret_hash, k.scopes, k.spend_cap_24h, k.creates_per_minute,
        k.reads_per_minute, k.uploads_per_minute, k.expires_at, k.revoked_at,
        w.status AS ws_status, w.api_enabled AS ws_api_enabled, w.plan AS ws_plan
      FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.id = ${keyId}`
    return rows[0]
  }).pipe(Effect.orDie)

/** Sets last_used_at unless it is already more recent than `unlessSince`. */
export const touchLastUsed = (sql: SqlClient.SqlClient, keyId: string, now: Date, unlessSince: Date) =>
  Effect.gen(function*() {
    yield* sql`UPDATE api_keys SET last_used_at = ${now} WHERE id = ${keyId}
      AND (last_used_at IS NULL OR last_used_at < ${unlessSince})`
  }).pipe(Effect.orDie)
