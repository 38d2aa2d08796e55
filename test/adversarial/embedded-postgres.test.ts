import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { childCommands, sleep } from "../renders/helpers.ts"
import { freePort, root, waitFor } from "../support/service.ts"

/**
 * The embedded PostgreSQL of `npm start` (no DATABASE_URL) lives
 * exactly as long as the service. After kill -9 of the service no server of its DATA_DIR survives; a
 * server a crashed run left behind is stopped at the next start, which then stops its own on SIGTERM
 * and SIGINT; and a server that cannot start says why, in its own words, and the start exits non-zero.
 */
const dirs: Array<string> = []
afterAll(() => {
  for (const pid of dirs.flatMap(postmasters)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

const dataDir = () => {
  const d = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-epg-"))
  dirs.push(d)
  return d
}

/**
 * Postmasters whose data directory is DATA_DIR/postgres (their command line holds `-D <dir>`). A
 * backend just forked keeps that command line until it renames itself: its parent is the postmaster,
 * so only matches whose parent is not one are counted.
 */
const postmasters = (dir: string): Array<number> => {
  const target = Path.join(dir, "postgres")
  const found = new Map<number, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      const d = argv.indexOf("-D")
      if (d === -1 || argv[d + 1] !== target || !argv[0].endsWith("postgres")) continue
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      found.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // exited while we looked
    }
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid)
}

const start = async (dir: string) => {
  const port = await freePort()
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dir,
    RENDER_SECONDS: "1"
  }
  const child = spawn(process.execPath, [Path.join(root, "packages/server/src/bin/start.ts")], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (d) => (output += d))
  child.stderr.on("data", (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`)
      return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200
    },
    90_000,
    "service with embedded PostgreSQL"
  ).catch((e) => {
    child.kill("SIGKILL")
    throw new Error(`${(e as Error).message}\n${output}`)
  })
  return { child, exited, output: () => output }
}

const gone = (dir: string, what: string) => waitFor(async () => postmasters(dir).length === 0, 30_000, what)

describe("embedded PostgreSQL lifetime", () => {
  // one data directory for the first two (initdb once: it is most of the time these take)
  let dir: string
  it("kill -9 of the service leaves no server running; the next run starts and SIGTERM stops it", async () => {
    dir = dataDir()
    const first = await start(dir)
    expect(postmasters(dir)).toHaveLength(1)
    first.child.kill("SIGKILL")
    await first.exited
    await gone(dir, "the server of a killed service to stop")

    const second = await start(dir)
    expect(postmasters(dir)).toHaveLength(1)
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
    expect(postmasters(dir)).toEqual([])
  }, 180_000)

  it("a server a crashed run left behind is stopped at the next start, and SIGINT stops the new one", async () => {
    dir ??= dataDir()
    const first = await start(dir)
    const [orphan] = postmasters(dir)
    // a crash that takes the watchdog with it (both kill -9): the server survives on its own
    const watchdogs = (await childCommands(first.child.pid!)).filter((c) => c === "sh")
    expect(watchdogs).toHaveLength(1)
    await killChildren(first.child.pid!, "sh")
    first.child.kill("SIGKILL")
    await first.exited
    await sleep(1000)
    expect(postmasters(dir)).toEqual([orphan])

    const second = await start(dir)
    expect(second.output()).toMatch(/stopping embedded PostgreSQL pid \d+/)
    const now = postmasters(dir)
    expect(now).toHaveLength(1)
    expect(now[0]).not.toBe(orphan)
    second.child.kill("SIGINT")
    await second.exited
    await gone(dir, "the server to stop after SIGINT")
  }, 180_000)

  it("a server that cannot start says why in its own words, and npm start exits non-zero", async () => {
    const dir = dataDir()
    // a data directory the server cannot use (another major version's, and as root not its own)
    fs.mkdirSync(Path.join(dir, "postgres"), { recursive: true, mode: 0o700 })
    fs.writeFileSync(Path.join(dir, "postgres", "PG_VERSION"), "9.6\n")
    const { launch } = await import("../../packages/cluster/src/database/EmbeddedPostgres.ts")
    const failed = await launch({
      databaseDir: Path.join(dir, "postgres"),
      port: await freePort(),
      persistent: true,
      initdbFlags: [],
      postgresFlags: []
    }).then(() => undefined, (e: Error) => e)
    expect(failed?.message).toMatch(/did not start in \S+\n.*(postgres|FATAL).*/)
    expect(failed?.message).not.toMatch(/printed nothing/)

    const port = await freePort()
    const child = spawn(process.execPath, [Path.join(root, "packages/server/src/bin/start.ts")], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: "/tmp", PORT: String(port), DATA_DIR: dir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
    expect(code).not.toBe(0)
    expect(output).toMatch(/did not start in \S+[\s\S]*(postgres|FATAL).*/)
  }, 120_000)
})

const killChildren = async (pid: number, comm: string) => {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      if (Number(fields[1]) === pid && name === comm) process.kill(Number(entry), "SIGKILL")
    } catch {
      // gone
    }
  }
}
