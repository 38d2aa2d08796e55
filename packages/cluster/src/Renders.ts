import { SqlClient } from "@effect/sql"
import { Errors, Plans, type RenderState } from "@pic2video/domain"
import { Effect } from "effect"

/**
 * Renders as rows: every transition is written here, and GETs read it, so polling keeps working
 * while a runner is down. Money moves only inside transactions here: the charge (allowance +
 * spend cap + the render row, or nothing) and the refund (status + allowance, or nothing).
 */
export interface RenderRow {
  readonly id: string
  readonly workspace_id: string
  readonly api_key_id: string | null
  readonly media_id: string
  readonly status: "queued" | "processing" | "completed" | "failed" | "canceled"
  readonly progress: number
  readonly request: Record<string, unknown>
  readonly metadata: Record<string, string | number | boolean | null>
  readonly idempotency_key: string | null
  readonly idempotency_record_id: number | null
  readonly caption_blob_key: string | null
  readonly cycle_start: Date
  readonly refunded_at: Date | null
  readonly error_code: "render_failed" | "render_timeout" | "render_rejected" | "render_canceled" | null
  readonly error_message: string | null
  readonly asset_blob_key: string | null
  readonly asset_content_type: string | null
  readonly asset_width: number | null
  readonly asset_height: number | null
  readonly asset_byte_size: number | null
  readonly asset_duration_sec: number | null
  readonly attempts: number
  readonly created_at: Date
  readonly updated_at: Date
  readonly completed_at: Date | null
}

export const toDocument = (r: RenderRow, publicBaseUrl: string) => ({
  object: "render" as const,
  id: r.id,
  type: "aesthetic_quote" as const,
  status: r.status,
  progress: r.progress,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  completed_at: r.completed_at?.toISOString() ?? null,
  asset: r.status === "completed"
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
    const rows = yield* sql<RenderRow>`SELECT * FROM renders WHERE id = ${id} AND workspace_id = ${workspaceId}`
    return rows[0]
  }).pipe(Effect.orDie)

export const byId = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<RenderRow>`SELECT * FROM renders WHERE id = ${id}`
    return rows[0]
  }).pipe(Effect.orDie)

/** Renders of this key accepted in the last 24 hours and not refunded (decisions §3). */
export const chargedInLast24h = (apiKeyId: string, now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM renders
      WHERE api_key_id = ${apiKeyId} AND refunded_at IS NULL AND created_at > ${new Date(now.getTime() - 24 * 3600_000)}`
    return row.n
  }).pipe(Effect.orDie)

interface Account {
  readonly included: number | null
  readonly created_at: Date
}

export const usage = (workspaceId: string, now = new Date()) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [ws] = yield* sql<Account>`SELECT included, created_at FROM workspaces WHERE id = ${workspaceId}`
    const cycleStart = Plans.cycleStart(ws.created_at, now)
    const rows = yield* sql<{ used: number }>`
      SELECT used FROM allowance_usage WHERE workspace_id = ${workspaceId} AND cycle_start = ${cycleStart}`
    return { cycleStart, used: rows[0]?.used ?? 0, included: ws.included }
  }).pipe(Effect.orDie)

export interface NewRender {
  readonly id: string
  readonly workspaceId: string
  readonly apiKeyId: string
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
  /** a retried create under an idempotency record that already holds a render: no second charge */
  | { readonly _tag: "Existing"; readonly row: RenderRow }

/**
 * The one transaction that charges: the key's row lock serialises its creates across processes,
 * the spend cap is counted under it, the allowance is taken by a conditional UPDATE (never past
 * `included`), and the render row is inserted — or none of it happens.
 */
export const charge = (r: NewRender) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        const [key] = yield* sql<{ spend_cap_24h: number | null }>`
          SELECT spend_cap_24h FROM api_keys WHERE id = ${r.apiKeyId} FOR UPDATE`
        if (r.idempotencyRecordId !== null) {
          const existing = yield* sql<RenderRow>`SELECT * FROM renders WHERE idempotency_record_id = ${r.idempotencyRecordId}`
          if (existing.length > 0) return { _tag: "Existing", row: existing[0] } satisfies Charged
        }
        if (key.spend_cap_24h !== null) {
          const [{ n }] = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM renders
            WHERE api_key_id = ${r.apiKeyId} AND refunded_at IS NULL AND created_at > ${new Date(now.getTime() - 24 * 3600_000)}`
          if (n >= key.spend_cap_24h) {
            return yield* Effect.fail(Errors.fail("spend_cap_reached", "this key's 24-hour spend cap is used up"))
          }
        }
        const [ws] = yield* sql<Account>`SELECT included, created_at FROM workspaces WHERE id = ${r.workspaceId}`
        const cycleStart = Plans.cycleStart(ws.created_at, now)
        yield* sql`INSERT INTO allowance_usage (workspace_id, cycle_start, used) VALUES (${r.workspaceId}, ${cycleStart}, 0)
          ON CONFLICT DO NOTHING`
        const taken = yield* sql`
          UPDATE allowance_usage SET used = used + 1
          WHERE workspace_id = ${r.workspaceId} AND cycle_start = ${cycleStart}
            AND (${ws.included}::int IS NULL OR used < ${ws.included}::int)
          RETURNING used`
        if (taken.length === 0) {
          return yield* Effect.fail(Errors.fail("quota_exceeded", ws.included === 0
            ? "the plan includes no renders"
            : "the billing cycle's render allowance is used up"))
        }
        const [row] = yield* sql<RenderRow>`
          INSERT INTO renders ${sql.insert({
            id: r.id,
            workspace_id: r.workspaceId,
            api_key_id: r.apiKeyId,
            media_id: r.mediaId,
            status: "queued",
            progress: 0,
            request: JSON.stringify(r.request),
            metadata: JSON.stringify(r.metadata),
            idempotency_key: r.idempotencyKey,
            idempotency_record_id: r.idempotencyRecordId,
            caption_blob_key: r.captionBlobKey,
            cycle_start: cycleStart,
            created_at: now,
            updated_at: now
          })}
          RETURNING *`
        // the caller stops waiting at the deadline and then looks for this row: never commit later
        if (Date.now() > r.deadline) {
          return yield* Effect.fail(Errors.fail("service_unavailable", "the request timed out before it could be charged"))
        }
        return { _tag: "Charged", row } satisfies Charged
      })
    ).pipe(
      // the transaction rolled back, so nothing was charged: a refusal to retry, not a defect that
      // would restart the key's entity and stall every other create on the key meanwhile
      Effect.catchTag("SqlError", (e) =>
        Effect.zipRight(
          Effect.logError("charge transaction failed; nothing was charged", e),
          Effect.fail(Errors.fail("service_unavailable", "the render could not be charged; retry", { retryAfter: 1 }))
        ))
    )
  })

/** Moves a render into processing (a rerun after a crash stays in processing). */
export const markProcessing = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<RenderRow>`
      UPDATE renders SET status = 'processing', attempts = attempts + 1, updated_at = ${new Date()}
      WHERE id = ${id} AND status IN ('queued', 'processing') RETURNING *`
    return rows[0]
  }).pipe(Effect.orDie)

/** Records progress; false when the render is no longer processing (canceled meanwhile). */
export const recordProgress = (id: string, percent: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      UPDATE renders SET progress = greatest(progress, ${Math.min(99, Math.max(0, Math.floor(percent)))}), updated_at = ${new Date()}
      WHERE id = ${id} AND status = 'processing' RETURNING id`
    return rows.length > 0
  }).pipe(Effect.orDie)

export interface Asset {
  readonly blobKey: string
  readonly contentType: string
  readonly width: number
  readonly height: number
  readonly byteSize: number
  readonly durationSec: number
}

export const complete = (id: string, asset: Asset) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    const rows = yield* sql`
      UPDATE renders SET status = 'completed', progress = 100, asset_blob_key = ${asset.blobKey},
        asset_content_type = ${asset.contentType}, asset_width = ${asset.width}, asset_height = ${asset.height},
        asset_byte_size = ${asset.byteSize}, asset_duration_sec = ${asset.durationSec},
        completed_at = ${now}, updated_at = ${now}
      WHERE id = ${id} AND status = 'processing' RETURNING id`
    return rows.length > 0
  }).pipe(Effect.orDie)

/**
 * Ends a render as failed or canceled and refunds it (allowance and spend cap), in one
 * transaction; a render already terminal is left as it is. Returns the row when it changed.
 */
export const endUnsuccessfully = (
  id: string,
  outcome: { readonly status: "failed" | "canceled"; readonly code: NonNullable<RenderState.RenderState["errorCode"]>; readonly message: string }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<RenderRow>`
        UPDATE renders SET status = ${outcome.status}, error_code = ${outcome.code}, error_message = ${outcome.message},
          completed_at = ${now}, refunded_at = ${now}, updated_at = ${now}
        WHERE id = ${id} AND status IN ('queued', 'processing') RETURNING *`
      if (rows.length === 0) return undefined
      yield* sql`UPDATE allowance_usage SET used = used - 1
        WHERE workspace_id = ${rows[0].workspace_id} AND cycle_start = ${rows[0].cycle_start} AND used > 0`
      return rows[0]
    }))
  }).pipe(Effect.orDie)

/** Non-terminal renders: older than the budget (to time out), or idle long enough to be resent. */
export const overdue = (olderThan: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string }>`
      SELECT id FROM renders WHERE status IN ('queued', 'processing') AND created_at < ${olderThan}`
  }).pipe(Effect.orDie)

export const idleSince = (before: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string }>`
      SELECT id FROM renders WHERE status IN ('queued', 'processing') AND updated_at < ${before} LIMIT 500`
  }).pipe(Effect.orDie)
