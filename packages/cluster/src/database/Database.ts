import { NodeContext } from "@effect/platform-node"
import { Migrator } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"
import * as Embedded from "./EmbeddedPostgres.ts"
import { migrations } from "./migrations/index.ts"

/** The connection pool's occupancy, read when /metrics is scraped (`p2v_db_pool_connections`). */
export interface PoolUsage {
  readonly used: number
  readonly idle: number
  /** queries waiting for a connection */
  readonly pending: number
}

export class DatabasePool
  extends Context.Tag("pic2video/DatabasePool")<DatabasePool, { readonly usage: () => PoolUsage }>()
{}

const maxConnections = 20

/**
 * The SqlClient every part of the service shares: DATABASE_URL when set, else the embedded server.
 * Timestamps are parsed by node-postgres into Dates; rows keep their snake_case column names. The
 * pool is made here (as PgClient.layer would make it) so its occupancy can be read.
 */
export const layerClient = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = Option.isSome(config.databaseUrl)
      ? config.databaseUrl.value
      : Redacted.make(yield* Embedded.connectOrStart(config.dataDir))
    // application_name: what pg_stat_activity shows an operator for these connections
    const pool = new pg.Pool({
      connectionString: Redacted.value(url),
      max: maxConnections,
      types: int8AsNumber,
      application_name: "pic2video"
    })
    // an idle client's error (the server restarting) is reported on its next use, not as a crash
    pool.on("error", () => {})
    const acquire = Effect.acquireRelease(
      Effect.tryPromise({
        try: () => pool.query("SELECT 1").then(() => pool),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: "5 seconds",
          onTimeout: () => new SqlError({ message: "PgClient: Connection timed out" })
        })
      ),
      () => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    )
    const usage = () => ({ used: pool.totalCount - pool.idleCount, idle: pool.idleCount, pending: pool.waitingCount })
    return Layer.merge(PgClient.layerFromPool({ acquire }), Layer.succeed(DatabasePool, { usage }))
  })
)

// Byte counts and budgets are bigint columns; every value we store fits a double exactly.
const int8AsNumber = new pg.TypeOverrides()
int8AsNumber.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v))

/** Migrations are static imports (fromRecord): file loaders break under test runners. */
export const layerMigrations = PgMigrator.layer({
  loader: Migrator.fromRecord(migrations),
  table: "pic2video_migrations"
}).pipe(Layer.provide(NodeContext.layer))

/** Client with the schema brought up to date before anything else uses it. */
export const layer = layerMigrations.pipe(Layer.provideMerge(layerClient))
