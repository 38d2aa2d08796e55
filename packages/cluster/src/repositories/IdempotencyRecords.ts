import { SqlClient } from "@effect/sql"
import { Idempotency } from "@pic2video/domain"
import { Effect } from "effect"

/**
 * Idempotency records (contract §4.6, §6, §7), scoped to the API key and the endpoint. The unique
 * constraint on (key, endpoint, value) makes PostgreSQL the arbiter: of any number of concurrent
 * first uses exactly one inserts the record and runs; the rest see it in progress. A record whose
 * request died with its process (lock lapsed, no outcome) is taken over by the next retry; the
 * render/import row is unique per record, so a takeover finds the earlier work instead of repeating it.
 */
export type Begin =
  | { readonly _tag: "New"; readonly recordId: number }
  | { readonly _tag: "Replay"; readonly recordId: number; readonly status: number; readonly body: unknown }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "InProgress" }

interface RecordRow {
  readonly id: number
  readonly fingerprint: string
  readonly status_code: number | null
  readonly response: unknown
  readonly locked_until: Date
}

const lockMillis = 30_000

export const begin = (apiKeyId: string, endpoint: string, key: string, fingerprint: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    yield* sql`DELETE FROM idempotency_records
      WHERE api_key_id = ${apiKeyId} AND endpoint = ${endpoint} AND key = ${key} AND expires_at <= ${now}`
    const inserted = yield* sql<{ id: number }>`
      INSERT INTO idempotency_records ${sql.insert({
        api_key_id: apiKeyId,
        endpoint,
        key,
        fingerprint,
        created_at: now,
        expires_at: new Date(now.getTime() + Idempotency.recordTtlMillis),
        locked_until: new Date(now.getTime() + lockMillis)
      })}
      ON CONFLICT (api_key_id, endpoint, key) DO NOTHING
      RETURNING id`
    if (inserted.length > 0) return { _tag: "New", recordId: Number(inserted[0].id) } satisfies Begin
    const [existing] = yield* sql<RecordRow>`
      SELECT id, fingerprint, status_code, response, locked_until FROM idempotency_records
      WHERE api_key_id = ${apiKeyId} AND endpoint = ${endpoint} AND key = ${key}`
    if (existing === undefined) return { _tag: "InProgress" } satisfies Begin // expired and deleted meanwhile
    if (existing.fingerprint !== fingerprint) return { _tag: "Conflict" } satisfies Begin
    if (existing.status_code !== null) {
      return { _tag: "Replay", recordId: Number(existing.id), status: existing.status_code, body: existing.response } satisfies Begin
    }
    if (existing.locked_until.getTime() > now.getTime()) return { _tag: "InProgress" } satisfies Begin
    const taken = yield* sql<{ id: number }>`
      UPDATE idempotency_records SET locked_until = ${new Date(now.getTime() + lockMillis)}
      WHERE id = ${existing.id} AND status_code IS NULL AND locked_until = ${existing.locked_until}
      RETURNING id`
    return taken.length > 0 ? { _tag: "New", recordId: Number(existing.id) } satisfies Begin : { _tag: "InProgress" } satisfies Begin
  }).pipe(Effect.orDie)

/**
 * Remembers a decided outcome. An outcome that is not remembered (§6: 5xx, 401/403/429 cannot
 * reach here) releases the record instead, so the retry runs again under the same record: if the
 * first attempt did charge after all, the retry finds its render rather than charging again.
 */
export const finish = (recordId: number, status: number, body: unknown) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (Idempotency.isRemembered(status)) {
      yield* sql`UPDATE idempotency_records SET status_code = ${status}, response = ${JSON.stringify(body ?? null)}::json
        WHERE id = ${recordId}`
    } else {
      yield* sql`UPDATE idempotency_records SET locked_until = ${new Date()} WHERE id = ${recordId} AND status_code IS NULL`
    }
  }).pipe(Effect.orDie)
