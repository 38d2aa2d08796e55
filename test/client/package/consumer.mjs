/**
 * A user's program in plain JavaScript, run by test/client/package.test.ts from a clean project that
 * installed the packed `@pic2video/client` (Node 22 and 24, Deno, Bun): upload a photo, create a
 * render, wait for it and save the MP4, with the Promise client and again with the Effect client.
 * Prints one JSON line of what it saw. P2V_API_KEY, P2V_BASE_URL, PHOTO, OUT (a directory).
 */
import { ApiError, createClient } from "@pic2video/client"
import * as Client from "@pic2video/client/Client"
import { downloadToFile, uploadFile } from "@pic2video/client/Files"
import { Effect } from "effect"
import * as fs from "node:fs"

const apiKey = process.env.P2V_API_KEY
const baseUrl = process.env.P2V_BASE_URL
const photo = process.env.PHOTO
const out = process.env.OUT
const runtime = typeof globalThis.Deno === "object"
  ? `deno ${globalThis.Deno.version.deno}`
  : typeof globalThis.Bun === "object"
  ? `bun ${globalThis.Bun.version}`
  : `node ${process.versions.node}`

// Promises
const p2v = createClient({ apiKey, baseUrl })
const media = await p2v.upload({ file: new Blob([fs.readFileSync(photo)]), filename: "photo.jpg" })
const { render } = await p2v.createRender({ media_id: media.id, quote: `Promises on ${runtime}` })
const done = await p2v.waitForRender(render.id, { interval: "250 millis" })
const video = await p2v.download(done.id)
fs.writeFileSync(`${out}/promise.mp4`, video)
let missing = ""
try {
  await p2v.getRender("rnd_doesnotexist0000000000")
} catch (e) {
  missing = e instanceof ApiError ? e.code : String(e)
}

// Effect
const effect = await Effect.runPromise(Effect.gen(function*() {
  const c = yield* Client.makeWithFetch({ apiKey, baseUrl })
  const m = yield* uploadFile(c, photo, { label: runtime })
  const created = yield* c.createRender({ media_id: m.id, quote: `Effect on ${runtime}` })
  const d = yield* c.waitForRender(created.render.id, { interval: "250 millis" })
  const saved = yield* downloadToFile(c, d.id, `${out}/effect.mp4`, undefined, { size: d.asset?.byte_size ?? null })
  const refused = yield* Effect.flip(c.getRender("rnd_doesnotexist0000000000"))
  return {
    status: d.status,
    size: d.asset?.byte_size,
    bytes: saved.bytes,
    label: m.label,
    missing: refused.code ?? refused._tag
  }
}))

console.log(JSON.stringify({
  runtime,
  promise: { status: done.status, size: done.asset?.byte_size, bytes: video.byteLength, missing },
  effect
}))
