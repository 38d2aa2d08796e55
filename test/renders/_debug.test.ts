import { it } from "vitest"
import { client, makeShared, startService, workspaceWithKey } from "../support/service.ts"
import { uploadPhoto, createRender, pollToEnd } from "./helpers.ts"
it("debug", async () => {
  const service = await startService(await makeShared(), { RENDER_CONCURRENCY: "1" })
  const [mine, theirs] = await Promise.all([workspaceWithKey(service.env), workspaceWithKey(service.env, { plan: "agency" })])
  const api = client(service.baseUrl, mine.secret)
  const other = client(service.baseUrl, theirs.secret)
  const m = await uploadPhoto(api)
  const tm = await uploadPhoto(other, "coffee.png")
  const f = await createRender(other, { media_id: tm.id, quote: "" })
  const a = await createRender(api, { media_id: m.id, quote: "Every field, every null" })
  let t = Date.now()
  try { console.log("a", (await pollToEnd(api, a.id, 60000, (r) => console.log("A", r.status, r.progress, r.updated_at))).seen, Date.now() - t) } catch (e) { console.log(String(e)); console.log("F", JSON.stringify(await (await other.get("/api/v1/renders/" + f.id)).json())) }
  const metadata = { order: "A-17", count: 3, ratio: 0.5, vip: true, note: null, emoji: "✨🚀" }
  const b = await createRender(api, { media_id: m.id, quote: "", metadata }, { "idempotency-key": "lifecycle-echo-1" })
  t = Date.now()
  try { console.log("b", (await pollToEnd(api, b.id, 40000, (r) => console.log(r.status, r.progress, r.updated_at))).seen, Date.now() - t) } catch (e) { console.log(String(e)) }
  t = Date.now()
  const stopP = service.stop()
  const to = setTimeout(() => { console.log("STOP HANG"); service.process.kill("SIGKILL") }, 20000)
  console.log("exit", await stopP, Date.now() - t)
  clearTimeout(to)
  console.log(service.output().slice(-8000))
}, 200000)
