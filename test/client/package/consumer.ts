/**
 * A user's program in TypeScript, type-checked by test/client/package.test.ts (strict, NodeNext)
 * in a clean project against the installed package's `.d.ts`: the README's quick starts, and a few
 * results whose types must come through (codes, media, renders).
 */
import { ApiError, createClient } from "@pic2video/client"
import * as Client from "@pic2video/client/Client"
import { downloadToFile, uploadFile } from "@pic2video/client/Files"
import { Effect } from "effect"

const apiKey = process.env.P2V_API_KEY ?? ""
const baseUrl = "http://localhost:8080"

export const withPromises = async (photo: Blob): Promise<Uint8Array> => {
  const p2v = createClient({ apiKey, baseUrl })
  const media = await p2v.upload({ file: photo, filename: "photo.jpg" })
  const { render } = await p2v.createRender({ media_id: media.id, quote: "Stay curious" })
  const done = await p2v.waitForRender(render.id)
  const status: "queued" | "processing" | "completed" | "failed" | "canceled" | (string & {}) = done.status
  void status
  try {
    await p2v.getRender("rnd_x")
  } catch (e) {
    if (e instanceof ApiError && e.code === "render_not_found") console.log(e.requestId)
  }
  return p2v.download(done.id)
}

export const withEffect = Effect.gen(function*() {
  const p2v = yield* Client.makeWithFetch({ apiKey, baseUrl })
  const media: Client.Media = yield* uploadFile(p2v, "photo.jpg", { label: "Beach", tags: ["summer"] })
  const { render } = yield* p2v.createRender({ media_id: media.id, quote: "Stay curious" })
  const done = yield* p2v.waitForRender(render.id)
  if (done.status === "completed") yield* downloadToFile(p2v, done.id, "out.mp4")
  const byteSize: number | null | undefined = done.asset?.byte_size
  return byteSize
}).pipe(
  Effect.catchTag("ApiError", (e) => e.code === "spend_cap_reached" ? Effect.succeed(null) : Effect.fail(e))
)
