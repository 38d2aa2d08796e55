import { type BlobStoreShape, makeLocal, parseStoreUrl } from "@pic2video/cluster/storage/BlobStore"
import * as BlobStoreS3 from "@pic2video/cluster/storage/BlobStoreS3"
import { Errors } from "@pic2video/domain"
import { Array as Arr, Cause, Effect, Exit, Layer, Option, Redacted, References, Scope, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../support/net.ts"
import { s3AccessKey, s3SecretKey, type S3Server, startS3Server } from "../support/s3-server.ts"

/**
 * One BlobStore suite, every backend: the local directory and the S3 store (against s3rver, a real
 * S3 protocol server run in this process; test/support/s3-server.ts). Then what only the object store
 * has: a bounded scratch cache of fetched blobs, and 503 `service_unavailable` (never a defect) when
 * the store cannot be reached.
 */
const run = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Layer.succeed(References.MinimumLogLevel, "None"))))
const runExit = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromiseExit(effect.pipe(Effect.provide(Layer.succeed(References.MinimumLogLevel, "None"))))
const tmpDir = (what: string) => fs.mkdtempSync(Path.join(os.tmpdir(), `p2v-${what}-`))
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

let s3: S3Server
const scopes: Array<Scope.Closeable> = []

const s3Store = async (
  endpoint: string,
  extra: { cacheBytes?: number; cacheGraceMillis?: number; bucket?: string } = {}
) => {
  const scope = await Effect.runPromise(Scope.make())
  scopes.push(scope)
  const dataDir = tmpDir("s3data")
  const store = await run(Scope.provide(
    BlobStoreS3.make({
      bucket: extra.bucket ?? "blobs",
      prefix: "suite/",
      endpoint,
      region: "us-east-1",
      accessKeyId: s3AccessKey,
      secretAccessKey: Redacted.make(s3SecretKey),
      forcePathStyle: true,
      cacheBytes: extra.cacheBytes ?? 1024 ** 3,
      cacheGraceMillis: extra.cacheGraceMillis
    }, dataDir),
    scope
  ))
  return { store, dataDir }
}

beforeAll(async () => {
  s3 = await startS3Server()
})

afterAll(async () => {
  for (const scope of scopes) await Effect.runPromise(Scope.close(scope, Exit.void))
  await s3?.close()
})

const backends: Array<{ name: string; make: () => Promise<BlobStoreShape> }> = [
  { name: "local directory", make: async () => makeLocal(tmpDir("blobs")) },
  // the bucket does not exist yet: the store makes it on start
  { name: "S3 (s3rver)", make: async () => (await s3Store(s3.endpoint)).store }
]

describe.each(backends)("BlobStore: $name", ({ make }) => {
  let store: BlobStoreShape
  beforeAll(async () => {
    store = await make()
  })

  it("stores bytes under a key and reads them back; an unknown key is missing everywhere", async () => {
    const bytes = randomBytes(1000)
    await run(store.putBytes("captions/r1.png", bytes))
    expect(sha((await run(store.getBytes("captions/r1.png")))!)).toBe(sha(bytes))
    expect(await run(store.getBytes("captions/none.png"))).toBeUndefined()
    expect(await run(store.open("captions/none.png"))).toBeUndefined()
    expect(await run(store.localPath("captions/none.png"))).toBeUndefined()
  })

  it("putFile takes the file over (the source is gone) and the blob reads back whole, as bytes, a stream and a local file", async () => {
    // 20 MiB: more than two 8 MiB parts, so the object store takes it as a multipart upload
    const bytes = randomBytes(20 * 1024 * 1024)
    const from = await run(store.tempPath(".mp4"))
    fs.writeFileSync(from, bytes)
    await run(store.putFile("renders/r2.mp4", from))
    expect(fs.existsSync(from)).toBe(false)

    const opened = (await run(store.open("renders/r2.mp4")))!
    expect(opened.size).toBe(bytes.length)
    expect(opened.etag).toMatch(/^(W\/)?".+"$/)
    expect(opened.lastModified).toBeInstanceOf(Date)
    const chunks = await run(Stream.runCollect(opened.stream))
    // streamed in pieces, never as one buffer
    expect(chunks.length).toBeGreaterThan(4)
    expect(Math.max(...Arr.fromIterable(chunks).map((c) => c.byteLength))).toBeLessThanOrEqual(4 * 1024 * 1024)
    expect(sha(Buffer.concat(Arr.fromIterable(chunks)))).toBe(sha(bytes))

    const local = (await run(store.localPath("renders/r2.mp4")))!
    expect(sha(fs.readFileSync(local))).toBe(sha(bytes))
    expect(sha((await run(store.getBytes("renders/r2.mp4")))!)).toBe(sha(bytes))
  })

  it("an empty blob is a blob", async () => {
    await run(store.putBytes("captions/empty.png", new Uint8Array()))
    expect((await run(store.getBytes("captions/empty.png")))!.byteLength).toBe(0)
    expect((await run(store.open("captions/empty.png")))!.size).toBe(0)
  })

  it("a second write of a key replaces it whole", async () => {
    await run(store.putBytes("media/w/m1", new Uint8Array([1, 2, 3])))
    await run(store.putBytes("media/w/m1", new Uint8Array([4, 5])))
    expect([...(await run(store.getBytes("media/w/m1")))!]).toEqual([4, 5])
  })

  it("remove deletes the blob; removing a missing blob is no error", async () => {
    await run(store.putBytes("media/w/m2", new Uint8Array([9])))
    await run(store.localPath("media/w/m2"))
    await run(store.remove("media/w/m2"))
    expect(await run(store.getBytes("media/w/m2"))).toBeUndefined()
    expect(await run(store.localPath("media/w/m2"))).toBeUndefined()
    await run(store.remove("media/w/never"))
  })

  it("refuses keys that could leave the store", async () => {
    for (const key of ["../etc/passwd", "a/../../b", "a b", "é"]) {
      const exit = await runExit(store.putBytes(key, new Uint8Array([1])))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause), key).toBe(true)
    }
  })

  it("lists every stored blob with its size and time (admin doctor's view), not a write under way", async () => {
    await run(store.putBytes("list/media/w/a", new Uint8Array([1, 2, 3])))
    await run(store.putBytes("list/renders/b.mp4", new Uint8Array(10)))
    const pending = await run(store.tempPath(".part"))
    fs.writeFileSync(pending, "not stored yet")
    const listed = (await run(store.list)).filter((b) => b.key.startsWith("list/"))
    expect(listed.map((b) => [b.key, b.size])).toEqual([["list/media/w/a", 3], ["list/renders/b.mp4", 10]])
    for (const b of listed) expect(Math.abs(b.lastModified.getTime() - Date.now())).toBeLessThan(60_000)
    await run(store.remove("list/media/w/a"))
    expect((await run(store.list)).filter((b) => b.key.startsWith("list/")).map((b) => b.key)).toEqual([
      "list/renders/b.mp4"
    ])
    fs.rmSync(pending)
  })

  it("tempPath is a fresh writable path each time", async () => {
    const a = await run(store.tempPath(".x"))
    const b = await run(store.tempPath(".x"))
    expect(a).not.toBe(b)
    expect(a.endsWith(".x")).toBe(true)
    fs.writeFileSync(a, "ok")
    fs.rmSync(a)
  })
})

describe("BlobStore on S3: what only the object store has", () => {
  it("BLOB_STORE_URL names a bucket and an optional prefix", () => {
    expect(parseStoreUrl("s3://media-bucket")).toEqual({ bucket: "media-bucket", prefix: "" })
    expect(parseStoreUrl("s3://media-bucket/prod/p2v/")).toEqual({ bucket: "media-bucket", prefix: "prod/p2v/" })
    expect(parseStoreUrl("s3://")).toBeUndefined()
    expect(parseStoreUrl("s3://Bad_Bucket")).toBeUndefined()
    expect(parseStoreUrl("s3://b1/../x")).toBeUndefined()
    expect(parseStoreUrl("/var/data")).toBeUndefined()
  })

  it("fetched blobs sit in a bounded scratch cache: past the bound the least recently used copies go", async () => {
    const { store, dataDir } = await s3Store(s3.endpoint, { cacheBytes: 3 * 1024 * 1024, cacheGraceMillis: 0 })
    const cacheDir = Path.join(dataDir, "blob-cache")
    const cachedBytes = () =>
      fs.readdirSync(cacheDir).filter((n) => !n.startsWith(".")).reduce(
        (n, f) => n + fs.statSync(Path.join(cacheDir, f)).size,
        0
      )
    for (let i = 0; i < 6; i++) await run(store.putBytes(`media/w/c${i}`, randomBytes(1024 * 1024)))
    const first = (await run(store.localPath("media/w/c0")))!
    for (let i = 1; i < 6; i++) {
      await run(store.localPath(`media/w/c${i}`))
      // c0 stays in use (read again), so it outlives the others
      const t = new Date(Date.now() + 1000 * i)
      fs.utimesSync(first, t, t)
      await new Promise((r) => setTimeout(r, 50)) // eviction runs after the fetch returns
    }
    expect(cachedBytes()).toBeLessThanOrEqual(3 * 1024 * 1024)
    expect(fs.existsSync(first)).toBe(true)
    // a copy that was evicted is fetched again on demand
    expect(await run(store.localPath("media/w/c1"))).toBeDefined()
  })

  it("a store that was down when the process started works once it is up, making its bucket on the first write", async () => {
    const port = await freePort()
    const { store } = await s3Store(`http://127.0.0.1:${port}`, { bucket: "made-later" })
    const late = await startS3Server({ port })
    try {
      await run(store.putBytes("captions/late.png", new Uint8Array([7, 7])))
      expect([...(await run(store.getBytes("captions/late.png")))!]).toEqual([7, 7])
    } finally {
      await late.close()
    }
  })

  it("a store that cannot be reached is service_unavailable (503) on every read and write, quickly; remove is no error", async () => {
    const closedPort = await freePort()
    const { store } = await s3Store(`http://127.0.0.1:${closedPort}`)
    const from = await run(store.tempPath(".mp4"))
    fs.writeFileSync(from, randomBytes(1000))
    const started = Date.now()
    for (
      const attempt of [
        store.putBytes("captions/x.png", new Uint8Array([1])),
        store.putFile("renders/x.mp4", from),
        store.getBytes("captions/x.png"),
        store.open("renders/x.mp4"),
        store.localPath("media/w/x")
      ] as Array<Effect.Effect<unknown, Errors.ApiFailure>>
    ) {
      const exit = await runExit(attempt)
      expect(Exit.isFailure(exit)).toBe(true)
      const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
      expect(failure).toBeInstanceOf(Errors.ApiFailure)
      expect(failure!.code).toBe("service_unavailable")
      expect(Errors.statusOf(failure!.code)).toBe(503)
      expect(failure!.retryAfter).toBeGreaterThan(0)
    }
    // a failed upload leaves the local file for the caller (nothing is lost)
    expect(fs.existsSync(from)).toBe(true)
    await run(store.remove("renders/x.mp4"))
    expect(Date.now() - started).toBeLessThan(30_000)
  })
})
