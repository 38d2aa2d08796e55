import { randomBytes } from "node:crypto"
import { expect, it } from "vitest"
import type { Json } from "../support/limits.ts"
import { adminOk, client, photo, startService, waitFor } from "../support/service.ts"
import { useDeployment } from "./support.ts"

/**
 * Logs: LOG_FORMAT=json writes one JSON object per line (time, level, message, the request
 * id on a request's lines, the trace and span ids when a span is active); the default stays the human
 * format. And whatever the format, no secret ever reaches the log: the run below handles API keys
 * (good and bad), a portal sign-in link and its session, a key minted in the portal, and the
 * service's own keys, then looks for every one of them in everything the process printed.
 */
const deployment = useDeployment()
// the installation's secrets: every process on the file's database holds the same ones
const keys = {
  API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
  TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64")
}

it(
  "LOG_FORMAT=json: a JSON object per line with request and trace ids; no secret, token, key or sign-in link in the output",
  async () => {
    const svc = await startService(deployment.shared, {
      ...keys,
      LOG_FORMAT: "json",
      OTEL_EXPORTER_OTLP_ENDPOINT: deployment.receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "200",
      RENDER_NICE: "0",
      RENDER_X264_PRESET: "superfast"
    })
    deployment.services.push(svc)

    // ---- API keys: one that works, a well-formed one that does not, garbage
    const ws = await adminOk(svc.env, "workspace", "create", "--name", "Logged", "--plan", "studio")
    const key = await adminOk(
      svc.env,
      "key",
      "create",
      ws.id,
      "--scopes",
      "media:read,media:write,renders:create,renders:read"
    )
    const http = client(svc.baseUrl, key.secret)
    const wrongKey = `p2v_live_${"A".repeat(16)}${
      randomBytes(24).toString("base64url").replace(/[-_]/g, "x").slice(0, 32)
    }`
    expect((await client(svc.baseUrl, wrongKey).get("/api/v1/usage")).status).toBe(401)
    const garbage = `garbage-${randomBytes(8).toString("hex")}`
    expect((await client(svc.baseUrl, garbage).get("/api/v1/usage")).status).toBe(401)
    const upload = await http.upload(photo("coffee.png"), { filename: "coffee.png" })
    expect(upload.status).toBe(201)
    const mediaId = (await upload.json()).id
    const created = await http.postJson("/api/v1/renders", { media_id: mediaId, quote: "Logged" })
    expect(created.status).toBe(202)
    const renderId = (await created.json()).id
    await waitFor(
      async () => (await (await http.get(`/api/v1/renders/${renderId}`)).json()).status === "completed",
      120_000,
      "the render"
    )

    // ---- the portal: a sign-in link, a bad one, the session, its CSRF token, a key minted there
    const link = await adminOk(svc.env, "portal", "link", ws.id)
    const token = new URL(link.url).searchParams.get("token")!
    // the link opens a page whose one button posts the token back (the GET itself never signs in)
    expect(
      (await fetch(`${svc.baseUrl}/portal/sign-in?token=${token.slice(0, -4)}AAAA`, { redirect: "manual" })).status
    ).toBe(400)
    expect(
      (await fetch(`${svc.baseUrl}/portal/sign-in?token=${encodeURIComponent(token)}`, { redirect: "manual" })).status
    ).toBe(200)
    const post = (t: string) =>
      fetch(`${svc.baseUrl}/portal/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ token: t }).toString()
      })
    expect((await post(`${token.slice(0, -4)}BBBB`)).status).toBe(400)
    const signIn = await post(token)
    expect(signIn.status).toBe(303)
    const session = /p2v_portal=([^;]+)/.exec(signIn.headers.getSetCookie().join("\n"))![1]
    const cookie = { cookie: `p2v_portal=${session}` }
    const keysPage = await (await fetch(`${svc.baseUrl}/portal/keys`, { headers: cookie })).text()
    const csrf = /name="csrf" value="([^"]+)"/.exec(keysPage)![1]
    const formId = /name="form_id" value="([^"]+)"/.exec(keysPage)![1]
    const minted = await fetch(`${svc.baseUrl}/portal/keys`, {
      method: "POST",
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, form_id: formId, name: "from the portal", scopes: "media:read" }).toString()
    })
    const mintedSecret = /p2v_live_[A-Za-z0-9]{54}/.exec(await minted.text())?.[0]
    expect(mintedSecret, "the portal shows the minted key once").toBeDefined()
    const used = await client(svc.baseUrl, mintedSecret).get("/api/v1/media")
    expect(used.status, `${mintedSecret}: ${await used.text()}`).toBe(200)

    // let the render's and the portal's lines (and spans) be written
    await new Promise((r) => setTimeout(r, 1000))
    const output = svc.output()
    // the exported spans carry the requests' URLs and headers: never a credential either
    const spans = JSON.stringify(deployment.receiver.spans().map((s) => ({ name: s.name, attributes: s.attributes })))
    expect(spans).toContain("/portal/sign-in")
    expect(spans).toContain("token=REDACTED")
    const secrets = {
      "the API key": key.secret,
      "the wrong API key": wrongKey,
      "the garbage bearer": garbage,
      "the sign-in token": token,
      "the sign-in link": link.url,
      "the portal session": session,
      "the CSRF token": csrf,
      "the key minted in the portal": mintedSecret!,
      API_KEY_HASH_KEY: keys.API_KEY_HASH_KEY,
      TOKEN_ENCRYPTION_KEY: keys.TOKEN_ENCRYPTION_KEY
    }
    for (const [what, secret] of Object.entries(secrets)) {
      // nor in its url-encoded form
      for (const form of [secret, encodeURIComponent(secret)]) {
        expect(output.includes(form), `${what} is in the log`).toBe(false)
        expect(spans.includes(form), `${what} is in an exported span`).toBe(false)
      }
    }
    // nor the key's secret part alone (after its public id)
    expect(output.includes(key.secret.slice(25, 57))).toBe(false)

    // ---- one JSON object per line
    const lines = output.split("\n").filter((l) => l.trim() !== "")
    expect(lines.length).toBeGreaterThan(5)
    const entries = lines.map((line) => {
      let entry: Json
      expect(() => (entry = JSON.parse(line)), `not JSON: ${line}`).not.toThrow()
      expect(typeof entry.time, line).toBe("string")
      expect(Number.isNaN(Date.parse(entry.time)), line).toBe(false)
      expect(["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"], line).toContain(entry.level)
      expect(typeof entry.message, line).toBe("string")
      return entry
    })
    // a request's line: its request id and the trace and span it was logged in
    const accepted = entries.find((e) => e.message === `render ${renderId} accepted`)
    expect(accepted, output.slice(-3000)).toBeDefined()
    expect(accepted.request_id).toMatch(/^req_[A-Za-z0-9]{24}$/)
    expect(accepted.trace_id).toMatch(/^[0-9a-f]{32}$/)
    expect(accepted.span_id).toMatch(/^[0-9a-f]{16}$/)
    // the same request's id is the one the client got
    expect(created.headers.get("x-request-id")).toBe(accepted.request_id)
    // the runner's lines of that render are in the same trace, with no request id
    await waitFor(
      async () => deployment.receiver.spans().some((s) => s.traceId === accepted.trace_id && s.name === "Render.Start"),
      20_000,
      "the render's spans"
    )
    const processing = entries.find((e) =>
      typeof e.message === "string" && e.message.startsWith(`render ${renderId} processing`)
    )
    expect(processing.trace_id).toBe(accepted.trace_id)
    expect(processing.request_id).toBeUndefined()
    expect(deployment.receiver.spans().some((s) => s.spanId === processing.span_id)).toBe(true)
  },
  240_000
)

it("the default log format stays the human one", async () => {
  const svc = await startService(deployment.shared, keys)
  deployment.services.push(svc)
  const listening = svc.output().split("\n").find((l) => l.includes("Listening on"))
  expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(#\d+\): Listening on: 127\.0\.0\.1:\d+$/)
  await svc.stop()
})
