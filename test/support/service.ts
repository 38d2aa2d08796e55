import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { inject } from "vitest"
import type { Json } from "./limits.ts"
import { freePort, waitFor } from "./net.ts"

export { freePort, waitFor }

/**
 * Test harness: the real service as a separate process over real HTTP and a real PostgreSQL
 * database made for the test file. Nothing in here stands in for the service's own code.
 */
export const root = Path.resolve(import.meta.dirname, "../..")
const node = process.execPath

/**
 * The runtime the service and the CLI run on: Node (this process's own binary) unless
 * P2V_TEST_RUNTIME=deno (read at each start, so a test file may set it for itself), then the
 * npm-shipped Deno, run as `npm run start:deno` runs it. The platform package's binary is used, not
 * node_modules/.bin/deno: without install scripts that is a Node wrapper, which would not pass SIGTERM on.
 */
export const command = (script: string, args: Array<string> = []): [string, Array<string>] => {
  if (process.env.P2V_TEST_RUNTIME !== "deno") return [node, [script, ...args]]
  const pkg = `@deno/${process.platform}-${process.arch}${process.platform === "linux" ? "-glibc" : ""}/package.json`
  const deno = Path.join(Path.dirname(createRequire(Path.join(root, "package.json")).resolve(pkg)), "deno")
  return [deno, ["run", "-A", script, ...args]]
}

/** Runs a command to its end, collecting what it prints (the CLIs and tools the suites drive). */
export const runCommand = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {}
) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd ?? root,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d) => (stdout += d))
    child.stderr!.on("data", (d) => (stderr += d))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

/** A fresh database on the run's PostgreSQL server. */
export const makeDatabase = async (): Promise<string> => {
  const adminUrl = inject("pgAdminUrl")
  const name = `p2v_${Math.random().toString(36).slice(2, 12)}`
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  await client.query(`CREATE DATABASE ${name}`)
  await client.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export interface Service {
  readonly baseUrl: string
  readonly env: Record<string, string>
  readonly process: ChildProcess
  readonly output: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export interface Shared {
  readonly databaseUrl: string
  readonly dataDir: string
}

export const makeShared = async (): Promise<Shared> => ({
  databaseUrl: await makeDatabase(),
  dataDir: fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-data-"))
})

/** Starts `bin/<entry>.ts` (start | api | runner) with the given environment and waits until ready. */
export const startService = async (
  shared: Shared,
  env: Record<string, string> = {},
  entry: "start" | "api" | "runner" = "start"
): Promise<Service> => {
  // a caller that must know the port before start (e.g. for PUBLIC_BASE_URL) passes PORT itself
  const port = env.PORT !== undefined ? Number(env.PORT) : await freePort()
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: shared.dataDir,
    DATABASE_URL: shared.databaseUrl,
    RENDER_SECONDS: "1",
    ...env
  }
  // an empty DATABASE_URL (a Shared made with databaseUrl "") runs the service's own embedded PostgreSQL
  if (fullEnv.DATABASE_URL === "") delete fullEnv.DATABASE_URL
  const child = spawn(...command(Path.join(root, `packages/server/src/bin/${entry}.ts`)), {
    cwd: root,
    env: fullEnv,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const baseUrl = `http://127.0.0.1:${port}`
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`)
        if (entry === "runner") return output.includes("cluster runner at")
        const r = await fetch(`${baseUrl}/readyz`)
        return r.status === 200
      },
      60_000,
      `service on ${baseUrl}`
    )
  } catch (e) {
    child.kill("SIGKILL")
    throw new Error(`${(e as Error).message}\n${output}`)
  }
  return {
    baseUrl,
    env: fullEnv,
    process: child,
    output: () => output,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode !== null) return child.exitCode
      child.kill(signal)
      return exited
    }
  }
}

/** Runs the operator CLI with the service's environment. */
export const admin = (env: Record<string, string>, ...args: Array<string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string; readonly json: Json }>(
    (resolve) => {
      const child = spawn(...command(Path.join(root, "packages/server/src/bin/admin.ts"), args), {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      child.on("exit", (code) => {
        let json: Json = undefined
        try {
          json = JSON.parse(code === 0 ? stdout : stderr)
        } catch {
          // left undefined: the test asserts on it
        }
        resolve({ code, stdout, stderr, json })
      })
    }
  )

/** Runs the CLI and returns its document, failing loudly otherwise. */
export const adminOk = async (env: Record<string, string>, ...args: Array<string>) => {
  const r = await admin(env, ...args)
  if (r.code !== 0) throw new Error(`admin ${args.join(" ")} failed: ${r.stderr}`)
  return r.json
}

/** A workspace with a key holding the given scopes. */
export const workspaceWithKey = async (
  env: Record<string, string>,
  opts: { plan?: string; scopes?: string; workspaceArgs?: Array<string>; keyArgs?: Array<string> } = {}
) => {
  const ws = await adminOk(
    env,
    "workspace",
    "create",
    "--name",
    "Test",
    "--plan",
    opts.plan ?? "studio",
    ...(opts.workspaceArgs ?? [])
  )
  const key = await adminOk(
    env,
    "key",
    "create",
    ws.id,
    "--scopes",
    opts.scopes ?? "media:read,media:write,renders:create,renders:read",
    ...(opts.keyArgs ?? [])
  )
  return { workspace: ws, key, secret: key.secret as string }
}

export const client = (baseUrl: string, secret?: string) => {
  const headers = (extra?: Record<string, string>) => ({
    ...(secret ? { authorization: `Bearer ${secret}` } : {}),
    ...extra
  })
  return {
    get: (path: string, extra?: Record<string, string>) => fetch(`${baseUrl}${path}`, { headers: headers(extra) }),
    del: (path: string, extra?: Record<string, string>) =>
      fetch(`${baseUrl}${path}`, { method: "DELETE", headers: headers(extra) }),
    postJson: (path: string, body: unknown, extra?: Record<string, string>) =>
      fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: headers({ "content-type": "application/json", ...extra }),
        body: typeof body === "string" ? body : JSON.stringify(body)
      }),
    upload: (
      bytes: Uint8Array,
      opts: { filename?: string; type?: string; label?: string; tags?: Array<string>; extra?: Record<string, string> } =
        {}
    ) => {
      const form = new FormData()
      form.append(
        "file",
        new Blob([bytes as Uint8Array<ArrayBuffer>], opts.type === undefined ? {} : { type: opts.type }),
        opts.filename ?? "photo"
      )
      if (opts.label !== undefined) form.append("label", opts.label)
      for (const t of opts.tags ?? []) form.append("tags", t)
      return fetch(`${baseUrl}/api/v1/media`, { method: "POST", headers: headers(opts.extra), body: form })
    }
  }
}

export const photo = (name: string) => new Uint8Array(fs.readFileSync(Path.join(root, "test/fixtures", name)))
