import { it } from "vitest"
import { makeShared, photo, startService, workspaceWithKey } from "../support/service.ts"
it("debug", async () => {
  for (let round = 0; round < 3; round++) {
    const svc = await startService(await makeShared(), { RENDER_CONCURRENCY: "1" })
    const keys = await Promise.all([0, 1, 2].map(() => workspaceWithKey(svc.env)))
    const names = ["rocket.jpg", "coffee.png", "chelsea.png", "astronaut.png"]
    const up = async (secret: string, name: string) => {
      const t = Date.now()
      try {
        const form = new FormData(); form.append("file", new Blob([photo(name)]), name)
        const r = await fetch(`${svc.baseUrl}/api/v1/media`, { method: "POST", headers: { authorization: `Bearer ${secret}` }, body: form, signal: AbortSignal.timeout(20000) })
        await r.text()
        return `${r.status}:${Date.now() - t}`
      } catch (e) { return `ERR ${String(e).slice(0, 60)} after ${Date.now() - t}` }
    }
    const res = await Promise.all(keys.flatMap((k) => names.map((n) => up(k.secret, n))))
    console.log("round", round, res.join(" "))
    const bad = res.filter((r) => r.startsWith("ERR"))
    if (bad.length) {
      const ps = await new Promise<string>((resolve) => require("node:child_process").execFile("ps", ["-o", "pid,pcpu,stat,etime,comm", "-p", String(svc.process.pid)], (_e: any, o: string) => resolve(o)))
      console.log(ps)
      console.log(svc.output().split("\n").filter((l) => !l.includes("eprecation")).slice(-40).join("\n"))
    }
    svc.process.kill("SIGKILL")
  }
}, 600000)
