/**
 * Preloaded into the service by `bench/api.ts` (`node --import ./bench/query-log.ts …`) when
 * BENCH_QUERY_LOG_PORT is set: it counts every statement the service's `pg` clients send (one
 * statement is one database round trip: @effect/sql-pg sends each on its own) and, between
 * `/start` and `/stop`, records each one's text and parameters, so that the benchmark's bare+pg
 * server runs exactly the SQL the service ran, not a guess. A loopback listener on that port answers:
 *
 *   GET /count   the statements sent so far (a number)
 *   GET /start   begin recording
 *   GET /stop    end recording; the statements recorded, in order: [{ text, values }]
 *   GET /connection  how the service reached the database of the statements last recorded (host, port,
 *                    user, database, password)
 *
 * `pg` is patched where the service loads it from (its working directory), so a `--before` checkout's
 * service is observed the same way. It measures; it changes nothing the service does.
 */
import * as http from "node:http"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { isMainThread } from "node:worker_threads"

export type Value = string | number | boolean | null | { readonly date: string } | ReadonlyArray<Value>

export interface Statement {
  readonly text: string
  readonly values: ReadonlyArray<Value>
}

/** Parameters as JSON, Dates tagged so that a replay sends them as the service did. */
const encode = (v: unknown): Value =>
  v instanceof Date
    ? { date: v.toISOString() }
    : Array.isArray(v)
    ? v.map(encode)
    : v === undefined
    ? null
    : typeof v === "bigint"
    ? String(v)
    : (v as Value)

export const decode = (v: Value): unknown =>
  v !== null && typeof v === "object" && !Array.isArray(v) && "date" in v
    ? new Date(v.date)
    : Array.isArray(v)
    ? v.map(decode)
    : v

const port = Number(process.env.BENCH_QUERY_LOG_PORT ?? 0)
if (isMainThread && port > 0) {
  const pg = createRequire(Path.join(process.cwd(), "package.json"))("pg") as {
    Client: { prototype: { query: (...args: Array<unknown>) => unknown } }
  }
  let count = 0
  let recording: Array<Statement> | undefined
  let connection: unknown
  const query = pg.Client.prototype.query
  pg.Client.prototype.query = function(this: { connectionParameters?: Record<string, unknown> }, ...args: Array<unknown>) {
    count++
    if (recording !== undefined) {
      // the database of the statements recorded (embedded PostgreSQL's own setup used another one)
      if (this.connectionParameters !== undefined) {
        const { database, host, password, port, user } = this.connectionParameters
        connection = { database, host, password, port, user }
      }
      const [config, values] = args
      const text = typeof config === "string" ? config : (config as { text: string }).text
      const params = typeof config === "object" && config !== null && "values" in config ? (config as { values: unknown }).values : values
      recording.push({ text, values: Array.isArray(params) ? params.map(encode) : [] })
    }
    return query.apply(this, args)
  }
  const server = http.createServer((req, res) => {
    let answer: unknown
    switch (req.url) {
      case "/count":
        answer = count
        break
      case "/start":
        recording = []
        answer = true
        break
      case "/stop":
        answer = recording ?? []
        recording = undefined
        break
      case "/connection":
        answer = connection ?? null
        break
    }
    res.writeHead(answer === undefined ? 404 : 200, { "content-type": "application/json" })
    res.end(JSON.stringify(answer ?? null))
  })
  server.listen(port, "127.0.0.1")
  server.unref()
}
