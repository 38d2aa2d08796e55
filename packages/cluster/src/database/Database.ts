import { Migrator } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"
import * as Embedded from "./EmbeddedPostgres.ts"
import { migrations } from "./migrations/index.ts"

/**
 * The SqlClient every part of the service shares: DATABASE_URL when set, else the embedded server.
 * Timestamps are parsed by node-postgres into Dates; rows keep their snake_case column names.
 */
export const layerClient = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = Option.isSome(config.databaseUrl)
      ? config.databaseUrl.value
      : Redacted.make(yield* Embedded.connectOrStart(config.dataDir))
    return PgClient.layer({ url, maxConnections: 20, types: int8AsNumber })
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
