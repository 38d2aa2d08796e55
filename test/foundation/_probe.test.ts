import { it } from "vitest"
import { admin, makeShared, startService } from "../support/service.ts"
it("probe", async () => {
  const s = await makeShared()
  let t = Date.now()
  const svc = await startService(s)
  console.log("start", Date.now() - t); t = Date.now()
  const r = await admin(svc.env, "workspace", "create", "--name", "x", "--plan", "studio")
  console.log("admin", Date.now() - t, r.stdout, r.stderr); t = Date.now()
  const rs = await Promise.all(Array.from({length: 6}, () => admin(svc.env, "workspace", "create", "--name", "x", "--plan", "studio")))
  console.log("admin x6", Date.now() - t); t = Date.now()
  console.log(await svc.stop())
})
