import { SqlClient } from "@effect/sql"
import { Errors, Idempotency, Plans, RenderState, Requests, Resources, SpendCap } from "@pic2video/domain"
import { Effect, Schema } from "effect"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"

/**
 * Renders as rows: every transition is written here, and GETs read it, so polling keeps working
 * while a runner is down. Each status change is decided by the domain's state machine
 * (`RenderState.transition`) on the row as read, and written with an UPDATE guarded on that very
 * state, so a change decided on a stale read writes nothing and is decided again. Money moves only
 * inside transactions here: the charge (allowance + spend cap + the render row, or nothing) and
 * the refund (status + allowance, or nothing).
 */
const Timestamp = Schema.DateFromSelf

/** The request as stored: the create body without its metadata (kept apart, verbatim). */
export const StoredRequest = Schema.Struct(Requests.CreateRenderBody.fields).omit("metadata")

/** The renders row, decoded with the domain's own literals (status, error codes). */
export const RenderRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  api_key_id: Schema.NullOr(Schema.String),
  media_id: Schema.String,
  status: Resources.RenderStatus,
  progress: Schema.Number,
  request: StoredRequest,
  metadata: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null) }),
  idempotency_key: Schema.NullOr(Schema.String),
  idempotency_record_id: Schema.NullOr(Schema.Number),
  caption_blob_key: Schema.NullOr(Schema.String),
  cycle_start: Timestamp,
  refunded_at: Schema.NullOr(Timestamp),
  error_code: Schema.NullOr(Schema.Literal(...Errors.renderErrorCodes)),
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

const decodeRows = Schema.decodeUnknown(Schema.Array(RenderRow))
/** The first row decoded, or undefined; a row the schema refuses is a defect (the table's constraints forbid it). */
const first = (rows: ReadonlyArray<unknown>) => Effect.map(Effect.orDie(decodeRows(rows)), (decoded) => decoded[0])

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

export const find = (workspaceId: string, id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* first(yield* sql`SELECT * FROM renders WHERE id = ${id} AND workspace_id = ${workspaceId}`)
  }).pipe(Effect.orDie)

export const byId = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* first(yield* sql`SELECT * FROM renders WHERE id = ${id}`)
  }).pipe(Effect.orDie)

/**
 * The render a keyless payer (the portal) created under this idempotency key within the idempotency
 * window (contract §6.8), if any.
 */
export const findKeyless = (workspaceId: string, idempotencyKey: string, now = new Date()) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* first(yield* sql`
      SELECT * FROM renders WHERE workspace_id = ${workspaceId} AND api_key_id IS NULL
        AND idempotency_key = ${idempotencyKey} AND created_at > ${new Date(now.getTime() - Idempotency.recordTtlMillis)}
      ORDER BY created_at DESC LIMIT 1`)
  }).pipe(Effect.orDie)

/** Renders of this key accepted within the spend window and not refunded (contract §3). */
export const chargedInWindow = (apiKeyId: string, now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM renders
      WHERE api_key_id = ${apiKeyId} AND refunded_at IS NULL AND created_at > ${SpendCap.windowStart(now.getTime())}`
    return row.n
  })

interface Account {
  readonly included: number | null
  readonly created_at: Date
  /** the workspace's latest allowance row that is not in the future (none: null) */
  readonly usage_cycle_start: Date | null
  readonly usage_used: number | null
}

/**
 * The workspace's allowance and what its current cycle has used, in one query (polled by clients
 * as `GET /usage`, and read before every charge). Allowance rows are keyed by cycle anchors of the
 * workspace's own creation time, so the latest row not after `now` (or the anchor) is the current cycle's or an
 * earlier one's; only the current cycle's counts.
 */
export const usage = (workspaceId: string, now = new Date()) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [ws] = yield* sql<Account>`
      SELECT w.included, w.created_at, u.cycle_start AS usage_cycle_start, u.used AS usage_used
      FROM workspaces w LEFT JOIN LATERAL (
        SELECT cycle_start, used FROM allowance_usage
        WHERE workspace_id = w.id AND cycle_start <= GREATEST(${now}, w.created_at)
        ORDER BY cycle_start DESC LIMIT 1
      ) u ON true
      WHERE w.id = ${workspaceId}`
    const cycleStart = Plans.cycleStart(ws.created_at, now)
    const used = ws.usage_cycle_start !== null && ws.usage_cycle_start.getTime() === cycleStart.getTime() ? ws.usage_used ?? 0 : 0
    return { cycleStart, used, included: ws.included }
  }).pipe(Effect.orDie)

/**
 * Who pays for a render: always a workspace's allowance; through an API key (whose spend cap
 * applies) or, with `keyId` null, the workspace itself (the portal), to which no cap applies.
 */
export interface Payer {
  readonly workspaceId: string
  readonly keyId: string | null
  /** the key's cap, as read when the key was authenticated; null without a cap or a key */
  readonly spendCap24h: number | null
}

/**
 * The early look before the caption work (no locks): the charge transaction decides for real. With a
 * `count`, whether that many charges in a row would be allowed (the portal's batch asks once up front).
 */
export const chargeRefusal = (payer: Payer, count = 1, now = new Date()) =>
  Effect.gen(function*() {
    const charged = payer.keyId === null || payer.spendCap24h === null ? 0 : yield* chargedInWindow(payer.keyId, now)
    const account = yield* usage(payer.workspaceId, now)
    const spendCap = payer.keyId === null ? null : payer.spendCap24h
    const standing = { spendCap, chargedInWindow: charged, included: account.included, used: account.used }
    const refusal = SpendCap.chargeRefusalFor(standing, count)
    if (refusal === undefined) return undefined
    const room = SpendCap.room(standing)
    return Errors.fail(refusal, SpendCap.refusalMessageFor(refusal, account.included, count, refusal === "spend_cap_reached" ? room.cap : room.allowance))
  }).pipe(Effect.orDie)

export interface NewRender {
  readonly id: string
  readonly payer: Payer
  readonly mediaId: string
  readonly request: Record<string, unknown>
  readonly metadata: Record<string, unknown>
  readonly idempotencyKey: string | null
  readonly idempotencyRecordId: number | null
  readonly captionBlobKey: string | null
  /** epoch ms: past it the caller has answered 503, so the charge must not commit */
  readonly deadline: number
}

export type Charged =
  | { readonly _tag: "Charged"; readonly row: RenderRow }
  /** a retried create under an idempotency record (or key, without one) that already holds a render: no second charge */
  | { readonly _tag: "Existing"; readonly row: RenderRow }

/**
 * The one transaction that charges. Creates of one payer serialise on a row lock: the key's row,
 * or, for a keyless payer, the workspace's (FOR NO KEY UPDATE, which the foreign-key checks of
 * concurrent inserts do not wait for). Under it the spend window is counted, one is taken from the
 * allowance (which locks its row) and `SpendCap.chargeRefusal` decides on the counts before; then
 * the render row is inserted — or none of it happens.
 */
export const charge = (r: NewRender) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    const { payer } = r
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        if (payer.keyId !== null) yield* sql`SELECT id FROM api_keys WHERE id = ${payer.keyId} FOR UPDATE`
        else yield* sql`SELECT id FROM workspaces WHERE id = ${payer.workspaceId} FOR NO KEY UPDATE`
        const existing = r.idempotencyRecordId !== null
          ? yield* first(yield* sql`SELECT * FROM renders WHERE idempotency_record_id = ${r.idempotencyRecordId}`)
          : payer.keyId === null && r.idempotencyKey !== null
          // keyless creates keep no idempotency record: the workspace lock makes this look exact
          ? yield* findKeyless(payer.workspaceId, r.idempotencyKey, now)
          : undefined
        if (existing !== undefined) return { _tag: "Existing", row: existing } satisfies Charged
        const spendCap = payer.keyId === null ? null : payer.spendCap24h
        const charged = payer.keyId === null || spendCap === null ? 0 : yield* chargedInWindow(payer.keyId, now)
        const [ws] = yield* sql<Account>`SELECT included, created_at FROM workspaces WHERE id = ${payer.workspaceId}`
        const cycleStart = Plans.cycleStart(ws.created_at, now)
        // take one, then ask the rule about the count before it: the row stays locked to the end, and a
        // refusal rolls the take back
        const [{ used }] = yield* sql<{ used: number }>`
          INSERT INTO allowance_usage (workspace_id, cycle_start, used) VALUES (${payer.workspaceId}, ${cycleStart}, 1)
          ON CONFLICT (workspace_id, cycle_start) DO UPDATE SET used = allowance_usage.used + 1
          RETURNING used`
        const refusal = SpendCap.chargeRefusal({ spendCap, chargedInWindow: charged, included: ws.included, used: used - 1 })
        if (refusal !== undefined) return yield* Effect.fail(Errors.fail(refusal, SpendCap.refusalMessage(refusal, ws.included)))
        const row = yield* first(yield* sql`
          INSERT INTO renders ${sql.insert({
            id: r.id,
            workspace_id: payer.workspaceId,
            api_key_id: payer.keyId,
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
          })}
          RETURNING *`)
        if (row === undefined) return yield* Effect.dieMessage("the render insert returned no row")
        // the caller stops waiting at the deadline and then looks for this row: never commit later
        if (Date.now() > r.deadline) {
          return yield* Effect.fail(Errors.fail("service_unavailable", "the request timed out before it could be charged"))
        }
        return { _tag: "Charged", row } satisfies Charged
      })
    ).pipe(
      Effect.tap((charged) => charged._tag === "Charged" ? Effect.sync(() => WorkMetrics.rendersCreated.unsafeUpdate(1, [])) : Effect.void),
      // the transaction rolled back, so nothing was charged: a refusal to retry, not a defect that
      // would restart the key's entity and stall every other create on the key meanwhile
      Effect.catchTag("SqlError", (e) =>
        Effect.zipRight(
          Effect.logError("charge transaction failed; nothing was charged", e),
          Effect.fail(Errors.fail("service_unavailable", "the render could not be charged; retry", { retryAfter: 1 }))
        ))
    )
  }).pipe(Effect.withSpan("Renders.charge", { captureStackTrace: false }))

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
  | { readonly event: Extract<RenderState.RenderEvent, { readonly _tag: "Failed" | "Canceled" }>; readonly message: string }

export type Applied =
  | { readonly _tag: "Applied"; readonly row: RenderRow }
  /** the state machine refused the event in the row's state (or there is no such render): nothing written */
  | { readonly _tag: "Refused"; readonly row: RenderRow | undefined }

/**
 * Applies one event: the state machine decides on the row as read, and the UPDATE is guarded on
 * that state (status, progress, attempts), so a change that lost a race writes nothing and is
 * decided again on the new row. A transition into a refunded state gives the allowance back in
 * the same transaction.
 */
export const apply = (id: string, change: Change): Effect.Effect<Applied, never, SqlClient.SqlClient> =>
  // progress is written every half second while a render runs: not a span each time
  change.event._tag === "Progressed"
    ? decide(id, change)
    : Effect.withSpan(decide(id, change), "Renders.transition", { attributes: { "p2v.render.event": change.event._tag }, captureStackTrace: false })

const decide = (id: string, change: Change): Effect.Effect<Applied, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const current = yield* byId(id)
    if (current === undefined) return { _tag: "Refused", row: undefined } satisfies Applied
    const next = RenderState.transition(stateOf(current), change.event)
    if (next === undefined) return { _tag: "Refused", row: current } satisfies Applied
    const now = new Date()
    const asset = "asset" in change ? change.asset : undefined
    const written = yield* sql.withTransaction(Effect.gen(function*() {
      const row = yield* first(yield* sql`
        UPDATE renders SET ${sql.update({
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
        })}
        WHERE id = ${id} AND status = ${current.status} AND progress = ${current.progress} AND attempts = ${current.attempts}
        RETURNING *`)
      if (row !== undefined && next.refunded && current.refunded_at === null) {
        yield* sql`UPDATE allowance_usage SET used = used - 1
          WHERE workspace_id = ${row.workspace_id} AND cycle_start = ${row.cycle_start} AND used > 0`
      }
      return row
    })).pipe(Effect.orDie)
    // the row moved on since it was read: decide again on what it is now
    if (written === undefined) return yield* decide(id, change)
    yield* WorkMetrics.renderTransitioned(current, written)
    return { _tag: "Applied", row: written } satisfies Applied
  })

const appliedRow = (a: Applied) => (a._tag === "Applied" ? a.row : undefined)

/** Moves a render into processing (a rerun after a crash stays in processing); undefined when it may not run. */
export const markProcessing = (id: string) => Effect.map(apply(id, { event: { _tag: "Started" } }), appliedRow)

/** Records progress; false when the render is no longer processing (canceled meanwhile). */
export const recordProgress = (id: string, percent: number) =>
  Effect.map(apply(id, { event: { _tag: "Progressed", percent } }), (a) => a._tag === "Applied")

export const complete = (id: string, asset: Asset) =>
  Effect.map(apply(id, { event: { _tag: "Finished" }, asset }), (a) => a._tag === "Applied")

/**
 * Ends a render as failed or canceled and refunds it (allowance and spend cap), in one
 * transaction; a render already terminal is left as it is. Returns the row when it changed.
 */
export const endUnsuccessfully = (id: string, code: Errors.RenderErrorCode, message: string) =>
  Effect.map(apply(id, { event: code === "render_canceled" ? { _tag: "Canceled" } : { _tag: "Failed", code }, message }), appliedRow)

/** Non-terminal renders: older than the budget (to time out), or idle long enough to be resent. */
export const overdue = (olderThan: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string }>`
      SELECT id FROM renders WHERE status IN ${sql.in(RenderState.activeStatuses)} AND created_at < ${olderThan}`
  }).pipe(Effect.orDie)

export const idleSince = (before: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string }>`
      SELECT id FROM renders WHERE status IN ${sql.in(RenderState.activeStatuses)} AND updated_at < ${before} LIMIT 500`
  }).pipe(Effect.orDie)
