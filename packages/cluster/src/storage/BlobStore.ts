import { Errors } from "@pic2video/domain"
import { Config, Context, Effect, Layer, Option, Redacted, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { AppConfig } from "../config/AppConfig.ts"

/**
 * Where stored files live (originals, previews, caption overlays, finished videos). Two
 * implementations: a local directory (DATA_DIR/blobs, the default, shared by every process on the
 * host) and an S3-compatible object store (BLOB_STORE_URL=s3://bucket[/prefix], BlobStoreS3.ts), so
 * runners on other machines need no shared volume. Writes land whole or not at all. Keys are written
 * once and never reused, so a local copy of a blob never goes stale.
 *
 * A store that cannot be reached fails with `service_unavailable` (503 on the request path; retried,
 * then failed and refunded on a runner); the local store's faults stay defects, as any disk fault.
 */
export type Unavailable = Errors.ApiFailure

/** A stored blob opened for reading: its bytes stream, its size is known up front. */
export interface OpenedBlob {
  readonly stream: Stream.Stream<Uint8Array, Unavailable>
  readonly size: number
  /** a validator for the bytes, as an HTTP ETag value (quoted, maybe W/) */
  readonly etag: string | undefined
  readonly lastModified: Date | undefined
}

/** A stored blob as a listing names it. */
export interface ListedBlob {
  readonly key: string
  readonly size: number
  readonly lastModified: Date
}

export interface BlobStoreShape {
  /** moves (or copies) a local file into the store under `key`, streaming it */
  readonly putFile: (key: string, from: string) => Effect.Effect<void, Unavailable>
  readonly putBytes: (key: string, bytes: Uint8Array) => Effect.Effect<void, Unavailable>
  /**
   * A local path to read the blob from, or undefined when it is missing. For the local store the
   * file itself; for an object store a copy in this process's bounded scratch cache (for work that
   * needs a file: decoding a photo for a render or a preview). Read it promptly: the cache evicts
   * copies unused for a while once it is over its bound.
   */
  readonly localPath: (key: string) => Effect.Effect<string | undefined, Unavailable>
  readonly getBytes: (key: string) => Effect.Effect<Uint8Array | undefined, Unavailable>
  /** the blob as a stream (downloads), or undefined when it is missing */
  readonly open: (key: string) => Effect.Effect<OpenedBlob | undefined, Unavailable>
  /** best effort: a blob that cannot be removed now is left behind, never an error */
  readonly remove: (key: string) => Effect.Effect<void>
  /** a local scratch path, for work that ends in `putFile` */
  readonly tempPath: (suffix: string) => Effect.Effect<string>
  /** every stored blob (not writes under way): what `admin doctor` holds the database's references against */
  readonly list: Effect.Effect<ReadonlyArray<ListedBlob>, Unavailable>
}

export class BlobStore extends Context.Service<BlobStore, BlobStoreShape>()("pic2video/BlobStore") {}

export const safeKey = (key: string) => {
  if (!/^[A-Za-z0-9_./-]+$/.test(key) || key.includes("..")) throw new Error(`bad blob key ${key}`)
  return key
}

/** A file's bytes as a stream, read in 64 KiB chunks; the file is opened only when the stream runs. */
const fileStream = (path: string): Stream.Stream<Uint8Array> =>
  Stream.suspend(() => Stream.fromAsyncIterable(createReadStream(path, { highWaterMark: 64 * 1024 }), (e) => e)).pipe(
    Stream.orDie
  )

/** Scratch paths under `dir` (one filesystem with what they are renamed into). */
export const makeTempPath = (dir: string) => (suffix: string) =>
  Effect.promise(async () => {
    await fs.mkdir(dir, { recursive: true })
    return Path.join(dir, `${randomBytes(12).toString("hex")}${suffix}`)
  })

export const makeLocal = (root: string): BlobStoreShape => {
  const pathOf = (key: string) => Path.join(root, safeKey(key))
  const tmpDir = Path.join(root, ".tmp")
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
  const localPath = (key: string) =>
    Effect.promise(() => fs.access(pathOf(key)).then(() => pathOf(key), () => undefined))
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
    localPath,
    getBytes: (key) =>
      Effect.promise(() =>
        fs.readFile(pathOf(key)).then((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength), () => undefined)
      ),
    open: (key) =>
      Effect.promise(async () => {
        const stat = await fs.stat(pathOf(key)).catch(() => undefined)
        if (stat === undefined || !stat.isFile()) return undefined
        return {
          stream: fileStream(pathOf(key)),
          size: stat.size,
          // the same weak validator the platform's file responses carry
          etag: `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`,
          lastModified: stat.mtime
        }
      }),
    remove: (key) => Effect.promise(() => fs.rm(pathOf(key), { force: true })),
    tempPath: makeTempPath(tmpDir),
    list: Effect.promise(async () => {
      const found: Array<ListedBlob> = []
      const walk = async (dir: string, prefix: string): Promise<void> => {
        const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
        for (const entry of entries) {
          // .tmp holds writes under way (they land by rename); keys never start with a dot
          if (entry.name.startsWith(".")) continue
          const path = Path.join(dir, entry.name)
          if (entry.isDirectory()) await walk(path, `${prefix}${entry.name}/`)
          else if (entry.isFile()) {
            const stat = await fs.stat(path).catch(() => undefined)
            if (stat !== undefined) {
              found.push({ key: `${prefix}${entry.name}`, size: stat.size, lastModified: stat.mtime })
            }
          }
        }
      }
      await walk(root, "")
      return found.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    })
  }
}

/**
 * A store in memory, for tests of the code above it: blobs are byte arrays in a map (written whole,
 * as the real stores write them), and the local paths it hands out are copies in its own scratch
 * directory, as the object store's cache hands them out.
 */
const makeMemory = (scratch: string): BlobStoreShape => {
  const blobs = new Map<string, Uint8Array>()
  const copyOf = (key: string) => Path.join(scratch, "copies", createHash("sha256").update(safeKey(key)).digest("hex"))
  const read = (key: string) => blobs.get(safeKey(key))
  return {
    putFile: (key, from) =>
      Effect.promise(async () => {
        blobs.set(safeKey(key), new Uint8Array(await fs.readFile(from)))
        await fs.rm(from, { force: true }) // moved into the store, as the local store moves it
      }),
    putBytes: (key, bytes) => Effect.sync(() => void blobs.set(safeKey(key), Uint8Array.from(bytes))),
    localPath: (key) =>
      Effect.promise(async () => {
        const bytes = read(key)
        if (bytes === undefined) return undefined
        await fs.mkdir(Path.dirname(copyOf(key)), { recursive: true })
        await fs.writeFile(copyOf(key), bytes)
        return copyOf(key)
      }),
    getBytes: (key) => Effect.sync(() => read(key)),
    open: (key) =>
      Effect.sync(() => {
        const bytes = read(key)
        return bytes === undefined
          ? undefined
          : {
            stream: Stream.succeed(bytes),
            size: bytes.byteLength,
            etag: `"${bytes.byteLength.toString(16)}"`,
            lastModified: undefined
          }
      }),
    remove: (key) =>
      Effect.promise(async () => {
        blobs.delete(safeKey(key))
        await fs.rm(copyOf(key), { force: true })
      }),
    tempPath: makeTempPath(Path.join(scratch, "tmp")),
    // (it keeps no write times: its blobs list as written long ago)
    list: Effect.sync(() =>
      [...blobs.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([key, bytes]) => ({
        key,
        size: bytes.byteLength,
        lastModified: new Date(0)
      }))
    )
  }
}

/** `makeMemory` over a scratch directory of its own, removed with the layer. */
export const layerMemory = Layer.effect(
  BlobStore,
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "p2v-blobs-"))),
      (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
    ),
    makeMemory
  )
)

const layerLocal = Layer.effect(
  BlobStore,
  Effect.map(AppConfig, (c) => makeLocal(Path.join(c.dataDir, "blobs")))
)

/** The object store's settings (docs/operations.md "Object storage"). */
export interface S3Settings {
  readonly bucket: string
  /** key prefix inside the bucket, "" or ending in "/" */
  readonly prefix: string
  readonly endpoint: string | undefined
  readonly region: string
  readonly accessKeyId: string | undefined
  readonly secretAccessKey: Redacted.Redacted | undefined
  readonly forcePathStyle: boolean
  /** the soft bound of the local scratch cache of fetched blobs */
  readonly cacheBytes: number
  /** copies used more recently than this are never evicted (default one minute) */
  readonly cacheGraceMillis?: number
}

/** `s3://bucket[/prefix]` */
export const parseStoreUrl = (url: string): { readonly bucket: string; readonly prefix: string } | undefined => {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url)
  if (m === null) return undefined
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "")
  if (prefix !== "" && (!/^[A-Za-z0-9_./-]+$/.test(prefix) || prefix.includes(".."))) return undefined
  return { bucket: m[1], prefix: prefix === "" ? "" : `${prefix}/` }
}

const s3Config = Config.all({
  endpoint: Config.option(Config.String("S3_ENDPOINT")),
  region: Config.String("S3_REGION").pipe(Config.withDefault("us-east-1")),
  accessKeyId: Config.option(Config.String("S3_ACCESS_KEY_ID")),
  secretAccessKey: Config.option(Config.Redacted("S3_SECRET_ACCESS_KEY")),
  forcePathStyle: Config.Boolean("S3_FORCE_PATH_STYLE").pipe(Config.withDefault(false)),
  cacheBytes: Config.Int("BLOB_CACHE_BYTES").pipe(Config.withDefault(1024 ** 3))
})

/**
 * BLOB_STORE_URL picks the store: unset is the directory under DATA_DIR; `s3://bucket[/prefix]` is
 * the object store with the S3_* settings. The S3 client is loaded only when it is chosen.
 */
export const layer = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.String("BLOB_STORE_URL"))
    if (Option.isNone(url) || url.value === "") return layerLocal
    const where = parseStoreUrl(url.value)
    if (where === undefined) {
      return yield* Effect.die(new Error(`BLOB_STORE_URL ${url.value} is not s3://bucket[/prefix]`))
    }
    const c = yield* s3Config
    const S3 = yield* Effect.promise(() => import("./BlobStoreS3.ts"))
    return S3.layer({
      ...where,
      endpoint: Option.getOrUndefined(c.endpoint),
      region: c.region,
      accessKeyId: Option.getOrUndefined(c.accessKeyId),
      secretAccessKey: Option.getOrUndefined(c.secretAccessKey),
      forcePathStyle: c.forcePathStyle,
      cacheBytes: c.cacheBytes
    })
  }).pipe(Effect.orDie)
)
