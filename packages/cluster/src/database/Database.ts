import { PgClient, PgConnection, PgPool, PgTypes } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Option, Predicate, Redacted, Result, Scope, Stream } from "effect"
import { SqlMessageStorage, SqlRunnerStorage } from "effect/cluster"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Net from "node:net"
import { AppConfig } from "../config/AppConfig.ts"
import * as Embedded from "./EmbeddedPostgres.ts"
import { migrations } from "./migrations/Migrations.ts"

/** The connection pool's occupancy, read when /metrics is scraped (`p2v_db_pool_connections`). */
interface PoolUsage {
  readonly used: number
  readonly idle: number
  /** queries waiting for a connection */
  readonly pending: number
}

export class DatabasePool extends Context.Service<DatabasePool, { readonly usage: () => PoolUsage }>()(
  "pic2video/DatabasePool"
) {}

const maxConnections = 20

/**
 * Byte counts and budgets are bigint columns; every value we store fits a double exactly. The
 * driver decodes int8 as a bigint, so this client's registry reads it as a number instead (int8[]
 * elements too) whenever the number is exact, and still writes the bigints the driver makes of
 * integers past int4. A value past 2^53 stays a bigint: the cluster's tables (same client) key
 * their messages by 64-bit snowflakes and turn them into strings, which a double would round.
 */
const int8AsNumber = (): PgTypes.Registry => {
  const types = PgTypes.makeRegistry()
  const read = (bytes: Uint8Array, offset: number, size: number) => {
    if (size !== 8) return Result.fail(new PgTypes.CodecError({ message: `int8 of ${size} bytes` }))
    const high = (bytes[offset] << 24) | (bytes[offset + 1] << 16) | (bytes[offset + 2] << 8) | bytes[offset + 3]
    const low = ((bytes[offset + 4] << 24) | (bytes[offset + 5] << 16) | (bytes[offset + 6] << 8) | bytes[offset + 7])
      >>> 0
    const value = high * 4294967296 + low
    return Result.succeed<number | bigint>(
      Number.isSafeInteger(value) ? value : (BigInt(high) << BigInt(32)) + BigInt(low)
    )
  }
  types.register<number | bigint>(PgTypes.OID.int8, {
    read,
    decode: (bytes) => read(bytes, 0, bytes.length),
    encode: (value) => {
      if (typeof value === "number" && !Number.isSafeInteger(value)) {
        return Result.fail(new PgTypes.CodecError({ message: `Expected an integer for int8, received ${value}` }))
      }
      const bytes = new Uint8Array(8)
      new DataView(bytes.buffer).setBigInt64(0, BigInt(value))
      return Result.succeed(bytes)
    }
  })
  return types
}

/** Where the URL says the server is, as the driver reads it (for the socket factory below). */
const serverOf = (url: string): { readonly host: string; readonly port: number } | undefined => {
  try {
    const u = new URL(url)
    let host = u.hostname.startsWith("[") && u.hostname.endsWith("]")
      ? u.hostname.slice(1, -1)
      : decodeURIComponent(u.hostname)
    let port = u.port === "" ? 5432 : Number(u.port)
    const hostParam = u.searchParams.get("host")
    const portParam = u.searchParams.get("port")
    if (hostParam !== null) host = hostParam
    if (portParam !== null) port = Number(portParam)
    return { host: host === "" ? "localhost" : host, port }
  } catch {
    return undefined
  }
}

/**
 * The pool's counts. The driver's pool keeps its own to itself, so they are counted here: `used`
 * and `pending` around every checkout (a statement, a transaction), `open` on the sockets the
 * driver opens through our factory (a connection's, or for a moment a cancel request's).
 */
const makeCounts = () => ({ open: 0, used: 0, pending: 0 })
type Counts = ReturnType<typeof makeCounts>

const counted = (pool: PgPool.PgPool, counts: Counts) => {
  // a scoped checkout (transactions, streams): waiting counts as pending, holding as used
  const lease = (acquire: Effect.Effect<PgConnection.PgConnection, SqlError, Scope.Scope>) =>
    Effect.suspend(() => {
      counts.pending++
      return acquire.pipe(
        Effect.onExit(() => Effect.sync(() => counts.pending--)),
        Effect.tap(() =>
          Effect.uninterruptible(Effect.andThen(
            Effect.sync(() => counts.used++),
            Effect.addFinalizer(() => Effect.sync(() => counts.used--))
          ))
        )
      )
    })
  // a statement's checkout: the driver lends the connection for the one effect
  const use = <A, E, R>(f: (connection: PgConnection.PgConnection) => Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      let waiting = true
      counts.pending++
      const stopWaiting = Effect.sync(() => {
        if (waiting) {
          waiting = false
          counts.pending--
        }
      })
      return pool.use((connection) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.andThen(
            Effect.andThen(stopWaiting, Effect.sync(() => counts.used++)),
            Effect.ensuring(restore(f(connection)), Effect.sync(() => counts.used--))
          )
        )
      ).pipe(Effect.ensuring(stopWaiting))
    })
  return { get: lease(pool.get), reserve: lease(pool.reserve), use }
}

/** One connection as @effect/sql sees it (as PgClient.make's own, which does not take a pool from outside). */
const connectionOf = (connection: PgConnection.PgConnection): Connection => {
  const run = (sql: string, params: ReadonlyArray<unknown>, prepare = true) =>
    Effect.map(connection.query(sql, params, prepare), (result) => result.rows)
  return {
    execute: (sql, params, transformRows) =>
      transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params),
    executeRaw: (sql, params) => connection.query(sql, params),
    executeValues: (sql, params) => connection.queryValues(sql, params),
    executeValuesUnprepared: (sql, params) => connection.queryValues(sql, params, false),
    executeUnprepared: (sql, params, transformRows) =>
      transformRows ? Effect.map(run(sql, params, false), transformRows) : run(sql, params, false),
    executeStream: (sql, params, transformRows) => {
      const stream = connection.stream(sql, params)
      // (no client here sets a row transform; a row at a time keeps the types without a cast)
      return transformRows ? Stream.map(stream, (row) => transformRows([row])[0]) : stream
    }
  }
}

/** PostgreSQL answers `ROLLBACK` to a `COMMIT` of an aborted transaction. */
const commit = (conn: Connection): Effect.Effect<void, SqlError> =>
  Effect.flatMap(
    conn.executeRaw("COMMIT", []),
    (result) =>
      Predicate.hasProperty(result, "command") && result.command === "ROLLBACK"
        ? Effect.fail(
          new SqlError({
            reason: new UnknownError({
              cause: new Error("COMMIT rolled back an aborted transaction"),
              message: "PgClient: COMMIT rolled back an aborted transaction",
              operation: "commit"
            })
          })
        )
        : Effect.void
  )

const liveClock: Clock.Clock = Clock.Clock.defaultValue()

const PgJson = Statement.custom<PgClient.PgCustom>("PgJson")

/**
 * PgClient.make over a pool whose checkouts we count: the same client (compiler, transactions,
 * prepared statements), built from the driver's public parts.
 */
const makeClient = (options: PgClient.PgPoolConfig, counts: Counts) =>
  Effect.gen(function*() {
    // The pool's idle sweep runs every idleTimeout on the clock it is made with: on a test's clock a
    // jump of days would run it once a minute all the way (TestClock.setTime hangs on it). Its
    // connections are real sockets, so it keeps real time, as node-postgres' timers did.
    const pool = counted(yield* Effect.provideService(PgPool.make(options), Clock.Clock, liveClock), counts)
    const server = options.url === undefined ? undefined : serverOf(Redacted.value(options.url))
    const acquirer = Effect.map(pool.get, connectionOf)
    const client = yield* SqlClient.make({
      driver: "pg",
      acquirer,
      borrower: (f) => pool.use((connection) => f(connectionOf(connection))),
      transactionAcquirer: Effect.map(pool.reserve, connectionOf),
      // PostgreSQL prepares transaction control like any other statement
      prepareTransactionControls: true,
      commit,
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
      compiler: PgClient.makeCompiler(undefined, options.transformJson),
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", options.database ?? "postgres"],
        ["server.address", server?.host ?? "localhost"],
        ["server.port", server?.port ?? 5432]
      ]
    })
    return Object.assign(client, {
      [PgClient.TypeId]: PgClient.TypeId,
      config: options,
      json: (value: unknown) => Statement.fragment([PgJson(value, undefined, undefined)]),
      listen: (channel: string) => Effect.flatMap(pool.reserve, (connection) => connection.listen(channel)),
      notify: (channel: string, payload: string) =>
        Effect.asVoid(Effect.scoped(Effect.flatMap(acquirer, (conn) =>
          conn.executeRaw(`SELECT pg_notify($1, $2)`, [channel, payload]))))
    }) satisfies PgClient.PgClient
  })

/**
 * The SqlClient every part of the service shares: DATABASE_URL when set, else the embedded server.
 * timestamptz columns decode to Dates, int8 to numbers, bytea to Uint8Arrays, json(b) parsed; rows
 * keep their snake_case column names. Prepared statements are cached per connection (the driver's
 * default). The pool is built here so its occupancy can be read.
 */
export const layerClient = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const url = Option.isSome(config.databaseUrl)
      ? config.databaseUrl.value
      : Redacted.make(yield* Embedded.connectOrStart(config.dataDir))
    const counts = makeCounts()
    const server = serverOf(Redacted.value(url))
    const options: PgClient.PgPoolConfig = {
      url,
      maxConnections,
      types: int8AsNumber(),
      prepare: true,
      // what pg_stat_activity shows an operator for these connections
      applicationName: "pic2video",
      // the driver's own connect, through a socket we can count (the URL's TLS settings still apply)
      stream: server === undefined ? undefined : () => {
        const socket = server.host.startsWith("/")
          ? Net.connect({ path: `${server.host}/.s.PGSQL.${server.port}` })
          : Net.connect({ host: server.host, port: server.port, noDelay: true })
        counts.open++
        socket.once("close", () => counts.open--)
        return socket
      }
    }
    const usage = (): PoolUsage => ({
      used: counts.used,
      idle: Math.max(0, counts.open - counts.used),
      pending: counts.pending
    })
    const acquire = Effect.tap(
      makeClient(options, counts),
      // connect now, so a database that cannot be reached stops the start here
      (client) =>
        client`SELECT 1`.pipe(
          Effect.timeoutOrElse({
            duration: "5 seconds",
            orElse: () =>
              Effect.fail(
                new SqlError({
                  reason: new ConnectionError({
                    cause: new Error("Connection timed out"),
                    message: "PgClient: Connection timed out",
                    operation: "connect"
                  })
                })
              )
          })
        )
    )
    return Layer.merge(PgClient.layerFrom(acquire), Layer.succeed(DatabasePool, { usage }))
  })
)

/**
 * The session-level advisory lock every process takes around its schema set-up (one bigint key, so
 * it never meets the cluster's shard locks, which use the two-int form). Any 64-bit number would do.
 */
const schemaLockKey = "7021850425164105"

/**
 * Runs `effect` while holding the installation's schema lock, on a connection reserved for it, so
 * processes started at the same instant set the schema up one after the other. The lock
 * is released at the end, or by PostgreSQL if the process dies holding it.
 */
export const withSchemaLock = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.gen(function*() {
    const conn = yield* (yield* SqlClient.SqlClient).reserve
    yield* Effect.acquireRelease(
      conn.executeRaw(`SELECT pg_advisory_lock(${schemaLockKey})`, []),
      () => Effect.ignore(conn.executeRaw(`SELECT pg_advisory_unlock(${schemaLockKey})`, []))
    )
    return yield* effect
  }))

/**
 * Migrations are static imports (fromRecord): file loaders break under test runners. The table and
 * its rows are the ones Effect 3's migrator wrote, so a database made by 0.1.0 carries on from
 * where it is.
 *
 * The cluster's tables (its runner and message storage) are made here too, under the same lock and
 * with the cluster's own migrations and history tables: when the cluster's layers run them again at
 * start they find nothing to do, so no two processes ever run DDL at once. Each migrator also locks
 * its history table, but creating that table, and the first migrations of a fresh database, raced
 * (`relation "pic2video_migrations" already exists`, `pg_type_typname_nsp_index`).
 */
const migrateAll = withSchemaLock(Effect.gen(function*() {
  yield* Migrator.make({})({
    loader: Migrator.fromRecord(migrations),
    table: "pic2video_migrations"
  })
  yield* Migrator.make({})({ loader: SqlRunnerStorage.migrations({}), table: "cluster_runner_migrations" })
  yield* Migrator.make({})({ loader: SqlMessageStorage.migrations({}), table: "cluster_migrations" })
}))

const layerMigrations = Layer.effectDiscard(migrateAll)

/** Client with the schema brought up to date before anything else uses it. */
export const layer = layerMigrations.pipe(Layer.provideMerge(layerClient))
