import { Errors, Idempotency, Plans, RenderState, Requests, Resources, SpendCap } from "@pic2video/domain"
import { Clock, Context, DateTime, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import { operation } from "./Repository.ts"

/**
 * Renders as rows: every transition is written here, and GETs read it, so polling keeps working
 * while a runner is down. Each status change is decided by the domain's state machine
 * (`RenderState.transition`) on the row as read, and written with an UPDATE guarded on that very
 * state, so a change decided on a stale read writes nothing and is decided again. Money moves only
 * inside transactions here: the charge (allowance + spend cap + the render row, or nothing) and
 * the refund (status + allowance, or nothing).
 *
 * Time: the instants written and compared here (created_at, the spend window, the idempotency
 * window) come from `Clock`, passed to the statements as parameters, so a test can move them; the
 * counting and the allowance arithmetic stay in SQL, under the row locks that make them exact.
 */
const Timestamp = Schema.Date

/** The request as stored: the create body without its metadata (kept apart, verbatim). */
const StoredRequest = Schema.Struct(Requests.CreateRenderBody.fields).mapFields(Struct.omit(["metadata"]))

/** The renders row, decoded with the domain's own literals (status, error codes). */
export const RenderRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  api_key_id: Schema.NullOr(Schema.String),
  media_id: Schema.String,
  status: Resources.RenderStatus,
  progress: Schema.Number,
  request: StoredRequest,
  metadata: Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Null])),
  idempotency_key: Schema.NullOr(Schema.String),
  idempotency_record_id: Schema.NullOr(Schema.Number),
  caption_blob_key: Schema.NullOr(Schema.String),
  cycle_start: Timestamp,
  refunded_at: Schema.NullOr(Timestamp),
  error_code: Schema.NullOr(Schema.Literals(Errors.renderErrorCodes)),
  error_message: Schema.NullOr(Schema.String),
  asset_blob_key: Schema.NullOr(Schema.String),
  asset_content_type: Schema.NullOr(Schema.String),
  asset_width: Schema.NullOr(Schema.Number),
  asset_height: Schema.NullOr(Schema.Number),
  asset_byte_size: Schema.NullOr(Schema.Number),
  asset_duration_sec: Schema.NullOr(Schema.Number),
  /** the poster (a JPEG of one frame) of a completed render; null for renders completed before posters */
  poster_blob_key: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp)
})
export interface RenderRow extends Schema.Schema.Type<typeof RenderRow> {}

/** The state machine's view of a row. */
export const stateOf = (r: RenderRow): RenderState.RenderState => ({
  status: r.status,
  progress: r.progress,
  errorCode: r.error_code,
  hasAsset: r.asset_blob_key !== null,
  completed: r.completed_at !== null,
  refunded: r.refunded_at !== null
})

export const toDocument = (r: RenderRow, publicBaseUrl: string) => ({
  object: "render" as const,
  id: r.id,
  type: "aesthetic_quote" as const,
  status: r.status,
  progress: r.progress,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  completed_at: r.completed_at?.toISOString() ?? null,
  asset: RenderState.isCompleted(r.status)
    ? {
      url: `${publicBaseUrl}/api/v1/renders/${r.id}/download`,
      expires_at: null,
      content_type: r.asset_content_type,
      width: r.asset_width,
      height: r.asset_height,
      byte_size: r.asset_byte_size,
      duration_sec: r.asset_duration_sec ?? 0
    }
    : null,
  error: r.error_code !== null ? { code: r.error_code, message: r.error_message ?? r.error_code } : null,
  idempotency_key: r.idempotency_key,
  metadata: r.metadata
})

/**
 * Who pays for a render: always a workspace's allowance; through an API key (whose spend cap
 * applies) or, with `keyId` null, the workspace itself (the portal), to which no cap applies.
 */
export const Payer = Schema.Struct({
  workspaceId: Schema.String,
  keyId: Schema.NullOr(Schema.String),
  /** the key's cap, as read when the key was authenticated; null without a cap or a key */
  spendCap24h: Schema.NullOr(Schema.Number)
})
export interface Payer extends Schema.Schema.Type<typeof Payer> {}

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The charge record: what the charge transaction inserts and who pays for it. The one definition
 * of it: `RenderService` builds it, the ApiKey entity's `Charge` message carries it as it is, and
 * `charge` takes it.
 */
export const NewRender = Schema.Struct({
  id: Schema.String,
  payer: Payer,
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

export type Charged =
  | { readonly _tag: "Charged"; readonly row: RenderRow }
  /** a retried create under an idempotency record (or key, without one) that already holds a render: no second charge */
  | { readonly _tag: "Existing"; readonly row: RenderRow }

export interface Asset {
  readonly blobKey: string
  readonly contentType: string
  readonly width: number
  readonly height: number
  readonly byteSize: number
  readonly durationSec: number
  /** stored beside the video; null when the render made none */
  readonly posterBlobKey: string | null
}

/** What a transition writes besides the state: the message of an error, the finished file. */
export type Change =
  | { readonly event: { readonly _tag: "Started" } | { readonly _tag: "Progressed"; readonly percent: number } }
  | { readonly event: { readonly _tag: "Finished" }; readonly asset: Asset }
  | {
    readonly event: Extract<RenderState.RenderEvent, { readonly _tag: "Failed" | "Canceled" }>
    readonly message: string
  }

export type Applied =
  | { readonly _tag: "Applied"; readonly row: RenderRow }
  /** the state machine refused the event in the row's state (or there is no such render): nothing written */
  | { readonly _tag: "Refused"; readonly row: RenderRow | undefined }

export interface Usage {
  readonly cycleStart: Date
  readonly used: number
  readonly included: number | null
}

/** The (created_at, id) of the last row of the previous page of a newest-first list. */
export interface Before {
  readonly createdAt: Date
  readonly id: string
}

const Id = Schema.String
const Count = Schema.Struct({ n: Schema.Number })
const Ids = Schema.Struct({ id: Schema.String })
const Account = Schema.Struct({
  included: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  /** the workspace's latest allowance row that is not in the future (none: null) */
  usage_cycle_start: Schema.NullOr(Timestamp),
  usage_used: Schema.NullOr(Schema.Number)
})
const Allowance = Schema.Struct({ included: Schema.NullOr(Schema.Number), created_at: Timestamp })

export class RendersRepo extends Context.Service<RendersRepo>()("pic2video/RendersRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const selectOwned = SqlSchema.findOneOption({
      Request: Schema.Struct({ workspaceId: Schema.String, id: Id }),
      Result: RenderRow,
      execute: ({ id, workspaceId }) => sql`SELECT * FROM renders WHERE id = ${id} AND workspace_id = ${workspaceId}`
    })
    const selectById = SqlSchema.findOneOption({
      Request: Id,
      Result: RenderRow,
      execute: (id) => sql`SELECT * FROM renders WHERE id = ${id}`
    })
    const selectByRecord = SqlSchema.findOneOption({
      Request: Schema.Number,
      Result: RenderRow,
      execute: (recordId) => sql`SELECT * FROM renders WHERE idempotency_record_id = ${recordId}`
    })
    const selectKeyless = SqlSchema.findOneOption({
      Request: Schema.Struct({ workspaceId: Schema.String, idempotencyKey: Schema.String, since: Timestamp }),
      Result: RenderRow,
      execute: (r) =>
        sql`
          SELECT * FROM renders WHERE workspace_id = ${r.workspaceId} AND api_key_id IS NULL
            AND idempotency_key = ${r.idempotencyKey} AND created_at > ${r.since}
          ORDER BY created_at DESC LIMIT 1`
    })
    const countInWindow = SqlSchema.findOne({
      Request: Schema.Struct({ apiKeyId: Schema.String, since: Timestamp }),
      Result: Count,
      execute: (r) =>
        sql`
          SELECT count(*)::int AS n FROM renders
          WHERE api_key_id = ${r.apiKeyId} AND refunded_at IS NULL AND created_at > ${r.since}`
    })
    const selectAccount = SqlSchema.findOne({
      Request: Schema.Struct({ workspaceId: Schema.String, now: Timestamp }),
      Result: Account,
      execute: (r) =>
        sql`
          SELECT w.included, w.created_at, u.cycle_start AS usage_cycle_start, u.used AS usage_used
          FROM workspaces w LEFT JOIN LATERAL (
            SELECT cycle_start, used FROM allowance_usage
            WHERE workspace_id = w.id AND cycle_start <= GREATEST(${r.now}, w.created_at)
            ORDER BY cycle_start DESC LIMIT 1
          ) u ON true
          WHERE w.id = ${r.workspaceId}`
    })
    const lockPayer = SqlSchema.void({
      Request: Payer,
      execute: (payer) =>
        payer.keyId !== null
          ? sql`SELECT id FROM api_keys WHERE id = ${payer.keyId} FOR UPDATE`
          : sql`SELECT id FROM workspaces WHERE id = ${payer.workspaceId} FOR NO KEY UPDATE`
    })
    const selectAllowance = SqlSchema.findOne({
      Request: Schema.String,
      Result: Allowance,
      execute: (workspaceId) => sql`SELECT included, created_at FROM workspaces WHERE id = ${workspaceId}`
    })
    const takeAllowance = SqlSchema.findOne({
      Request: Schema.Struct({ workspaceId: Schema.String, cycleStart: Timestamp }),
      Result: Schema.Struct({ used: Schema.Number }),
      execute: (r) =>
        sql`
          INSERT INTO allowance_usage (workspace_id, cycle_start, used) VALUES (${r.workspaceId}, ${r.cycleStart}, 1)
          ON CONFLICT (workspace_id, cycle_start) DO UPDATE SET used = allowance_usage.used + 1
          RETURNING used`
    })
    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ render: NewRender, cycleStart: Timestamp, now: Timestamp }),
      Result: RenderRow,
      execute: ({ cycleStart, now, render: r }) =>
        sql`
          INSERT INTO renders ${
          sql.insert({
            id: r.id,
            workspace_id: r.payer.workspaceId,
            api_key_id: r.payer.keyId,
            media_id: r.mediaId,
            status: RenderState.initial.status,
            progress: RenderState.initial.progress,
            request: JSON.stringify(r.request),
            metadata: JSON.stringify(r.metadata),
            idempotency_key: r.idempotencyKey,
            idempotency_record_id: r.idempotencyRecordId,
            caption_blob_key: r.captionBlobKey,
            cycle_start: cycleStart,
            created_at: now,
            updated_at: now
          })
        }
          RETURNING *`
    })
    const selectActive = SqlSchema.findAll({
      Request: Schema.Struct({ column: Schema.Literals(["created_at", "updated_at"]), before: Timestamp }),
      Result: Ids,
      execute: (r) =>
        r.column === "created_at"
          ? sql`SELECT id FROM renders WHERE status IN ${
            sql.in(RenderState.activeStatuses)
          } AND created_at < ${r.before}`
          : sql`SELECT id FROM renders WHERE status IN ${
            sql.in(RenderState.activeStatuses)
          } AND updated_at < ${r.before} LIMIT 500`
    })
    const countByStatus = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, cycleStart: Timestamp }),
      Result: Schema.Struct({ status: Resources.RenderStatus, n: Schema.Number }),
      execute: (r) =>
        sql`
          SELECT status, count(*)::int AS n FROM renders
          WHERE workspace_id = ${r.workspaceId} AND cycle_start = ${r.cycleStart} GROUP BY status`
    })
    const selectPage = SqlSchema.findAll({
      Request: Schema.Struct({
        workspaceId: Schema.String,
        status: Schema.NullOr(Resources.RenderStatus),
        beforeAt: Schema.NullOr(Timestamp),
        beforeId: Schema.String,
        limit: Schema.Number
      }),
      Result: RenderRow,
      execute: (r) =>
        sql`
          SELECT * FROM renders WHERE workspace_id = ${r.workspaceId}
            AND (${r.status}::text IS NULL OR status = ${r.status}::text)
            AND (${r.beforeAt}::timestamptz IS NULL OR (created_at, id) < (${r.beforeAt}::timestamptz, ${r.beforeId}))
          ORDER BY created_at DESC, id DESC LIMIT ${r.limit}`
    })

    const find = (workspaceId: string, id: string) =>
      selectOwned({ workspaceId, id }).pipe(Effect.map(Option.getOrUndefined), operation("RendersRepo.find"))

    const byId = (id: string) => selectById(id).pipe(Effect.map(Option.getOrUndefined), operation("RendersRepo.byId"))

    const keyless = (workspaceId: string, idempotencyKey: string, now: Date) =>
      Effect.map(
        selectKeyless({ workspaceId, idempotencyKey, since: new Date(now.getTime() - Idempotency.recordTtlMillis) }),
        Option.getOrUndefined
      )

    /**
     * The render a keyless payer (the portal) created under this idempotency key within the
     * idempotency window (contract §6.8), if any.
     */
    const findKeyless = (workspaceId: string, idempotencyKey: string) =>
      DateTime.nowAsDate.pipe(
        Effect.flatMap((now) => keyless(workspaceId, idempotencyKey, now)),
        operation("RendersRepo.findKeyless")
      )

    const countChargedInWindow = (apiKeyId: string, now: Date) =>
      Effect.map(countInWindow({ apiKeyId, since: SpendCap.windowStart(now.getTime()) }), (row) => row.n)

    /** Renders of this key accepted within the spend window and not refunded (contract §3). */
    const chargedInWindow = (apiKeyId: string) =>
      DateTime.nowAsDate.pipe(
        Effect.flatMap((now) => countChargedInWindow(apiKeyId, now)),
        operation("RendersRepo.chargedInWindow")
      )

    const usageAt = (workspaceId: string, now: Date) =>
      Effect.map(selectAccount({ workspaceId, now }), (ws): Usage => {
        const cycleStart = Plans.cycleStart(ws.created_at, now)
        const used = ws.usage_cycle_start !== null && ws.usage_cycle_start.getTime() === cycleStart.getTime()
          ? ws.usage_used ?? 0
          : 0
        return { cycleStart, used, included: ws.included }
      })

    /**
     * The workspace's allowance and what its current cycle has used, in one query (polled by
     * clients as `GET /usage`, and read before every charge). Allowance rows are keyed by cycle
     * anchors of the workspace's own creation time, so the latest row not after `now` (or the
     * anchor) is the current cycle's or an earlier one's; only the current cycle's counts.
     */
    const usage = (workspaceId: string) =>
      DateTime.nowAsDate.pipe(Effect.flatMap((now) => usageAt(workspaceId, now)), operation("RendersRepo.usage"))

    /**
     * The early look before the caption work (no locks): the charge transaction decides for real.
     * With a `count`, whether that many charges in a row would be allowed (the portal's batch asks
     * once up front).
     */
    const chargeRefusal = (payer: Payer, count = 1) =>
      Effect.gen(function*() {
        const now = yield* DateTime.nowAsDate
        const charged = payer.keyId === null || payer.spendCap24h === null
          ? 0
          : yield* countChargedInWindow(payer.keyId, now)
        const account = yield* usageAt(payer.workspaceId, now)
        const spendCap = payer.keyId === null ? null : payer.spendCap24h
        const standing = { spendCap, chargedInWindow: charged, included: account.included, used: account.used }
        const refusal = SpendCap.chargeRefusalFor(standing, count)
        if (refusal === undefined) return undefined
        const room = SpendCap.room(standing)
        return Errors.fail(
          refusal,
          SpendCap.refusalMessageFor(
            refusal,
            account.included,
            count,
            refusal === "spend_cap_reached" ? room.cap : room.allowance
          )
        )
      }).pipe(operation("RendersRepo.chargeRefusal"))

    /**
     * The one transaction that charges. Creates of one payer serialise on a row lock: the key's
     * row, or, for a keyless payer, the workspace's (FOR NO KEY UPDATE, which the foreign-key
     * checks of concurrent inserts do not wait for). Under it the spend window is counted, one is
     * taken from the allowance (which locks its row) and `SpendCap.chargeRefusal` decides on the
     * counts before; then the render row is inserted — or none of it happens.
     */
    const charge = (r: NewRender) =>
      Effect.gen(function*() {
        const now = yield* DateTime.nowAsDate
        const { payer } = r
        return yield* sql.withTransaction(
          Effect.gen(function*() {
            yield* lockPayer(payer)
            const existing = r.idempotencyRecordId !== null
              ? Option.getOrUndefined(yield* selectByRecord(r.idempotencyRecordId))
              : payer.keyId === null && r.idempotencyKey !== null
              // keyless creates keep no idempotency record: the workspace lock makes this look exact
              ? yield* keyless(payer.workspaceId, r.idempotencyKey, now)
              : undefined
            if (existing !== undefined) return { _tag: "Existing", row: existing } satisfies Charged
            const spendCap = payer.keyId === null ? null : payer.spendCap24h
            const charged = payer.keyId === null || spendCap === null
              ? 0
              : yield* countChargedInWindow(payer.keyId, now)
            const ws = yield* selectAllowance(payer.workspaceId)
            const cycleStart = Plans.cycleStart(ws.created_at, now)
            // take one, then ask the rule about the count before it: the row stays locked to the end, and a
            // refusal rolls the take back
            const { used } = yield* takeAllowance({ workspaceId: payer.workspaceId, cycleStart })
            const refusal = SpendCap.chargeRefusal({
              spendCap,
              chargedInWindow: charged,
              included: ws.included,
              used: used - 1
            })
            if (refusal !== undefined) {
              return yield* Effect.fail(Errors.fail(refusal, SpendCap.refusalMessage(refusal, ws.included)))
            }
            const row = yield* insert({ render: r, cycleStart, now })
            // the caller stops waiting at the deadline and then looks for this row: never commit later
            if ((yield* Clock.currentTimeMillis) > r.deadline) {
              return yield* Effect.fail(
                Errors.fail("service_unavailable", "the request timed out before it could be charged")
              )
            }
            return { _tag: "Charged", row } satisfies Charged
          })
        )
      }).pipe(
        // the transaction rolled back, so nothing was charged: a refusal to retry, not a defect that
        // would restart the key's entity and stall every other create on the key meanwhile
        Effect.catchTag("SqlError", (e) =>
          Effect.andThen(
            Effect.logError("charge transaction failed; nothing was charged", e),
            Effect.fail(Errors.fail("service_unavailable", "the render could not be charged; retry", { retryAfter: 1 }))
          )),
        // a row the schema refuses, or no row where the statement returns one, is a defect
        Effect.catchTags({ SchemaError: Effect.die, NoSuchElementError: Effect.die }),
        Effect.tap((charged) =>
          charged._tag === "Charged" ? Effect.sync(() => WorkMetrics.rendersCreated.unsafeUpdate(1, [])) : Effect.void
        ),
        Effect.withSpan("RendersRepo.charge", undefined, { captureStackTrace: false })
      )

    /** The guarded write of one transition, with the refund when it is one; undefined when the row moved on. */
    const write = (current: RenderRow, next: RenderState.RenderState, change: Change, now: Date) => {
      const asset = "asset" in change ? change.asset : undefined
      return sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql`
          UPDATE renders SET ${
          sql.update({
            status: next.status,
            progress: next.progress,
            error_code: next.errorCode,
            error_message: "message" in change ? change.message : current.error_message,
            completed_at: next.completed ? current.completed_at ?? now : null,
            refunded_at: next.refunded ? current.refunded_at ?? now : null,
            attempts: current.attempts + (change.event._tag === "Started" ? 1 : 0),
            updated_at: now,
            ...(asset === undefined ? {} : {
              asset_blob_key: asset.blobKey,
              asset_content_type: asset.contentType,
              asset_width: asset.width,
              asset_height: asset.height,
              asset_byte_size: asset.byteSize,
              asset_duration_sec: asset.durationSec,
              poster_blob_key: asset.posterBlobKey
            })
          })
        }
          WHERE id = ${current.id} AND status = ${current.status} AND progress = ${current.progress} AND attempts = ${current.attempts}
          RETURNING *`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(RenderRow))))
        if (row !== undefined && next.refunded && current.refunded_at === null) {
          yield* sql`UPDATE allowance_usage SET used = used - 1
            WHERE workspace_id = ${row.workspace_id} AND cycle_start = ${row.cycle_start} AND used > 0`
        }
        return row
      }))
    }

    /**
     * Applies one event: the state machine decides on the row as read, and the UPDATE is guarded
     * on that state (status, progress, attempts), so a change that lost a race writes nothing and
     * is decided again on the new row. A transition into a refunded state gives the allowance back
     * in the same transaction.
     */
    const decide = (id: string, change: Change): Effect.Effect<Applied> =>
      Effect.gen(function*() {
        const current = Option.getOrUndefined(yield* selectById(id))
        if (current === undefined) return { _tag: "Refused", row: undefined } satisfies Applied
        const next = RenderState.transition(stateOf(current), change.event)
        if (next === undefined) return { _tag: "Refused", row: current } satisfies Applied
        const written = yield* write(current, next, change, yield* DateTime.nowAsDate)
        // the row moved on since it was read: decide again on what it is now
        if (written === undefined) return yield* decide(id, change)
        yield* WorkMetrics.renderTransitioned(current, written)
        return { _tag: "Applied", row: written } satisfies Applied
      }).pipe(Effect.orDie)

    // progress is written every half second while a render runs: not a span each time
    const apply = (id: string, change: Change): Effect.Effect<Applied> =>
      change.event._tag === "Progressed"
        ? decide(id, change)
        : Effect.withSpan(decide(id, change), "RendersRepo.apply", {
          attributes: { "p2v.render.event": change.event._tag },
          captureStackTrace: false
        })

    const appliedRow = (a: Applied) => (a._tag === "Applied" ? a.row : undefined)

    /** Renders newest first; `before` is the last row of the previous page. */
    const list = (
      workspaceId: string,
      options: { readonly status?: Resources.RenderStatus; readonly limit: number; readonly before?: Before }
    ) =>
      selectPage({
        workspaceId,
        status: options.status ?? null,
        beforeAt: options.before?.createdAt ?? null,
        beforeId: options.before?.id ?? "",
        limit: options.limit + 1
      }).pipe(
        Effect.map((rows) => ({ rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit })),
        operation("RendersRepo.list")
      )

    return {
      find,
      byId,
      findKeyless,
      chargedInWindow,
      usage,
      chargeRefusal,
      charge,
      apply,
      /** Moves a render into processing (a rerun after a crash stays in processing); undefined when it may not run. */
      markProcessing: (id: string) => Effect.map(apply(id, { event: { _tag: "Started" } }), appliedRow),
      /** Records progress; false when the render is no longer processing (canceled meanwhile). */
      recordProgress: (id: string, percent: number) =>
        Effect.map(apply(id, { event: { _tag: "Progressed", percent } }), (a) => a._tag === "Applied"),
      complete: (id: string, asset: Asset) =>
        Effect.map(apply(id, { event: { _tag: "Finished" }, asset }), (a) => a._tag === "Applied"),
      /**
       * Ends a render as failed or canceled and refunds it (allowance and spend cap), in one
       * transaction; a render already terminal is left as it is. Returns the row when it changed.
       */
      endUnsuccessfully: (id: string, code: Errors.RenderErrorCode, message: string) =>
        Effect.map(
          apply(id, { event: code === "render_canceled" ? { _tag: "Canceled" } : { _tag: "Failed", code }, message }),
          appliedRow
        ),
      /** Non-terminal renders accepted before `olderThan`: past their time budget. */
      overdue: (olderThan: Date) =>
        selectActive({ column: "created_at", before: olderThan }).pipe(operation("RendersRepo.overdue")),
      /** Non-terminal renders untouched since `before`: their Start is resent. */
      idleSince: (before: Date) =>
        selectActive({ column: "updated_at", before }).pipe(operation("RendersRepo.idleSince")),
      /** Renders charged to this billing cycle, by status (a status with none is 0). */
      countByStatus: (workspaceId: string, cycleStart: Date) =>
        countByStatus({ workspaceId, cycleStart }).pipe(
          Effect.map((rows) => {
            const counts: Record<Resources.RenderStatus, number> = {
              queued: 0,
              processing: 0,
              completed: 0,
              failed: 0,
              canceled: 0
            }
            for (const row of rows) counts[row.status] = row.n
            return counts
          }),
          operation("RendersRepo.countByStatus")
        ),
      list
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
