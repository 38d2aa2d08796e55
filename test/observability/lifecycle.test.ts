import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Json } from "../support/limits.ts"
import {
  client,
  command,
  freePort,
  makeShared,
  photo,
  root,
  type Shared,
  waitFor,
  workspaceWithKey
} from "../support/service.ts"

/**
 * What an operator reads of a process starting and stopping:
 * - a port already in use ends the start in one line naming the port and its variable (PORT,
 *   METRICS_PORT, RUNNER_PORT), exit code 1, no stack — in either log format;
 * - an api and a runner stopping on SIGTERM say each step (draining, releasing the shards or leaving
 *   the cluster, closing the database pool, stopped), and exit 0;
 * - with LOG_FORMAT=json every line on stdout is a JSON object, the stop's lines included; and the
 *   deployment files (Dockerfile, docker-compose.yml) start node directly, since `npm run` prints
 *   lines of its own on stdout.
 */
let shared: Shared
const children: Array<Proc> = []
const secrets = {
  API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
  TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64")
}

beforeAll(async () => {
  shared = await makeShared()
})

afterAll(() => {
  for (const c of children) c.kill("SIGKILL")
})

interface Proc {
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
  readonly exitCode: () => number | null
  readonly kill: (signal: NodeJS.Signals) => void
}

/** `bin/<entry>.ts` with the deployment's environment, stdout and stderr kept apart. */
const spawnProcess = (entry: "api" | "runner", env: Record<string, string>): Proc => {
  const child = spawn(...command(Path.join(root, `packages/server/src/bin/${entry}.ts`)), {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      HOST: "127.0.0.1",
      DATA_DIR: shared.dataDir,
      DATABASE_URL: shared.databaseUrl,
      RENDER_SECONDS: "1",
      ...secrets,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d) => (stdout += d))
  child.stderr!.on("data", (d) => (stderr += d))
  const proc: Proc = {
    stdout: () => stdout,
    stderr: () => stderr,
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
    exitCode: () => child.exitCode,
    kill: (signal) => {
      if (child.exitCode === null) child.kill(signal)
    }
  }
  children.push(proc)
  return proc
}

const linesOf = (text: string) => text.split("\n").filter((l) => l.trim() !== "")

/** Every stdout line is a JSON log entry; returns their messages in order. */
const jsonMessages = (stdout: string) =>
  linesOf(stdout).map((line) => {
    let entry: Json
    expect(() => (entry = JSON.parse(line)), `not JSON on stdout: ${line}`).not.toThrow()
    expect(typeof entry.message, line).toBe("string")
    expect(typeof entry.level, line).toBe("string")
    return entry.message as string
  })

/** A TCP listener holding a port, as another program would. */
const holdPort = async () => {
  const port = await freePort()
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))
  ])

describe("a port already in use", () => {
  // what each attempt ends with: one line, and the variable it names
  const cases: Array<{ entry: "api" | "runner"; variable: string; format: "text" | "json" }> = [
    { entry: "api", variable: "PORT", format: "text" },
    { entry: "runner", variable: "METRICS_PORT", format: "json" },
    { entry: "runner", variable: "RUNNER_PORT", format: "text" }
  ]
  for (const { entry, format, variable } of cases) {
    it(
      `${entry}, ${variable} taken (LOG_FORMAT=${format}): one line naming the port and ${variable}, exit 1, no stack`,
      async () => {
        const held = await holdPort()
        try {
          const env: Record<string, string> = { LOG_FORMAT: format, [variable]: String(held.port) }
          if (variable !== "PORT") env.PORT = String(await freePort())
          const proc = spawnProcess(entry, env)
          const code = await within(proc.exited, 60_000, `${entry} to exit`)
          const output = proc.stdout() + proc.stderr()
          console.log(`${entry} with ${variable}=${held.port} taken, exit ${code}:\n${output}`)
          expect(code).toBe(1)
          const expected =
            `port ${held.port} is already in use (${variable}): stop what listens there or choose another port`
          const saying = linesOf(output).filter((l) => l.includes("already in use"))
          expect(saying.length, output).toBe(1)
          if (format === "json") {
            const entry = JSON.parse(saying[0])
            expect(entry.level).toBe("ERROR")
            expect(entry.message).toBe(expected)
            expect(entry.cause).toBeUndefined()
            jsonMessages(proc.stdout())
          } else {
            expect(saying[0]).toMatch(new RegExp(`ERROR \\(#\\d+\\): ${expected.replace(/[()]/g, "\\$&")}$`))
          }
          // no stack, no error class, nothing logged after it
          expect(output).not.toMatch(/^\s+at /m)
          expect(output).not.toMatch(/ServeError|SocketServerError|EADDRINUSE|StartFailed/)
          expect(linesOf(output).at(-1)).toBe(saying[0])
        } finally {
          await held.close()
        }
      },
      90_000
    )
  }
})

it(
  "SIGTERM: a runner and an api say each step of their stop, every stdout line JSON (LOG_FORMAT=json), exit 0",
  async () => {
    const apiPort = await freePort()
    const api = spawnProcess("api", { LOG_FORMAT: "json", PORT: String(apiPort) })
    const baseUrl = `http://127.0.0.1:${apiPort}`
    await waitFor(
      async () => {
        if (api.exitCode() !== null) throw new Error(`the api exited:\n${api.stdout()}${api.stderr()}`)
        return (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200
      },
      60_000,
      "the api"
    )
    // renders long enough to be in flight when the runner is told to stop
    const runner = spawnProcess("runner", {
      LOG_FORMAT: "json",
      RENDER_SECONDS: "8",
      RENDER_CONCURRENCY: "1",
      RENDER_NICE: "0",
      RENDER_X264_PRESET: "superfast"
    })
    await waitFor(
      async () => {
        if (runner.exitCode() !== null) throw new Error(`the runner exited:\n${runner.stdout()}${runner.stderr()}`)
        return runner.stdout().includes("cluster runner at")
      },
      60_000,
      "the runner"
    )

    const env = {
      DATABASE_URL: shared.databaseUrl,
      DATA_DIR: shared.dataDir,
      ...secrets,
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp"
    }
    const { secret } = await workspaceWithKey(env)
    const http = client(baseUrl, secret)
    const upload = await http.upload(photo("coffee.png"), { filename: "coffee.png" })
    expect(upload.status).toBe(201)
    const created = await http.postJson("/api/v1/renders", { media_id: (await upload.json()).id, quote: "Stopping" })
    expect(created.status).toBe(202)
    const renderId = (await created.json()).id
    await waitFor(
      async () => (await (await http.get(`/api/v1/renders/${renderId}`)).json()).status === "processing",
      120_000,
      "the render to be processing"
    )

    // ---- the runner: drains (its render handed back), releases its shards, closes its pool
    runner.kill("SIGTERM")
    expect(await within(runner.exited, 60_000, "the runner to exit")).toBe(0)
    const runnerMessages = jsonMessages(runner.stdout())
    const runnerStop = runnerMessages.slice(runnerMessages.findIndex((m) => m.startsWith("stopping")))
    console.log(`runner's stop:\n${runnerStop.join("\n")}`)
    expect(runnerStop[0]).toBe(
      "stopping on SIGTERM: draining (1 render in flight is handed back to the cluster (resumed by the runner that takes its shard))"
    )
    const steps = (messages: Array<string>, wanted: Array<RegExp>) => {
      // each in order (other lines, from the work being stopped, may come between)
      let at = 0
      for (const w of wanted) {
        const i = messages.findIndex((m, j) => j >= at && w.test(m))
        expect(i, `${w} after line ${at} of:\n${messages.join("\n")}`).toBeGreaterThanOrEqual(at)
        at = i + 1
      }
      expect(messages.at(-1)).toBe("database pool closed; stopped")
    }
    steps(runnerStop, [
      /^stopping on SIGTERM: draining/,
      /^entities stopped; releasing 300 shards$/,
      /^shards released; closing the database pool$/,
      /^database pool closed; stopped$/
    ])

    // ---- the api: drains its HTTP server, leaves the cluster, closes its pool
    api.kill("SIGTERM")
    expect(await within(api.exited, 60_000, "the api to exit")).toBe(0)
    const apiMessages = jsonMessages(api.stdout())
    const apiStop = apiMessages.slice(apiMessages.findIndex((m) => m.startsWith("stopping")))
    console.log(`api's stop:\n${apiStop.join("\n")}`)
    expect(apiStop).toEqual([
      "stopping on SIGTERM: draining (the HTTP server takes no new connections, requests in flight finish)",
      "HTTP server closed; leaving the cluster",
      "left the cluster; closing the database pool",
      "database pool closed; stopped"
    ])
    // under LOG_FORMAT=json nothing but JSON was written on stdout, from the first line to the last
    for (const p of [api, runner]) expect(linesOf(p.stdout()).length).toBeGreaterThan(4)
  },
  300_000
)

it("the Dockerfile and docker-compose.yml start node directly (npm run writes lines of its own on stdout)", () => {
  const dockerfile = fs.readFileSync(Path.join(root, "Dockerfile"), "utf8")
  expect(dockerfile).toMatch(/^CMD \["node", "packages\/server\/src\/bin\/start\.ts"\]$/m)
  const compose = fs.readFileSync(Path.join(root, "docker-compose.yml"), "utf8")
  const commands = [...compose.matchAll(/^ {2}(api|runner-\d+):\n(?: {4}.*\n)*? {4}command: (.+)$/gm)].map((
    m
  ) => [m[1], m[2]])
  expect(commands.map(([s]) => s)).toEqual(["api", "runner-1", "runner-2"])
  for (const [service, cmd] of commands) {
    expect(cmd, service).toMatch(/^\["node", "packages\/server\/src\/bin\/(api|runner)\.ts"\]$/)
  }
})
