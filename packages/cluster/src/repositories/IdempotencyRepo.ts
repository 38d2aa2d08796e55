import { Idempotency } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * Idempotency records (contract §4.6, §6, §7), scoped to the API key and the endpoint. The unique
 * constraint on (key, endpoint, value) makes PostgreSQL the arbiter: of any number of concurrent
 * first uses exactly one inserts the record and runs; the rest see it in progress. A record whose
 * request died with its process (lock lapsed, no outcome) is taken over by the next retry; the
 * render/import row is unique per record, so a takeover finds the earlier work instead of repeating it.
 *
 * Time comes from `Clock`: a record expires `Idempotency.recordTtlMillis` (24 h) after it was made,
 * and a lock lapses 30 s after it was taken, both as this process's clock reads them.
 */
type Begin =
  | { readonly _tag: "New"; readonly recordId: number }
  | { readonly _tag: "Replay"; readonly recordId: number; readonly status: number; readonly body: unknown }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "InProgress" }

const RecordRow = Schema.Struct({
  id: Schema.Number,
  fingerprint: Schema.String,
  status_code: Schema.NullOr(Schema.Number),
  response: Schema.Unknown,
  locked_until: Schema.Date
})

const Scope = Schema.Struct({ apiKeyId: Schema.String, endpoint: Schema.String, key: Schema.String })
const Id = Schema.Struct({ id: Schema.Number })

const lockMillis = 30_000

export class IdempotencyRepo extends Context.Service<IdempotencyRepo>()("pic2video/IdempotencyRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const deleteExpired = SqlSchema.void({
      Request: Schema.Struct({ ...Scope.fields, now: Schema.Date }),
      execute: (r) =>
        sql`DELETE FROM idempotency_records
          WHERE api_key_id = ${r.apiKeyId} AND endpoint = ${r.endpoint} AND key = ${r.key} AND expires_at <= ${r.now}`
    })
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...Scope.fields, fingerprint: Schema.String, now: Schema.Date }),
      Result: Id,
      execute: (r) =>
        sql`
          INSERT INTO idempotency_records ${
          sql.insert({
            api_key_id: r.apiKeyId,
            endpoint: r.endpoint,
            key: r.key,
            fingerprint: r.fingerprint,
            created_at: r.now,
            expires_at: new Date(r.now.getTime() + Idempotency.recordTtlMillis),
            locked_until: new Date(r.now.getTime() + lockMillis)
          })
        }
          ON CONFLICT (api_key_id, endpoint, key) DO NOTHING
          RETURNING id`
    })
    const select = SqlSchema.findOneOption({
      Request: Scope,
      Result: RecordRow,
      execute: (r) =>
        sql`
          SELECT id, fingerprint, status_code, response, locked_until FROM idempotency_records
          WHERE api_key_id = ${r.apiKeyId} AND endpoint = ${r.endpoint} AND key = ${r.key}`
    })
    const takeOver = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Number, lockedUntil: Schema.Date, now: Schema.Date }),
      Result: Id,
      execute: (r) =>
        sql`
          UPDATE idempotency_records SET locked_until = ${new Date(r.now.getTime() + lockMillis)}
          WHERE id = ${r.id} AND status_code IS NULL AND locked_until = ${r.lockedUntil}
          RETURNING id`
    })
    const remember = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, status: Schema.Number, body: Schema.Unknown }),
      execute: (r) =>
        sql`UPDATE idempotency_records SET status_code = ${r.status}, response = ${JSON.stringify(r.body ?? null)}::json
          WHERE id = ${r.id}`
    })
    const unlock = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, now: Schema.Date }),
      execute: (r) =>
        sql`UPDATE idempotency_records SET locked_until = ${r.now} WHERE id = ${r.id} AND status_code IS NULL`
    })
    const deleteAllExpired = SqlSchema.void({
      Request: Schema.Date,
      execute: (now) => sql`DELETE FROM idempotency_records WHERE expires_at < ${now}`
    })

    return {
      begin: (apiKeyId: string, endpoint: string, key: string, fingerprint: string) =>
        Effect.gen(function*() {
          const now = yield* DateTime.nowAsDate
          const scope = { apiKeyId, endpoint, key }
          yield* deleteExpired({ ...scope, now })
          const inserted = yield* insert({ ...scope, fingerprint, now })
          if (Option.isSome(inserted)) return { _tag: "New", recordId: inserted.value.id } satisfies Begin
          const found = yield* select(scope)
          if (Option.isNone(found)) return { _tag: "InProgress" } satisfies Begin // expired and deleted meanwhile
          const existing = found.value
          if (existing.fingerprint !== fingerprint) return { _tag: "Conflict" } satisfies Begin
          if (existing.status_code !== null) {
            return {
              _tag: "Replay",
              recordId: existing.id,
              status: existing.status_code,
              body: existing.response
            } satisfies Begin
          }
          if (existing.locked_until.getTime() > now.getTime()) return { _tag: "InProgress" } satisfies Begin
          const taken = yield* takeOver({ id: existing.id, lockedUntil: existing.locked_until, now })
          return Option.isSome(taken)
            ? { _tag: "New", recordId: existing.id } satisfies Begin
            : { _tag: "InProgress" } satisfies Begin
        }).pipe(operation("IdempotencyRepo.begin")),
      /**
       * Remembers a decided outcome. An outcome that is not remembered (§6: 5xx, 401/403/429
       * cannot reach here) releases the record instead, so the retry runs again under the same
       * record: if the first attempt did charge after all, the retry finds its render rather than
       * charging again.
       */
      finish: (recordId: number, status: number, body: unknown) =>
        (Idempotency.isRemembered(status)
          ? remember({ id: recordId, status, body })
          : Effect.flatMap(DateTime.nowAsDate, (now) => unlock({ id: recordId, now }))).pipe(
            operation("IdempotencyRepo.finish")
          ),
      /** Forgets every record past its 24 hours (the sweeper's). */
      pruneExpired: DateTime.nowAsDate.pipe(Effect.flatMap(deleteAllExpired), operation("IdempotencyRepo.pruneExpired"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
