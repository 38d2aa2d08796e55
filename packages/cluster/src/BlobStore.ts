import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { AppConfig } from "./AppConfig.ts"

/**
 * Where stored files live (originals, previews, caption overlays, finished videos). One small
 * interface so an object store can stand in later; the local implementation keeps files under
 * DATA_DIR/blobs, shared by every process on the host. Writes land whole or not at all
 * (write to a temp name, then rename).
 */
export interface BlobStoreShape {
  /** moves (or copies) a local file into the store under `key` */
  readonly putFile: (key: string, from: string) => Effect.Effect<void>
  readonly putBytes: (key: string, bytes: Uint8Array) => Effect.Effect<void>
  /** a local path to read the blob from, or undefined when it is missing */
  readonly localPath: (key: string) => Effect.Effect<string | undefined>
  readonly getBytes: (key: string) => Effect.Effect<Uint8Array | undefined>
  readonly remove: (key: string) => Effect.Effect<void>
  /** a scratch path on the same filesystem, for work that ends in `putFile` */
  readonly tempPath: (suffix: string) => Effect.Effect<string>
}

export class BlobStore extends Context.Tag("pic2video/BlobStore")<BlobStore, BlobStoreShape>() {}

const safeKey = (key: string) => {
  if (!/^[A-Za-z0-9_./-]+$/.test(key) || key.includes("..")) throw new Error(`bad blob key ${key}`)
  return key
}

export const makeLocal = (root: string): BlobStoreShape => {
  const pathOf = (key: string) => Path.join(root, safeKey(key))
  const tmpDir = Path.join(root, ".tmp")
  const tempPath = (suffix: string) =>
    Effect.promise(async () => {
      await fs.mkdir(tmpDir, { recursive: true })
      return Path.join(tmpDir, `${randomBytes(12).toString("hex")}${suffix}`)
    })
  const landAt = async (key: string, write: (tmp: string) => Promise<void>) => {
    const dest = pathOf(key)
    await fs.mkdir(Path.dirname(dest), { recursive: true })
    await fs.mkdir(tmpDir, { recursive: true })
    const tmp = Path.join(tmpDir, randomBytes(12).toString("hex"))
    try {
      await write(tmp)
      await fs.rename(tmp, dest)
    } catch (e) {
      await fs.rm(tmp, { force: true })
      throw e
    }
  }
  return {
    putFile: (key, from) =>
      Effect.promise(() =>
        landAt(key, async (tmp) => {
          try {
            await fs.rename(from, tmp)
          } catch {
            await fs.copyFile(from, tmp) // another filesystem: copy instead
          }
        })
      ),
    putBytes: (key, bytes) => Effect.promise(() => landAt(key, (tmp) => fs.writeFile(tmp, bytes))),
    localPath: (key) =>
      Effect.promise(() => fs.access(pathOf(key)).then(() => pathOf(key), () => undefined)),
    getBytes: (key) =>
      Effect.promise(() => fs.readFile(pathOf(key)).then((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength), () => undefined)),
    remove: (key) => Effect.promise(() => fs.rm(pathOf(key), { force: true })),
    tempPath
  }
}

export const layerLocal = Layer.effect(
  BlobStore,
  Effect.map(AppConfig, (c) => makeLocal(Path.join(c.dataDir, "blobs")))
)
