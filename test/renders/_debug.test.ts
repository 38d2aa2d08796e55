import { it } from "vitest"
import { adminOk, client, makeShared, startService, workspaceWithKey } from "../support/service.ts"
import { uploadPhoto, createRender, findEncoder, getRender, isEncoding } from "./helpers.ts"
it("debug", async () => {
  const slow = await startService(await makeShared(), { RENDER_CONCURRENCY: "1", RENDER_SECONDS: "12" })
  const { secret } = await workspaceWithKey(slow.env)
  const api = client(slow.baseUrl, secret)
  const m = await uploadPhoto(api)
  const a = await createRender(api, { media_id: m.id, quote: "" })
  const b = await createRender(api, { media_id: m.id, quote: "" })
  await findEncoder([slow.process.pid!], 120000)
  await adminOk(slow.env, "render", "cancel", a.id)
  const t0 = Date.now()
  let last = ""
  while (Date.now() - t0 < 150000) {
    const ra = await getRender(api, a.id), rb = await getRender(api, b.id)
    const line = `A ${ra.status} ${ra.progress} | B ${rb.status} ${rb.progress} | enc=${await isEncoding(slow.process.pid!)}`
    if (line !== last) console.log(Date.now() - t0, line)
    last = line
    if (rb.status === "processing") break
    await new Promise((r) => setTimeout(r, 500))
  }
  slow.process.kill("SIGKILL")
  console.log(slow.output().split("\n").filter((l) => !l.includes("eprecation")).slice(-30).join("\n"))
}, 300000)
