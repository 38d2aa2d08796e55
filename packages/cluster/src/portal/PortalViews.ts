import { SqlClient } from "@effect/sql"
import { Resources } from "@pic2video/domain"
import { Effect } from "effect"
import type { ImportRow } from "../repositories/Imports.ts"
import type { RenderRow } from "../repositories/Renders.ts"

/**
 * The few reads the portal's pages need that the API has no endpoint for (lists by status, counts
 * per status, the workspace's imports). Every one is scoped to the signed-in workspace.
 */
export const renderStatuses = Resources.RenderStatus.literals
export type RenderStatus = Resources.RenderStatus

/** Renders charged to this billing cycle, by status (a status with none is 0). */
export const rendersByStatus = (workspaceId: string, cycleStart: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ status: RenderStatus; n: number }>`
      SELECT status, count(*)::int AS n FROM renders
      WHERE workspace_id = ${workspaceId} AND cycle_start = ${cycleStart} GROUP BY status`
    return Object.fromEntries(renderStatuses.map((s) => [s, rows.find((r) => r.status === s)?.n ?? 0])) as Record<RenderStatus, number>
  }).pipe(Effect.orDie)

/** Newest first; `before` is the (created_at, id) of the last row of the previous page. */
export const listRenders = (
  workspaceId: string,
  options: { readonly status?: RenderStatus; readonly limit: number; readonly before?: { readonly createdAt: Date; readonly id: string } }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const status = options.status ?? null
    const before = options.before
    const rows = yield* sql<RenderRow>`
      SELECT * FROM renders WHERE workspace_id = ${workspaceId}
        AND (${status}::text IS NULL OR status = ${status}::text)
        AND (${before?.createdAt ?? null}::timestamptz IS NULL OR (created_at, id) < (${before?.createdAt ?? null}::timestamptz, ${before?.id ?? ""}))
      ORDER BY created_at DESC, id DESC LIMIT ${options.limit + 1}`
    return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit }
  }).pipe(Effect.orDie)

/** The workspace's imports, newest first, with their item counts. */
export const listImports = (workspaceId: string, limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<ImportRow & { imported: number; skipped: number; failed: number }>`
      SELECT i.*,
        (SELECT count(*)::int FROM import_items t WHERE t.import_id = i.id AND t.status = 'imported') AS imported,
        (SELECT count(*)::int FROM import_items t WHERE t.import_id = i.id AND t.status = 'skipped') AS skipped,
        (SELECT count(*)::int FROM import_items t WHERE t.import_id = i.id AND t.status = 'failed') AS failed
      FROM imports i WHERE i.workspace_id = ${workspaceId}
      ORDER BY i.created_at DESC, i.id DESC LIMIT ${limit}`
  }).pipe(Effect.orDie)
