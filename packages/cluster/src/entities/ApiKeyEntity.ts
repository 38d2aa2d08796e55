import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Errors, RateLimit } from "@pic2video/domain"
import { Clock, Effect, Schema } from "effect"
import * as Renders from "../repositories/Renders.ts"
import * as RateWindows from "./RateWindows.ts"

/**
 * One entity per API key: the owner of the key's per-minute windows, and the way a key's charges
 * reach the charge transaction. Window updates are atomic in memory; PostgreSQL is the arbiter of
 * money across messages, runners and crashes (the charge transaction decides the spend cap and the
 * allowance under the key's row lock, so concurrent charges serialise there). Rate windows are
 * memory only, in the process that holds the key's shard (RateWindows.ts), and start empty there
 * (after a failover the worst case is one extra minute's budget).
 */
export const Admission = Schema.Struct({
  allowed: Schema.Boolean,
  limit: Schema.Number,
  remaining: Schema.Number,
  resetSeconds: Schema.Number
})
export type Admission = typeof Admission.Type

export class ChargeRefused extends Schema.TaggedError<ChargeRefused>()("ChargeRefused", {
  code: Schema.Literal("spend_cap_reached", "quota_exceeded", "service_unavailable"),
  message: Schema.String
}) {}

export const ChargeResult = Schema.Struct({
  renderId: Schema.String,
  /** false when an earlier attempt under the same idempotency record already charged */
  charged: Schema.Boolean
})

export const ApiKeyEntity = Entity.make("ApiKey", [
  Rpc.make("Admit", {
    payload: { bucket: Schema.Literal(...RateLimit.buckets), limit: Schema.Number },
    success: Admission
  }),
  Rpc.make("Charge", {
    payload: {
      renderId: Schema.String,
      workspaceId: Schema.String,
      mediaId: Schema.String,
      spendCap: Schema.NullOr(Schema.Number),
      request: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      idempotencyKey: Schema.NullOr(Schema.String),
      idempotencyRecordId: Schema.NullOr(Schema.Number),
      captionBlobKey: Schema.NullOr(Schema.String),
      /** epoch ms after which the caller has given up: the charge must not commit past it */
      deadline: Schema.Number
    },
    success: ChargeResult,
    error: ChargeRefused
  })
])

const tooLate = new ChargeRefused({ code: "service_unavailable", message: "the request timed out before it could be charged" })

export const layer = ApiKeyEntity.toLayer(
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const keyId = address.entityId
    const sql = yield* SqlClient.SqlClient

    return ApiKeyEntity.of({
      // the window table is shared with KeyAdmission's local path (RateWindows.ts)
      Admit: ({ payload }) => Effect.map(Clock.currentTimeMillis, (now) => RateWindows.admit(keyId, payload.bucket, payload.limit, now)),
      Charge: ({ payload }) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (now > payload.deadline) return yield* Effect.fail(tooLate)
          const result = yield* Renders.charge({
            id: payload.renderId,
            payer: { workspaceId: payload.workspaceId, keyId, spendCap24h: payload.spendCap },
            mediaId: payload.mediaId,
            request: payload.request,
            metadata: payload.metadata,
            idempotencyKey: payload.idempotencyKey,
            idempotencyRecordId: payload.idempotencyRecordId,
            captionBlobKey: payload.captionBlobKey,
            deadline: payload.deadline
          }).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.catchIf(
              (e): e is Errors.ApiFailure => e instanceof Errors.ApiFailure,
              (e) =>
                Effect.fail(new ChargeRefused({
                  code: e.code === "spend_cap_reached" || e.code === "quota_exceeded" ? e.code : "service_unavailable",
                  message: e.message
                }))
            )
          )
          return { renderId: result.row.id, charged: result._tag === "Charged" }
        })
    })
  }),
  // Admit is one atomic Ref.modify and Charge's correctness rests on the charge transaction (the
  // key's row lock and the conditional allowance update), so messages need not queue behind each
  // other: a burst of creates on one key waits in PostgreSQL, not in a mailbox against a timeout.
  { maxIdleTime: "2 minutes", concurrency: "unbounded" }
)
