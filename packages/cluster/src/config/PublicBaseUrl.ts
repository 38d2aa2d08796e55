import { Effect } from "effect"
import { SystemRepo } from "../repositories/SystemRepo.ts"
import { AppConfig } from "./AppConfig.ts"

/**
 * The origin of `preview_url` and `asset.url` (contract §1). The HTTP process records the one it
 * serves under, so the operator CLI, which is given only DATABASE_URL / DATA_DIR (contract §2),
 * prints the same URLs as the API instead of the default port's.
 */
const setting = "public_base_url"

export const record = Effect.gen(function*() {
  const config = yield* AppConfig
  yield* (yield* SystemRepo).setSetting(setting, config.publicBaseUrl)
})

/** This process's own setting when it was given one, else the one the service recorded. */
export const forOperator = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.publicBaseUrlGiven) return config.publicBaseUrl
  return (yield* (yield* SystemRepo).setting(setting)) ?? config.publicBaseUrl
})
