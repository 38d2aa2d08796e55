import * as fs from "node:fs"
import { type Admin, inProcessAdmin, keyed, type Keyed } from "../foundation/admin.ts"
import { stopOrKill } from "../renders/helpers.ts"
import { makeShared, type Service, type Shared, startService } from "../support/service.ts"

/**
 * The adversarial suite (issue 14): attacks a hostile client tried on the running service, kept as
 * tests. Loopback only; every attack is bounded in count and in time.
 */
export interface Target {
  readonly shared: Shared
  readonly service: Service
  readonly admin: Admin
  readonly main: Keyed
  readonly close: () => Promise<void>
}

/** One service (`npm start` as the harness runs it) with a studio workspace and an all-scopes key. */
export const target = async (env: Record<string, string> = {}): Promise<Target> => {
  const shared = await makeShared()
  const service = await startService(shared, env)
  const admin = inProcessAdmin(service.env)
  const main = await keyed(admin, "studio")
  return {
    shared,
    service,
    admin,
    main,
    close: async () => {
      await admin.dispose()
      await stopOrKill(service)
      fs.rmSync(shared.dataDir, { recursive: true, force: true })
    }
  }
}

/** `[[[…]]]` nested `depth` levels, around `inner`. */
export const nested = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth)
