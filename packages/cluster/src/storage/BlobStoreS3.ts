import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client
} from "@aws-sdk/client-s3"
import { Upload } from "@aws-sdk/lib-storage"
import { Errors } from "@pic2video/domain"
import { Effect, Layer, Predicate, Redacted, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createReadStream, createWriteStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { AppConfig } from "../config/AppConfig.ts"
import {
  BlobStore,
  type BlobStoreShape,
  type ListedBlob,
  makeTempPath,
  type S3Settings,
  safeKey,
  type Unavailable
} from "./BlobStore.ts"

/**
 * The BlobStore on an S3-compatible object store (AWS S3, MinIO, ...). Every byte streams: uploads
 * read the local file in parts (multipart above one part, at most two parts in memory), downloads
 * stream the object's body. Work that needs a file (decoding a photo) gets a copy in a local scratch
 * cache under DATA_DIR/blob-cache, bounded by BLOB_CACHE_BYTES: past the bound the least recently
 * used copies go, except those used within the last minute (so the bound is soft while many renders
 * read at once). Keys never change content, so a cached copy is never stale; several processes may
 * share the cache directory (copies land by rename).
 */
const partSize = 8 * 1024 * 1024

const missing = (e: unknown) =>
  Predicate.hasProperty(e, "name") && (e.name === "NoSuchKey" || e.name === "NotFound") ||
  Predicate.hasProperty(e, "$metadata") && Predicate.hasProperty(e.$metadata, "httpStatusCode") &&
    e.$metadata.httpStatusCode === 404

/** On Node the SDK's response body is the HTTP response itself, a Readable (its type covers browsers too). */
const nodeBody = (body: unknown) => {
  if (body instanceof Readable) return body
  throw new Error("the object store's response has no readable body")
}

// the client learns the store is down, not which object it was after (the log says that)
const unavailable = (): Unavailable =>
  Errors.fail("service_unavailable", "stored files cannot be reached right now; retry shortly", { retryAfter: 2 })

export const make = (settings: S3Settings, dataDir: string) =>
  Effect.gen(function*() {
    const s3 = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.accessKeyId !== undefined && settings.secretAccessKey !== undefined
        ? { accessKeyId: settings.accessKeyId, secretAccessKey: Redacted.value(settings.secretAccessKey) }
        : undefined, // the SDK's own chain (environment, instance role)
      // plain checksums every S3-compatible server understands (no aws-chunked trailers)
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      maxAttempts: 3,
      // an unreachable store answers the request path within seconds, not a socket's minutes
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 }
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => s3.destroy()))
    const Bucket = settings.bucket
    const Key = (key: string) => settings.prefix + safeKey(key)
    /** a bad key is a defect (as in the local store), checked before any call is made */
    const checked = <A, E, R>(key: string, f: () => Effect.Effect<A, E, R>) => Effect.suspend(() => (Key(key), f()))

    /** one call to the store: every fault is 503 (logged); `orMissing` turns a missing object into undefined first */
    const call = <A>(what: string, f: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (e) => e }).pipe(
        Effect.tapError((e) =>
          Effect.logWarning(`object store: could not ${what}`, e instanceof Error ? e.message : String(e))
        ),
        Effect.mapError(() => unavailable())
      )
    const orMissing = <A>(f: (signal: AbortSignal) => Promise<A>) => (signal: AbortSignal) =>
      f(signal).catch((e) => {
        if (missing(e)) return undefined
        throw e
      })

    // A new deployment's bucket is made by the first write that finds it missing (or at start).
    const makeBucket = (signal?: AbortSignal) =>
      s3.send(new CreateBucketCommand({ Bucket }), { abortSignal: signal }).catch((e) => {
        if (e?.name !== "BucketAlreadyOwnedByYou" && e?.name !== "BucketAlreadyExists") throw e
      })
    const orMakeBucket = <A>(f: (signal: AbortSignal) => Promise<A>) => (signal: AbortSignal) =>
      f(signal).catch(async (e) => {
        if (e?.name !== "NoSuchBucket") throw e
        await makeBucket(signal)
        return f(signal)
      })

    const get = (key: string, signal?: AbortSignal) =>
      s3.send(new GetObjectCommand({ Bucket, Key: Key(key) }), { abortSignal: signal })

    // ---- the scratch cache
    const cacheDir = Path.join(dataDir, "blob-cache")
    const cacheTmp = Path.join(cacheDir, ".tmp")
    const cached = (key: string) =>
      Path.join(cacheDir, createHash("sha256").update(`${Bucket}/${Key(key)}`).digest("hex").slice(0, 40))
    const fetching = new Map<string, Promise<string | undefined>>()
    let evicting = false
    const evict = async () => {
      if (evicting) return
      evicting = true
      try {
        const names = (await fs.readdir(cacheDir)).filter((n) => !n.startsWith("."))
        const entries = (await Promise.all(names.map(async (n) => {
          const st = await fs.stat(Path.join(cacheDir, n)).catch(() => undefined)
          return st === undefined ? undefined : { path: Path.join(cacheDir, n), size: st.size, used: st.mtimeMs }
        }))).filter((e) => e !== undefined)
        let total = entries.reduce((n, e) => n + e.size, 0)
        // the file system's clock, not Clock: it is compared with the mtimes the file system wrote
        const now = Date.now()
        for (const e of entries.sort((a, b) => a.used - b.used)) {
          if (total <= settings.cacheBytes) break
          if (now - e.used < (settings.cacheGraceMillis ?? 60_000)) break
          await fs.rm(e.path, { force: true })
          total -= e.size
        }
      } finally {
        evicting = false
      }
    }
    const fetchToCache = (key: string): Promise<string | undefined> => {
      const dest = cached(key)
      const running = fetching.get(dest)
      if (running !== undefined) return running
      const job = (async () => {
        const object = await get(key).catch((e) => {
          if (missing(e)) return undefined
          throw e
        })
        if (object === undefined) return undefined
        await fs.mkdir(cacheTmp, { recursive: true })
        const tmp = Path.join(cacheTmp, randomBytes(12).toString("hex"))
        try {
          await pipeline(nodeBody(object.Body), createWriteStream(tmp))
          await fs.rename(tmp, dest)
        } catch (e) {
          await fs.rm(tmp, { force: true })
          throw e
        }
        evict().catch(() => {})
        return dest
      })().finally(() => fetching.delete(dest))
      fetching.set(dest, job)
      return job
    }

    const store: BlobStoreShape = {
      putFile: (key, from) =>
        checked(key, () =>
          call(
            `store ${key}`,
            orMakeBucket(async (signal) => {
              const upload = new Upload({
                client: s3,
                params: { Bucket, Key: Key(key), Body: createReadStream(from) },
                partSize,
                queueSize: 2,
                leavePartsOnError: false
              })
              const abort = () => upload.abort().catch(() => {})
              signal.addEventListener("abort", abort)
              try {
                await upload.done()
              } finally {
                signal.removeEventListener("abort", abort)
              }
              // stored: the local file is gone, as when the local store moves it
              await fs.rm(from, { force: true })
            })
          )),
      putBytes: (key, bytes) =>
        checked(key, () =>
          call(
            `store ${key}`,
            orMakeBucket((signal) =>
              s3.send(new PutObjectCommand({ Bucket, Key: Key(key), Body: bytes, ContentLength: bytes.byteLength }), {
                abortSignal: signal
              })
            )
          ).pipe(Effect.asVoid)),
      localPath: (key) =>
        checked(key, () =>
          call(`fetch ${key}`, async () => {
            const dest = cached(key)
            // the file system's clock (see evict)
            const now = new Date()
            // a copy already here: mark it used (the eviction order) and read it
            const hit = await fs.utimes(dest, now, now).then(() => true, () => false)
            return hit ? dest : fetchToCache(key)
          })),
      getBytes: (key) =>
        checked(key, () =>
          call(
            `read ${key}`,
            orMissing(async (signal) => {
              const object = await get(key, signal)
              return await object.Body!.transformToByteArray()
            })
          )),
      open: (key) =>
        checked(key, () =>
          call(
            `read ${key}`,
            orMissing(async (signal) => {
              const object = await get(key, signal)
              const body = nodeBody(object.Body)
              return {
                stream: Stream.fromAsyncIterable<Uint8Array, Unavailable>(body, () => unavailable()),
                size: object.ContentLength ?? 0,
                etag: object.ETag,
                lastModified: object.LastModified
              }
            })
          )),
      remove: (key) =>
        checked(key, () =>
          call(`remove ${key}`, (signal) =>
            s3.send(new DeleteObjectCommand({ Bucket, Key: Key(key) }), { abortSignal: signal })).pipe(
              Effect.andThen(Effect.promise(() =>
                fs.rm(cached(key), { force: true })
              )),
              Effect.ignore
            )),
      tempPath: makeTempPath(Path.join(dataDir, "scratch")),
      list: call("list the bucket", async (signal) => {
        const found: Array<ListedBlob> = []
        let token: string | undefined
        do {
          const page = await s3.send(
            new ListObjectsV2Command({ Bucket, Prefix: settings.prefix, ContinuationToken: token }),
            { abortSignal: signal }
          ).catch((e) => {
            if (e?.name === "NoSuchBucket") {
              return undefined // nothing stored yet
            }
            throw e
          })
          for (const o of page?.Contents ?? []) {
            if (o.Key === undefined) {
              continue
            }
            found.push({
              key: o.Key.slice(settings.prefix.length),
              size: o.Size ?? 0,
              lastModified: o.LastModified ?? new Date(0)
            })
          }
          token = page?.IsTruncated === true ? page.NextContinuationToken : undefined
        } while (token !== undefined)
        return found.sort((a, b) =>
          a.key < b.key ? -1 : a.key > b.key ? 1 : 0
        )
      })
    }

    // a store that is down now only delays this to the first write
    yield* call(`reach bucket ${Bucket}`, (signal) =>
      s3.send(new HeadBucketCommand({ Bucket }), { abortSignal: signal }).catch(async (e) => {
        if (!missing(e)) {
          throw e
        }
        await makeBucket(signal)
      })).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    yield* Effect.logInfo(
      `blob store: s3://${Bucket}/${settings.prefix}${
        settings.endpoint === undefined ? "" : ` at ${settings.endpoint}`
      }`
    )
    return store
  })

export const layer = (settings: S3Settings) =>
  Layer.effect(BlobStore, Effect.flatMap(AppConfig, (c) => make(settings, c.dataDir)))
