import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "./AppConfig.ts"

/**
 * The origin of `preview_url` and `asset.url` (contract §1). The HTTP process records the one it
 * serves under, so the operator CLI, which is given only DATABASE_URL / DATA_DIR (contract §2),
 * prints the same URLs as the API instead of the default port's.
 */
export const record = Effect.gen(function*() {
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    INSERT INTO service_settings (name, value) VALUES ('public_base_url', ${config.publicBaseUrl})
    ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
})

/** This process's own setting when it was given one, else the one the service recorded. */
export const forOperator = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.publicBaseUrlGiven) return config.publicBaseUrl
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ value: string }>`SELECT value FROM service_settings WHERE name = 'public_base_url'`
  return rows[0]?.value ?? config.publicBaseUrl
})
