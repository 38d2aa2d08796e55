import { Errors, Idempotency, Plans, RenderState, Requests, Resources, SpendCap } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * Renders as rows: every transition is written here, and GETs read it, so polling keeps working
 * while a runner is down. The rules live with their callers (the charge: `Charges`; a render's
 * transitions: `RenderTransitions`); here are the statements they run, the guarded state write and
 * the refund among them, and the reads.
 *
 * Time: the instants written and compared here (created_at, the spend window, the idempotency
 * window) come from `Clock` or the caller, passed to the statements as parameters, so a test can
 * move them; the counting and the allowance arithmetic stay in SQL, under the row locks that make
 * them exact.
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

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** A render row as the charge inserts it, queued; the workspace pays, through the key when there is one. */
const InsertedRender = Schema.Struct({
  id: Schema.String,
  workspaceId: Schema.String,
  apiKeyId: Schema.NullOr(Schema.String),
  mediaId: Schema.String,
  request: JsonObject,
  metadata: JsonObject,
  idempotencyKey: Schema.NullOr(Schema.String),
  idempotencyRecordId: Schema.NullOr(Schema.Number),
  captionBlobKey: Schema.NullOr(Schema.String)
})
export interface InsertedRender extends Schema.Schema.Type<typeof InsertedRender> {}

/** A finished render's stored files. */
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

/** What one transition writes: the whole state, the finished file's columns when it brings one. */
export interface StateWrite {
  readonly status: Resources.RenderStatus
  readonly progress: number
  readonly errorCode: Errors.RenderErrorCode | null
  readonly errorMessage: string | null
  readonly completedAt: Date | null
  readonly refundedAt: Date | null
  readonly attempts: number
  readonly updatedAt: Date
  readonly asset: Asset | undefined
  /** give the render's one back to its cycle's allowance, in the same transaction */
  readonly refund: boolean
}

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
      Request: Schema.Struct({ workspaceId: Schema.String, keyId: Schema.NullOr(Schema.String) }),
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
      Request: Schema.Struct({ render: InsertedRender, cycleStart: Timestamp, now: Timestamp }),
      Result: RenderRow,
      execute: ({ cycleStart, now, render: r }) =>
        sql`
          INSERT INTO renders ${
          sql.insert({
            id: r.id,
            workspace_id: r.workspaceId,
            api_key_id: r.apiKeyId,
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

    /** The render a keyless payer created under this idempotency key within the idempotency window before `now`. */
    const keylessAt = (workspaceId: string, idempotencyKey: string, now: Date) =>
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
        Effect.flatMap((now) => keylessAt(workspaceId, idempotencyKey, now)),
        operation("RendersRepo.findKeyless")
      )

    /** Renders of this key accepted within the spend window ending at `now` and not refunded (contract §3). */
    const chargedInWindowAt = (apiKeyId: string, now: Date) =>
      Effect.map(countInWindow({ apiKeyId, since: SpendCap.windowStart(now.getTime()) }), (row) => row.n)

    const chargedInWindow = (apiKeyId: string) =>
      DateTime.nowAsDate.pipe(
        Effect.flatMap((now) => chargedInWindowAt(apiKeyId, now)),
        operation("RendersRepo.chargedInWindow")
      )

    /**
     * The workspace's allowance and what its cycle at `now` has used, in one query. Allowance rows
     * are keyed by cycle anchors of the workspace's own creation time, so the latest row not after
     * `now` (or the anchor) is the current cycle's or an earlier one's; only the current cycle's counts.
     */
    const usageAt = (workspaceId: string, now: Date) =>
      Effect.map(selectAccount({ workspaceId, now }), (ws): Usage => {
        const cycleStart = Plans.cycleStart(ws.created_at, now)
        const used = ws.usage_cycle_start !== null && ws.usage_cycle_start.getTime() === cycleStart.getTime()
          ? ws.usage_used ?? 0
          : 0
        return { cycleStart, used, included: ws.included }
      })

    /** `usageAt` now (polled by clients as `GET /usage`). */
    const usage = (workspaceId: string) =>
      DateTime.nowAsDate.pipe(Effect.flatMap((now) => usageAt(workspaceId, now)), operation("RendersRepo.usage"))

    /**
     * The guarded write of one transition, guarded on the row as it was read (status, progress,
     * attempts), with the refund when it is one, in one transaction; undefined when the row moved on.
     */
    const writeState = (current: RenderRow, write: StateWrite) =>
      sql.withTransaction(Effect.gen(function*() {
        const { asset } = write
        const [row] = yield* sql`
          UPDATE renders SET ${
          sql.update({
            status: write.status,
            progress: write.progress,
            error_code: write.errorCode,
            error_message: write.errorMessage,
            completed_at: write.completedAt,
            refunded_at: write.refundedAt,
            attempts: write.attempts,
            updated_at: write.updatedAt,
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
        if (row !== undefined && write.refund) {
          yield* sql`UPDATE allowance_usage SET used = used - 1
            WHERE workspace_id = ${row.workspace_id} AND cycle_start = ${row.cycle_start} AND used > 0`
        }
        return row
      })).pipe(Effect.orDie)

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
      /**
       * The statements of the charge transaction (Charges.ts), which runs them inside
       * `withTransaction` and answers their failures itself.
       */
      withTransaction: sql.withTransaction,
      /**
       * Locks the payer's row to the end of the transaction: the key's or, for a keyless payer, the
       * workspace's (FOR NO KEY UPDATE, which the foreign-key checks of concurrent inserts do not wait for).
       */
      lockPayer,
      byIdempotencyRecord: (recordId: number) => Effect.map(selectByRecord(recordId), Option.getOrUndefined),
      keylessAt,
      chargedInWindowAt,
      usageAt,
      /** The workspace's plan allowance and creation time (its cycles' anchor). */
      allowance: selectAllowance,
      /** Takes one from the cycle's allowance (locking its row); the count after the take. */
      takeAllowance,
      insert,
      writeState,
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
