/**
 * The client on Deno: run by test/client/deno.test.ts as `deno run -A test/client/deno-client.ts`
 * against the real service (BASE_URL, API_KEY, PHOTO, BIG_PHOTO). Prints one JSON line of what it saw.
 */
import { ApiError, Client, createClient } from "@pic2video/client"
import { Array as Arr, Effect, Stream } from "effect"
import * as fs from "node:fs"

const options = { apiKey: process.env.API_KEY!, baseUrl: process.env.BASE_URL! }
const bytes = new Uint8Array(fs.readFileSync(process.env.PHOTO!))

// Effect: upload, create, wait, stream the video
const effect = await Effect.runPromise(Effect.gen(function*() {
  const p2v = yield* Client.makeWithFetch(options)
  const media = yield* p2v.upload({ file: bytes, filename: "photo.jpg" })
  const created = yield* p2v.createRender({ media_id: media.id, quote: "On Deno" })
  const progress: Array<string> = []
  const done = yield* p2v.waitForRender(created.render.id, {
    interval: "300 millis",
    onProgress: (r) => progress.push(r.status)
  })
  const video = Buffer.concat(Arr.fromIterable(yield* Stream.runCollect(p2v.downloadStream(done.id))))
  const missing = yield* Effect.flip(p2v.getRender("rnd_doesnotexist0000000000"))
  return {
    status: done.status,
    bytes: video.byteLength,
    size: done.asset?.byte_size,
    lastProgress: progress.at(-1),
    missing: missing._tag === "ApiError" ? missing.code : missing._tag
  }
}))

// an upload's progress: the bytes counted as the request sends them, with the Effect client (a
// Uint8Array) and the Promise facade (a Blob)
const big = new Uint8Array(fs.readFileSync(process.env.BIG_PHOTO!))
const counts = (seen: Array<[number, number]>) => ({
  calls: seen.length,
  last: seen.at(-1),
  increasing: seen.every(([sent, total], i) => total === big.byteLength && sent > (i === 0 ? 0 : seen[i - 1][0]))
})
const effectSeen: Array<[number, number]> = []
const effectBig = await Effect.runPromise(
  Effect.flatMap(Client.makeWithFetch(options), (p2v) =>
    p2v.upload({
      file: big,
      filename: "big.png",
      onProgress: (sent, total) => effectSeen.push([sent, total])
    }))
)
const promiseSeen: Array<[number, number]> = []
const promiseBig = await createClient(options).upload({
  file: new Blob([big], { type: "image/png" }),
  filename: "big.png",
  onProgress: (sent, total) => promiseSeen.push([sent, total])
})
// a refusal of a streamed body is an ApiError by code, not a broken pipe
const tooLarge = await Effect.runPromise(
  Effect.flip(
    Effect.flatMap(
      Client.makeWithFetch(options),
      (p2v) => p2v.upload({ file: new Uint8Array(16 * 1024 * 1024).fill(1), filename: "big.jpg" })
    )
  )
)
const upload = {
  size: big.byteLength,
  tooLarge: tooLarge._tag === "ApiError" ? tooLarge.code : `${tooLarge._tag}: ${tooLarge.message}`,
  effect: { ...counts(effectSeen), stored: effectBig.file_size_bytes },
  promise: { ...counts(promiseSeen), stored: promiseBig.file_size_bytes }
}

// Promise: the same with the facade
const p2v = createClient(options)
const media = await p2v.upload({ file: new Blob([bytes]), filename: "photo.jpg" })
const { render } = await p2v.createRender({ media_id: media.id, quote: "On Deno, with promises" })
const done = await p2v.waitForRender(render.id, { interval: "300 millis" })
const video = await p2v.download(done.id)
let promiseError = ""
try {
  await p2v.getImport("imp_doesnotexist000000000000")
} catch (e) {
  promiseError = e instanceof ApiError ? e.code : String(e)
}

// Deno's global, absent under Node
const deno = (globalThis as { readonly Deno?: { readonly version: { readonly deno: string } } }).Deno

console.log(JSON.stringify({
  runtime: deno === undefined ? "not deno" : `deno ${deno.version.deno}`,
  effect,
  upload,
  promise: { status: done.status, bytes: video.byteLength, size: done.asset?.byte_size, error: promiseError }
}))
