import { ApiError, Client, createClient, TransportError, WaitTimeout } from "@pic2video/client"
import { downloadToFile, uploadFile } from "@pic2video/client/Files"
import { Array as Arr, Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pngOfSize } from "../foundation/photos.ts"
import { makeShared, photo, root, type Service, startService, workspaceWithKey } from "../support/service.ts"

/**
 * packages/client against the real service over HTTP: uploads, a render created with an automatic
 * Idempotency-Key and waited for, downloads, errors by code, and Retry-After honoured on a 429.
 */
let service: Service
let secret: string

beforeAll(async () => {
  service = await startService(await makeShared())
  secret = (await workspaceWithKey(service.env)).secret
})

afterAll(async () => {
  await service?.stop()
})

const effectClient = (options: Partial<Client.ClientOptions> = {}) =>
  Effect.runSync(Client.makeWithFetch({ apiKey: secret, baseUrl: service.baseUrl, ...options }))

const failure = async <E>(effect: Effect.Effect<unknown, E>): Promise<E> => {
  const result = await Effect.runPromise(Effect.flip(effect))
  return result
}

describe("Effect client", () => {
  it("uploads bytes, lists and previews the photo", async () => {
    const client = effectClient()
    const media = await Effect.runPromise(
      client.upload({ file: photo("rocket.jpg"), filename: "rocket.jpg", label: "Rocket", tags: ["a", "b"] })
    )
    expect(media).toMatchObject({
      object: "media",
      label: "Rocket",
      tags: ["a", "b"],
      mime_type: "image/jpeg",
      preview_expires_at: null
    })
    const list = await Effect.runPromise(client.listMedia({ limit: 1 }))
    expect(list.data.map((m) => m.id)).toEqual([media.id])
    const preview = await Effect.runPromise(client.preview(media.id))
    expect([...preview.subarray(0, 2)]).toEqual([0xff, 0xd8])
  })

  it("reports an upload's bytes as the request sends them, ending at the file's size", async () => {
    const big = await pngOfSize(6 * 1024 * 1024 + 12_345)
    // fetch is handed the body as a stream; this one passes it on a piece at a time, counting what
    // the request has read, so the callback can be compared with what has really gone
    const bodies: Array<unknown> = []
    let read = 0
    const relaying: typeof fetch = (input, init) => {
      bodies.push(init?.body)
      const source = (init!.body as ReadableStream<Uint8Array>).getReader()
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const r = await source.read()
          if (r.done) return controller.close()
          read += r.value.byteLength
          controller.enqueue(r.value)
        }
      }, { highWaterMark: 0 })
      return fetch(input, { ...init, body, duplex: "half" } as RequestInit)
    }
    const client = effectClient({ fetch: relaying })
    const seen: Array<[number, number]> = []
    let lead = 0
    const media = await Effect.runPromise(client.upload({
      file: big,
      filename: "big.png",
      onProgress: (sent, total) => {
        seen.push([sent, total])
        lead = Math.max(lead, sent - read)
      }
    }))
    expect(media.file_size_bytes).toBe(big.byteLength)
    expect(bodies).toHaveLength(1)
    expect(bodies[0]).toBeInstanceOf(ReadableStream)
    expect(seen.length).toBeGreaterThan(10)
    expect(seen.at(-1)).toEqual([big.byteLength, big.byteLength])
    expect(seen.every(([sent, total], i) => total === big.byteLength && sent > (i === 0 ? 0 : seen[i - 1][0]))).toBe(
      true
    )
    // the count runs at most a few 64 KiB pieces ahead of what the request has taken
    expect(lead).toBeLessThanOrEqual(4 * 64 * 1024)
  })

  it("answers a streamed upload's refusals as ApiError by code: too large (413) and not a photo (415)", async () => {
    const client = effectClient()
    const seen: Array<number> = []
    const tooLarge = await failure(
      client.upload({
        file: new Uint8Array(16 * 1024 * 1024).fill(1),
        filename: "big.jpg",
        onProgress: (sent) => seen.push(sent)
      })
    )
    expect(tooLarge).toMatchObject({ _tag: "ApiError", code: "payload_too_large", status: 413 })
    expect(seen.length).toBeGreaterThan(0)
    const notPhoto = await failure(
      client.upload({ file: new TextEncoder().encode("just text, not a photo"), filename: "a.jpg" })
    )
    expect(notPhoto).toMatchObject({ _tag: "ApiError", code: "unsupported_media_type", status: 415 })
  })

  it("encodes the multipart body as fetch encodes a FormData (quotes, line breaks, non-ASCII)", async () => {
    const bodies: Array<unknown> = []
    const recording: typeof fetch = (input, init) => (bodies.push(init?.body), fetch(input, init))
    const streamed = effectClient({ fetch: recording })
    const plain = effectClient({ fetch: recording, streamUploads: false })
    const inputs = [
      {
        file: photo("rocket.jpg"),
        filename: "we\"ird\r\nname é.jpg",
        label: "She said \"hi\"\nthen, naïvely, left",
        tags: ["é", "two words", "q\"uote"]
      },
      { file: photo("rocket.jpg"), filename: "we\"ird\nname.jpg" }
    ]
    for (const input of inputs) {
      const seen: Array<[number, number]> = []
      const a = await Effect.runPromise(streamed.upload(input))
      const b = await Effect.runPromise(plain.upload({ ...input, onProgress: (x, y) => seen.push([x, y]) }))
      expect(bodies.splice(0)).toEqual([expect.any(ReadableStream), expect.any(FormData)])
      expect({ label: a.label, tags: a.tags, size: a.file_size_bytes }).toEqual({
        label: b.label,
        tags: b.tags,
        size: b.file_size_bytes
      })
      // without a stream the callback hears once, when the service has answered
      expect(seen).toEqual([[input.file.byteLength, input.file.byteLength]])
    }
  })

  it("creates a render with an automatic Idempotency-Key, waits for it with progress, and downloads it", async () => {
    const client = effectClient()
    const media = await Effect.runPromise(uploadFile(client, Path.join(root, "test/fixtures/coffee.png")))
    const created = await Effect.runPromise(client.createRender({ media_id: media.id, quote: "Stay curious" }))
    expect(created.render.status).toBe("queued")
    expect(created.replayed).toBe(false)
    expect(created.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    const seen: Array<string> = []
    const done = await Effect.runPromise(client.waitForRender(created.render.id, {
      interval: "200 millis",
      onProgress: (r) => seen.push(`${r.status}:${r.progress}`)
    }))
    expect(done.status, JSON.stringify(done)).toBe("completed")
    expect(done.idempotency_key).toBe(created.idempotencyKey)
    expect(seen.at(-1)).toBe("completed:100")
    // the same key again is the same render, answered from the service's record
    const again = await Effect.runPromise(
      client.createRender({ media_id: media.id, quote: "Stay curious" }, { idempotencyKey: created.idempotencyKey })
    )
    expect(again).toMatchObject({ replayed: true, render: { id: created.render.id } })

    const bytes = await Effect.runPromise(client.download(done.id))
    expect(new TextDecoder().decode(bytes.subarray(4, 8))).toBe("ftyp")
    expect(bytes.byteLength).toBe(done.asset!.byte_size)
    const streamed = await Effect.runPromise(Stream.runCollect(client.downloadStream(done.id)))
    expect(Buffer.concat(Arr.fromIterable(streamed)).equals(Buffer.from(bytes))).toBe(true)
    const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-client-"))
    const progress: Array<number> = []
    const file = await Effect.runPromise(
      downloadToFile(client, done.id, Path.join(dir, "a.mp4"), (n) => progress.push(n))
    )
    expect(fs.readFileSync(file.path).equals(Buffer.from(bytes))).toBe(true)
    expect(progress.at(-1)).toBe(bytes.byteLength)
    expect(fs.existsSync(Path.join(dir, "a.mp4.partial"))).toBe(false)
    fs.rmSync(dir, { recursive: true })
  })

  it("fails with ApiError typed by code, with the request id", async () => {
    const client = effectClient()
    const notFound = await failure(client.getRender("rnd_doesnotexist0000000000000"))
    expect(notFound).toBeInstanceOf(ApiError)
    expect(notFound).toMatchObject({ code: "render_not_found", status: 404 })
    expect((notFound as ApiError).requestId).toMatch(/.+/)
    const unknownMedia = await failure(client.createRender({ media_id: crypto.randomUUID(), quote: "x" }))
    expect(unknownMedia).toMatchObject({ _tag: "ApiError", code: "unknown_media" })
    // the codes an operation can answer are read from the definition: a create can be unknown_media, never import_not_found
    type CreateCodes = Client.CodesOf<Client.Client["raw"]["renders"]["createRender"]>
    const exact: "unknown_media" extends CreateCodes ? ("import_not_found" extends CreateCodes ? false : true) : false =
      true
    expect(exact).toBe(true)
    const badKey = await failure(effectClient({ apiKey: "p2v_nonsense" }).usage())
    expect(badKey).toMatchObject({ code: "invalid_api_key", status: 401 })
    const unreachable = await failure(
      Client.makeWithFetch({ apiKey: secret, baseUrl: "http://127.0.0.1:9", maxAttempts: 1 }).pipe(
        Effect.flatMap((c) => c.usage())
      )
    )
    expect(unreachable).toBeInstanceOf(TransportError)
  })

  it("stops waiting at the deadline without canceling the render", async () => {
    const client = effectClient()
    const media = await Effect.runPromise(client.upload({ file: photo("rocket.jpg") }))
    const created = await Effect.runPromise(client.createRender({ media_id: media.id }))
    const timeout = await failure(client.waitForRender(created.render.id, { deadline: "1 millis" }))
    expect(timeout).toBeInstanceOf(WaitTimeout)
    const done = await Effect.runPromise(client.waitForRender(created.render.id, { interval: "200 millis" }))
    expect(done.status).toBe("completed")
  })

  it("waits out Retry-After on a 429 and then succeeds", async () => {
    const { secret: limited } = await workspaceWithKey(service.env, { keyArgs: ["--uploads-per-minute", "1"] })
    const log: Array<{ status: number; at: number; retryAfter: string | null }> = []
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      log.push({ status: res.status, at: Date.now(), retryAfter: res.headers.get("retry-after") })
      return res
    }
    const client = Effect.runSync(Client.makeWithFetch({ apiKey: limited, baseUrl: service.baseUrl, fetch: recording }))
    await Effect.runPromise(client.upload({ file: photo("rocket.jpg") }))
    const second = await Effect.runPromise(client.upload({ file: photo("rocket.jpg") }))
    expect(second.object).toBe("media")
    expect(log.map((l) => l.status)).toEqual([201, 429, 201])
    const waited = log[2].at - log[1].at
    expect(waited).toBeGreaterThanOrEqual(Number(log[1].retryAfter) * 1000 - 50)
  }, 180_000)
})

describe("Promise client", () => {
  it("does the same with promises, and rejects with the same errors", async () => {
    const client = createClient({ apiKey: secret, baseUrl: service.baseUrl })
    const media = await client.upload({ file: new Blob([photo("chelsea.png")]), filename: "chelsea.png" })
    const { render } = await client.createRender({ media_id: media.id, quote: "Hello" })
    const done = await client.waitForRender(render.id, { interval: "200 millis" })
    expect(done.status).toBe("completed")
    const stream = await client.downloadStream(done.id)
    let size = 0
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) size += chunk.byteLength
    expect(size).toBe(done.asset!.byte_size)
    const usage = await client.usage()
    expect(usage.aesthetic_quotes.used).toBeGreaterThanOrEqual(1)
    await expect(client.getImport("imp_doesnotexist00000000000")).rejects.toMatchObject({
      _tag: "ApiError",
      code: "import_not_found"
    })
    // an aborted wait stops waiting; the render goes on
    const next = await client.createRender({ media_id: media.id, quote: "Again" })
    const aborted = new AbortController()
    const waiting = client.waitForRender(next.render.id, { interval: "200 millis" }, { signal: aborted.signal })
    setTimeout(() => aborted.abort(), 50)
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" })
    expect((await client.waitForRender(next.render.id, { interval: "200 millis" })).status).toBe("completed")
  })
})
