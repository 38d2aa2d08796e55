import { Client, createClient } from "@pic2video/client"
import { downloadToFile } from "@pic2video/client/Files"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { root } from "../support/service.ts"
import { answer, evil, type Handler, type Hostile, hostile, pour, scenarios, usageJson } from "./hostile-server.ts"
import { nested } from "./support.ts"

/**
 * The typed client and `p2v` against a hostile or
 * broken server (hostile-server.ts, test code). Every answer the client reads is bounded in size,
 * time and nesting; a redirect to another origin is refused; what the server says is escaped before
 * it reaches a terminal; a GET whose kept-alive socket is closed under it is sent again once, an
 * upload never. Each case runs in seconds: the timeouts are set small by their flags/options.
 */
const servers: Array<Hostile> = []
const serve = async (handler: Handler) => {
  const s = await hostile(handler)
  servers.push(s)
  return s
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

let dir: string
beforeAll(() => {
  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-hostile-"))
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly millis: number
}

/** `p2v` as a user runs it, stopped (code null) if it has not ended within `limitMillis` (generous: a loaded machine starts it slowly). */
const p2v = (baseUrl: string, args: ReadonlyArray<string>, env: Record<string, string> = {}, limitMillis = 60_000) =>
  new Promise<Run>((resolve) => {
    const started = Date.now()
    const child = spawn(process.execPath, [Path.join(root, "packages/client/src/bin/p2v.ts"), ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        P2V_API_KEY: "p2v_test_key",
        P2V_BASE_URL: baseUrl,
        ...env
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), limitMillis)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, millis: Date.now() - started })
    })
  })

/** One line on stderr, `error: …`, and no stack trace or schema dump (a tree of `└─` lines). */
const oneLine = (r: Run) => {
  expect(r.stderr, r.stderr).toMatch(/^error: [^\n]+\n$/)
  expect(r.stderr).not.toMatch(/\bat .+:\d+:\d+|Maximum call stack|└─|<->/)
}

const MiB = 1024 * 1024

describe("p2v against a hostile server", () => {
  it("stops an endless JSON answer at the 8 MiB limit: exit 7, one line", async () => {
    const s = await serve(scenarios["endless-json"]())
    const r = await p2v(s.baseUrl, ["usage"])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r)
    expect(r.stderr).toMatch(/GET \/api\/v1\/usage: the answer is larger than 8 MiB/)
    // the client hung up near the limit (socket buffers hold a few MB more), not after all of it
    expect(s.written()).toBeLessThan(8 * MiB + 32 * MiB)
  })

  it("refuses a 300 MB JSON answer by its Content-Length, before reading it", async () => {
    const s = await serve(scenarios["huge-json"]())
    const r = await p2v(s.baseUrl, ["usage"])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r)
    expect(r.stderr).toMatch(/larger than 8 MiB/)
    expect(s.written()).toBeLessThan(32 * MiB)
  })

  it("gives up on a silent server after --first-byte-timeout (P2V_FIRST_BYTE_TIMEOUT): exit 6", async () => {
    const s = await serve(scenarios.silent())
    const [r, flag] = await Promise.all([
      p2v(s.baseUrl, ["usage"], { P2V_FIRST_BYTE_TIMEOUT: "1" }),
      p2v(s.baseUrl, ["--first-byte-timeout", "1", "usage"])
    ])
    for (const run of [r, flag]) {
      expect(run.code, run.stderr).toBe(6)
      oneLine(run)
      expect(run.stderr).toMatch(/GET \/api\/v1\/usage: no answer within 1 s/)
    }
    // a timeout is not retried: one request each
    expect(s.seen).toHaveLength(2)
  })

  it("gives up on an answer that stalls after --idle-timeout (P2V_IDLE_TIMEOUT): exit 6", async () => {
    const s = await serve(scenarios.stall())
    const r = await p2v(s.baseUrl, ["usage"], { P2V_IDLE_TIMEOUT: "1" })
    expect(r.code, r.stderr).toBe(6)
    oneLine(r)
    expect(r.stderr).toMatch(/the answer stalled: nothing for 1 s/)
  })

  it("stops an endless download at the render's byte_size and leaves no file: exit 7", async () => {
    const s = await serve(scenarios["endless-download"]()) // byte_size: 10
    const out = Path.join(dir, "endless.mp4")
    const r = await p2v(s.baseUrl, ["download", "rnd_endless", "--out", out])
    expect(r.code, r.stderr).toBe(7)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /^error: GET \/api\/v1\/renders\/rnd_endless\/download: the download is longer than the 10 bytes expected$/
    )
    expect(fs.existsSync(out)).toBe(false)
    expect(fs.existsSync(`${out}.partial`)).toBe(false)
    expect(s.written()).toBeLessThan(32 * MiB)
  })

  it("reports garbage JSON as an unexpected answer at once, not as unreachable after retries: exit 7", async () => {
    const s = await serve(scenarios.garbage())
    const r = await p2v(s.baseUrl, ["usage"])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r)
    expect(r.stderr).toMatch(/GET \/api\/v1\/usage: the answer is not JSON \(HTTP 200, text\/html\)/)
    expect(s.seen).toHaveLength(1)
  })

  it("reports JSON that is not the API's shape in one line: exit 7", async () => {
    const s = await serve(scenarios["wrong-shape"]())
    const r = await p2v(s.baseUrl, ["usage"])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r)
    expect(r.stderr).toBe(
      "error: GET /api/v1/usage: the answer is not the API's: cycle_start: Expected string, actual 7\n"
    )
    expect(s.seen).toHaveLength(1)
  })

  it("refuses a 200,000-deep JSON answer without overflowing the stack: exit 7", async () => {
    const s = await serve(scenarios.deep())
    const r = await p2v(s.baseUrl, ["usage"])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r)
    expect(r.stderr).toMatch(/the answer nests deeper than 64 levels/)
  })

  it.each([302, 307])("refuses a %i redirect to another origin, which never hears from it: exit 7", async (status) => {
    const elsewhere = await serve((_req, res) => answer(res, 200, usageJson))
    const s = await serve(scenarios.redirect(status, elsewhere.baseUrl))
    const r = await p2v(s.baseUrl, ["usage"])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r)
    expect(r.stderr).toContain(
      `GET /api/v1/usage: the service redirected to ${elsewhere.baseUrl}/api/v1/usage, another origin; not followed`
    )
    expect(r.stdout).toBe("")
    expect(elsewhere.seen).toHaveLength(0)
  })

  it("follows a redirect on the same origin", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/api/v1/usage") {
        res.writeHead(307, { location: "/api/v1/usage/" })
        return res.end()
      }
      answer(res, 200, usageJson)
    })
    const r = await p2v(s.baseUrl, ["usage", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).aesthetic_quotes.used).toBe(3)
  })

  it("escapes control characters in what the server says (errors, text and --json output)", async () => {
    const s = await serve(scenarios.escapes())
    // \p{Cc} is C0, DEL and C1: what may not reach the terminal, the line break aside
    const raw = /(?!\n)[\p{Cc}\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/u
    const [refused, waited, text, json] = await Promise.all([
      p2v(s.baseUrl, ["status", "rnd_evil"]),
      p2v(s.baseUrl, ["status", "rnd_wait", "--wait", "--deadline", "0"]),
      p2v(s.baseUrl, ["media", "list"]),
      p2v(s.baseUrl, ["media", "list", "--json"])
    ])
    expect(refused.code).toBe(3)
    oneLine(refused)
    expect(refused.stderr).not.toMatch(raw)
    expect(refused.stderr).toContain(
      "gone \\u001b[31mred\\u001b[0m \\u202eevil\\u202c \\u0007\\u007f\\u009b1m \\u2066x\\u2069 \\u200e\\u061c\\nerror: forged"
    )

    // the progress line and the deadline's message carry the status the server sent
    expect(waited.code, waited.stderr).toBe(5)
    expect(waited.stderr).not.toMatch(raw)
    expect(waited.stderr).toContain("\\u001b[2Jqueued\\u202e rnd_wait\n")
    expect(waited.stderr).toContain("error: rnd_wait is still \\u001b[2Jqueued\\u202e at the deadline")

    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).not.toMatch(raw)
    expect(text.stdout).toContain("med\\u001b[2J")

    expect(json.code, json.stderr).toBe(0)
    expect(json.stdout).not.toMatch(raw)
    // still JSON, and still the server's text once parsed
    expect(JSON.parse(json.stdout).data[0].label).toBe(evil)
  })
})

/** The Effect client with no retries of its own (maxAttempts 1), so what is seen is the transport's doing. */
const client = (baseUrl: string, options: Partial<Client.ClientOptions> = {}) =>
  Effect.runSync(Client.makeWithFetch({ apiKey: "p2v_test_key", baseUrl, maxAttempts: 1, ...options }))
const failure = <E>(effect: Effect.Effect<unknown, E>) => Effect.runPromise(Effect.flip(effect))

describe("the typed client against a hostile server", () => {
  it("documents its defaults: 60 s first byte, 30 s idle, 8 MiB JSON, 256 MiB download", () => {
    expect(Client.defaults).toEqual({
      firstByteTimeout: "60 seconds",
      idleTimeout: "30 seconds",
      maxJsonBytes: 8 * MiB,
      maxDownloadBytes: 256 * MiB
    })
    const readme = fs.readFileSync(Path.join(root, "packages/client/README.md"), "utf8")
    for (
      const line of [
        "| `firstByteTimeout` | 60 s |",
        "| `idleTimeout` | 30 s |",
        "| `maxJsonBytes` | 8 MiB |",
        "| `maxDownloadBytes` | 256 MiB |"
      ]
    ) {
      expect(readme).toContain(line)
    }
  })

  it("holds the same limits: size, nesting, shape, time, redirects, download size", async () => {
    const elsewhere = await serve((_req, res) => answer(res, 200, usageJson))
    const s = await serve((req, res) => {
      const path = req.url!
      if (path.startsWith("/api/v1/usage")) {
        res.writeHead(200, { "content-type": "application/json" })
        return pour(res, Buffer.from(`{"pad":"${"x".repeat(64 * 1024)}`))
      }
      if (path.startsWith("/api/v1/media")) return answer(res, 200, `{"object":"list","data":${nested(100)}}`)
      if (path === "/api/v1/renders/rnd_silent") return
      if (path === "/api/v1/renders/rnd_moved") {
        res.writeHead(302, { location: `${elsewhere.baseUrl}${path}` })
        return res.end()
      }
      if (path === "/api/v1/renders/rnd_big/download") {
        res.writeHead(200, { "content-type": "video/mp4" })
        return pour(res, Buffer.alloc(64 * 1024, 1))
      }
      answer(res, 200, JSON.stringify({ object: "render", id: 5 }))
    })
    const c = client(s.baseUrl, { firstByteTimeout: "1 second", maxJsonBytes: 1 * MiB })
    expect(await failure(c.usage())).toMatchObject({ _tag: "UnexpectedAnswer", reason: "too_large", status: 200 })
    expect(await failure(c.listMedia())).toMatchObject({ _tag: "UnexpectedAnswer", reason: "too_deep" })
    expect(await failure(c.getRender("rnd_shape"))).toMatchObject({ _tag: "UnexpectedAnswer", reason: "not_the_api" })
    expect(await failure(c.getRender("rnd_silent"))).toMatchObject({ _tag: "TransportError", timeout: true })
    expect(await failure(c.getRender("rnd_moved"))).toMatchObject({ _tag: "UnexpectedAnswer", reason: "redirect" })
    expect(elsewhere.seen).toHaveLength(0)
    expect(await failure(c.download("rnd_big", { size: 100_000 }))).toMatchObject({
      _tag: "UnexpectedAnswer",
      reason: "too_large"
    })
    const file = Path.join(dir, "big.mp4")
    expect(await failure(downloadToFile(c, "rnd_big", file, undefined, { size: 10 }))).toMatchObject({
      _tag: "UnexpectedAnswer",
      reason: "too_large"
    })
    expect(fs.existsSync(file) || fs.existsSync(`${file}.partial`)).toBe(false)
    // without a size, the ceiling
    const small = client(s.baseUrl, { maxDownloadBytes: 1 * MiB })
    expect(await failure(small.download("rnd_big"))).toMatchObject({ _tag: "UnexpectedAnswer", reason: "too_large" })
    // the Promise client rejects with the same
    await expect(createClient({ apiKey: "k", baseUrl: s.baseUrl, maxJsonBytes: MiB }).usage()).rejects.toMatchObject({
      _tag: "UnexpectedAnswer"
    })
  })
})

describe("an upload to a server that does not take it", () => {
  it("stops when the body stalls (idle timeout), and waits for the answer only from the last byte (first-byte timeout)", async () => {
    const s = await serve(scenarios.silent())
    const c = client(s.baseUrl, { firstByteTimeout: "2 seconds", idleTimeout: "1 second" })
    // 15 MiB: more than the sockets' buffers hold, so the body stops being taken
    let sent = 0
    const stalled = await failure(
      c.upload({ file: new Uint8Array(15 * MiB).fill(7), filename: "a.png", onProgress: (n) => (sent = n) })
    )
    expect(stalled).toMatchObject({
      _tag: "TransportError",
      timeout: true,
      message: "POST /api/v1/media: the service took none of the request for 1 s"
    })
    expect(sent).toBeGreaterThan(0)
    expect(sent).toBeLessThan(15 * MiB)
    // all sent at once: then no answer
    const unanswered = await failure(c.upload({ file: new Uint8Array(1000).fill(7), filename: "a.png" }))
    expect(unanswered).toMatchObject({
      _tag: "TransportError",
      timeout: true,
      message: "POST /api/v1/media: no answer within 2 s"
    })
    // neither is sent again: it may have been stored
    expect(s.seen.filter((r) => r.method === "POST")).toHaveLength(2)
  })
})

describe("a kept-alive socket closed under a request (issue 26)", () => {
  const closesSecond = () => serve(scenarios["closes-second"]())

  /** fetch's pool takes a connection back a moment after its answer is read; until then a new one is opened. */
  const pooled = () => new Promise((resolve) => setTimeout(resolve, 20))

  it("sends a GET again at once, on a new connection, even with maxAttempts 1", async () => {
    const s = await closesSecond()
    const c = client(s.baseUrl)
    await Effect.runPromise(c.usage())
    await pooled()
    const second = await Effect.runPromise(c.usage())
    expect(second.aesthetic_quotes.used).toBe(3)
    expect(s.seen.map((r) => [r.method, r.socket, r.onSocket])).toEqual([["GET", 1, 1], ["GET", 1, 2], ["GET", 2, 1]])
  })

  it("never sends an upload again", async () => {
    const s = await closesSecond()
    const c = client(s.baseUrl, { maxAttempts: 5 })
    await Effect.runPromise(c.usage())
    await pooled()
    const error = await failure(c.upload({ file: new Uint8Array(1000).fill(7), filename: "a.png" }))
    expect(error).toMatchObject({ _tag: "TransportError" })
    expect(s.seen.filter((r) => r.method === "POST")).toHaveLength(1)
  })
})
