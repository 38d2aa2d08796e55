import { ImportState, RenderState, Resources } from "@pic2video/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * The cluster's backlog as operators watch it (the `p2v_renders`, `p2v_imports` and
 * `p2v_render_oldest_queued_seconds` gauges): non-terminal renders and imports by status, and the age
 * of the oldest of each, by the database's clock. One statement over the `renders_active` partial
 * index and the few pending imports: cheap at any size of history.
 */
const Row = Schema.Struct({
  kind: Schema.Literals(["render", "import"]),
  status: Schema.Union([Resources.RenderStatus, Resources.ImportStatus]),
  n: Schema.Number,
  oldest_seconds: Schema.Number
})
const decode = Schema.decodeUnknownEffect(Schema.Array(Row))

export interface Backlog {
  readonly renders: Readonly<Record<"queued" | "processing", number>>
  readonly imports: Readonly<Record<"pending", number>>
  /** seconds since the oldest queued render was accepted; 0 when none is queued */
  readonly oldestQueuedSeconds: number
}

export class BacklogRepo extends Context.Service<BacklogRepo>()("pic2video/BacklogRepo", {
  make: Effect.map(SqlClient.SqlClient, (sql) => ({
    read: Effect.gen(function*() {
      const rows = yield* decode(
        yield* sql`
      SELECT 'render' AS kind, status, count(*)::int AS n,
        extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
      FROM renders WHERE status IN ${sql.in(RenderState.activeStatuses)} GROUP BY status
      UNION ALL
      SELECT 'import' AS kind, status, count(*)::int AS n,
        extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
      FROM imports WHERE status = ${ImportState.initialStatus} GROUP BY status`
      )
      const count = (kind: "render" | "import", status: string) =>
        rows.find((r) => r.kind === kind && r.status === status)?.n ?? 0
      return {
        renders: { queued: count("render", "queued"), processing: count("render", "processing") },
        imports: { pending: count("import", "pending") },
        oldestQueuedSeconds: Math.max(
          0,
          rows.find((r) => r.kind === "render" && r.status === "queued")?.oldest_seconds ?? 0
        )
      } satisfies Backlog
    }).pipe(operation("BacklogRepo.read"))
  }))
}) {
  static readonly layer = Layer.effect(this, this.make)
}
