import { Caller, Plans, SpendCap } from "@pic2video/domain"
import { Clock, Context, DateTime, Effect, Layer, Schema } from "effect"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import { type RenderRow, RendersRepo } from "../repositories/RendersRepo.ts"
import { operation } from "../repositories/Repository.ts"

/**
 * The charge of a render (contract §3, §4.9): one from the workspace's allowance and, through a
 * key, a place in the key's 24-hour spend cap, decided by the one charge rule
 * (`SpendCap.chargeRefusal`) and taken with the render row in one transaction, or not at all.
 *
 * Creates of one payer serialise on the payer's row lock inside that transaction (the key's row,
 * or the workspace's for the portal), so a burst of creates on one key waits in PostgreSQL; nothing
 * in front of it (the key's entity included) needs to queue them.
 */

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The charge record: what the charge transaction inserts and who pays for it. The one definition
 * of it: `RenderService` builds it, the ApiKey entity's `Charge` message carries it as it is, and
 * `Charges.charge` takes it.
 */
export const NewRender = Schema.Struct({
  id: Schema.String,
  payer: Caller.Caller,
  mediaId: Schema.String,
  request: JsonObject,
  metadata: JsonObject,
  idempotencyKey: Schema.NullOr(Schema.String),
  idempotencyRecordId: Schema.NullOr(Schema.Number),
  captionBlobKey: Schema.NullOr(Schema.String),
  /** epoch ms: past it the caller has answered 503, so the charge must not commit */
  deadline: Schema.Number
})
export interface NewRender extends Schema.Schema.Type<typeof NewRender> {}

/**
 * A charge refused, with the catalogue's code and message: the rule's refusal, or nothing charged
 * because the charge could not complete in time or at all (`service_unavailable`). The one failure
 * of a charge, from here through the ApiKey entity to the RenderService, which answers it.
 */
export class ChargeRefused extends Schema.TaggedError<ChargeRefused>()("ChargeRefused", {
  code: Schema.Literals(["spend_cap_reached", "quota_exceeded", "service_unavailable"]),
  message: Schema.String
}) {}

export type Charged =
  | { readonly _tag: "Charged"; readonly row: RenderRow }
  /** a retried create under an idempotency record (or key, without one) that already holds a render: no second charge */
  | { readonly _tag: "Existing"; readonly row: RenderRow }

/** What a charge answers its caller (through the ApiKey entity's RPC too): the render, and whether this attempt charged it. */
export const ChargeResult = Schema.Struct({
  renderId: Schema.String,
  /** false when an earlier attempt under the same idempotency record already charged */
  charged: Schema.Boolean
})

export const resultOf = (charged: Charged): typeof ChargeResult.Type => ({
  renderId: charged.row.id,
  charged: charged._tag === "Charged"
})

const tooLate = () =>
  new ChargeRefused({ code: "service_unavailable", message: "the request timed out before it could be charged" })

export class Charges extends Context.Service<Charges>()("pic2video/Charges", {
  make: Effect.gen(function*() {
    const renders = yield* RendersRepo

    /**
     * The early look before the caption work (no locks): the charge transaction decides for real.
     * With a `count`, whether that many charges in a row would be allowed (the portal's batch asks
     * once up front).
     */
    const refusal = (payer: Caller.Caller, count = 1) =>
      Effect.gen(function*() {
        const now = yield* DateTime.nowAsDate
        const spendCap = payer.keyId === null ? null : payer.spendCap24h
        const charged = payer.keyId === null || spendCap === null
          ? 0
          : yield* renders.chargedInWindowAt(payer.keyId, now)
        const account = yield* renders.usageAt(payer.workspaceId, now)
        const standing = { spendCap, chargedInWindow: charged, included: account.included, used: account.used }
        const refused = SpendCap.chargeRefusalFor(standing, count)
        if (refused === undefined) return undefined
        const room = SpendCap.room(standing)
        return new ChargeRefused({
          code: refused,
          message: SpendCap.refusalMessageFor(
            refused,
            account.included,
            count,
            refused === "spend_cap_reached" ? room.cap : room.allowance
          )
        })
      }).pipe(operation("Charges.refusal"))

    /**
     * The one transaction that charges, under the payer's row lock: an earlier render of the same
     * idempotency record (or keyless key) is answered as it is; else the spend window is counted,
     * one is taken from the allowance (which locks its row) and `SpendCap.chargeRefusal` decides
     * on the counts before; then the render row is inserted — or none of it happens.
     */
    const charge = (r: NewRender): Effect.Effect<Charged, ChargeRefused> =>
      Effect.gen(function*() {
        const now = yield* DateTime.nowAsDate
        if (now.getTime() > r.deadline) return yield* Effect.fail(tooLate())
        const { payer } = r
        return yield* renders.withTransaction(
          Effect.gen(function*() {
            yield* renders.lockPayer(payer)
            const existing = r.idempotencyRecordId !== null
              ? yield* renders.byIdempotencyRecord(r.idempotencyRecordId)
              : payer.keyId === null && r.idempotencyKey !== null
              // keyless creates keep no idempotency record: the workspace lock makes this look exact
              ? yield* renders.keylessAt(payer.workspaceId, r.idempotencyKey, now)
              : undefined
            if (existing !== undefined) return { _tag: "Existing", row: existing } satisfies Charged
            const spendCap = payer.keyId === null ? null : payer.spendCap24h
            const charged = payer.keyId === null || spendCap === null
              ? 0
              : yield* renders.chargedInWindowAt(payer.keyId, now)
            const ws = yield* renders.allowance(payer.workspaceId)
            const cycleStart = Plans.cycleStart(ws.created_at, now)
            // take one, then ask the rule about the count before it: the row stays locked to the end, and a
            // refusal rolls the take back
            const { used } = yield* renders.takeAllowance({ workspaceId: payer.workspaceId, cycleStart })
            const refused = SpendCap.chargeRefusal({
              spendCap,
              chargedInWindow: charged,
              included: ws.included,
              used: used - 1
            })
            if (refused !== undefined) {
              return yield* Effect.fail(
                new ChargeRefused({ code: refused, message: SpendCap.refusalMessage(refused, ws.included) })
              )
            }
            const row = yield* renders.insert({
              render: {
                id: r.id,
                workspaceId: payer.workspaceId,
                apiKeyId: payer.keyId,
                mediaId: r.mediaId,
                request: r.request,
                metadata: r.metadata,
                idempotencyKey: r.idempotencyKey,
                idempotencyRecordId: r.idempotencyRecordId,
                captionBlobKey: r.captionBlobKey
              },
              cycleStart,
              now
            })
            // the caller stops waiting at the deadline and then looks for this row: never commit later
            if ((yield* Clock.currentTimeMillis) > r.deadline) return yield* Effect.fail(tooLate())
            return { _tag: "Charged", row } satisfies Charged
          })
        )
      }).pipe(
        // the transaction rolled back, so nothing was charged: a refusal to retry, not a defect that
        // would restart the key's entity and stall every other create on the key meanwhile
        Effect.catchTag("SqlError", (e) =>
          Effect.andThen(
            Effect.logError("charge transaction failed; nothing was charged", e),
            Effect.fail(
              new ChargeRefused({ code: "service_unavailable", message: "the render could not be charged" })
            )
          )),
        // a row the schema refuses, or no row where the statement returns one, is a defect
        Effect.catchTags({ SchemaError: Effect.die, NoSuchElementError: Effect.die }),
        Effect.tap((charged) =>
          charged._tag === "Charged" ? Effect.sync(() => WorkMetrics.rendersCreated.unsafeUpdate(1, [])) : Effect.void
        ),
        // the span keeps the name operators know it by (docs/operations.md, "Traces")
        Effect.withSpan("RendersRepo.charge", undefined, { captureStackTrace: false })
      )

    return { refusal, charge } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
