import { Effect, Predicate } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"

/**
 * A 32-byte secret from an environment variable (base64), else generated once into
 * `DATA_DIR/secrets/<name>` so every process sharing the data directory (server, runners, the
 * operator CLI) uses the same one. Written with `wx` so two processes starting at once agree.
 */
export const loadOrCreateSecret = (dataDir: string, name: string, fromEnv: string | undefined) =>
  Effect.promise(async () => {
    if (fromEnv !== undefined && fromEnv !== "") {
      const key = Buffer.from(fromEnv, "base64")
      if (key.length !== 32) throw new Error(`the ${name} key must be 32 bytes, base64-encoded`)
      return new Uint8Array(key)
    }
    const dir = Path.join(dataDir, "secrets")
    const file = Path.join(dir, name)
    await fs.mkdir(dir, { recursive: true, mode: 0o700 })
    try {
      await fs.writeFile(file, randomBytes(32).toString("base64"), { flag: "wx", mode: 0o600 })
    } catch (e) {
      if (!Predicate.hasProperty(e, "code") || e.code !== "EEXIST") throw e
    }
    const key = Buffer.from((await fs.readFile(file, "utf8")).trim(), "base64")
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`)
    return new Uint8Array(key)
  })
