import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ImportRow } from "../repositories/Imports.ts"

/**
 * The few reads the portal's pages need that the API has no endpoint for (lists by status, counts
 * per status, the workspace's imports). Every one is scoped to the signed-in workspace.
 */
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
