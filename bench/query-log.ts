/**
 * Preloaded into the service by `bench/api.ts` (`node --import ./bench/query-log.ts …`) when
 * BENCH_QUERY_LOG_PORT is set: it counts every statement the service sends to PostgreSQL (one
 * statement is one database round trip) and, between `/start` and `/stop`, records each one's text
 * and parameters, so that the benchmark's bare+pg server runs exactly the SQL the service ran, not a
 * guess. A loopback listener on that port answers:
 *
 *   GET /count   the statements sent so far (a number)
 *   GET /start   begin recording
 *   GET /stop    end recording; the statements recorded, in order: [{ text, values }]
 *   GET /connection  how the service reached the database of the statements last recorded (host, port,
 *                    user, database, password)
 *
 * It reads what the service writes to its database sockets (the frontend messages of the PostgreSQL
 * protocol: a `Query`, or an `Execute` of what the last `Bind` bound to a `Parse`d statement, is one
 * statement), whatever driver writes them: `pg` (Effect 3's @effect/sql-pg) and @effect/sql-pg 4's own
 * protocol with its cache of prepared statements alike, so that a `--before` checkout's service is
 * observed the same way. Parameters sent in binary are read back for the common types. It measures;
 * it changes nothing the service does.
 */
import * as http from "node:http"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as Path from "node:path"
import { isMainThread } from "node:worker_threads"

export type Value = string | number | boolean | null | { readonly date: string } | ReadonlyArray<Value>

export interface Statement {
  readonly text: string
  readonly values: ReadonlyArray<Value>
}

export const decode = (v: Value): unknown =>
  v !== null && typeof v === "object" && !Array.isArray(v) && "date" in v
    ? new Date(v.date)
    : Array.isArray(v)
    ? v.map(decode)
    : v

// ---- the protocol, as the service writes it ---------------------------------------------------

/** A `Parse`d statement: its text and the type of each parameter (0: the server infers it). */
interface Prepared {
  readonly text: string
  readonly types: ReadonlyArray<number>
}

/** One database socket: its startup parameters, its statements by name, what the last `Bind` bound. */
interface Wire {
  pending: Buffer | undefined
  started: boolean
  user?: string
  database?: string
  password?: string
  readonly statements: Map<string, Prepared>
  bound: Statement | undefined
}

const protocol3 = 196608
const sslRequest = 80877103

const cstring = (b: Buffer, at: number): [string, number] => {
  const end = b.indexOf(0, at)
  return [b.toString("utf8", at, end), end + 1]
}

const epoch2000 = Date.UTC(2000, 0, 1)
/** bool, bytea, int2, int4, text, varchar, int8, float4, float8, timestamp, timestamptz, uuid, json, jsonb arrays */
const arrayTypes = new Set([1000, 1001, 1005, 1007, 1009, 1015, 1016, 1021, 1022, 1115, 1185, 2951, 199, 3807])

/** A parameter sent in binary, read back by its type (the types the service's tables have). */
const binary = (oid: number, b: Buffer): Value => {
  switch (oid) {
    case 16:
      return b[0] === 1
    case 21:
      return b.readInt16BE(0)
    case 23:
    case 26:
      return b.readInt32BE(0)
    case 20:
      return String(b.readBigInt64BE(0))
    case 700:
      return b.readFloatBE(0)
    case 701:
      return b.readDoubleBE(0)
    case 1082:
      return new Date(epoch2000 + b.readInt32BE(0) * 86_400_000).toISOString().slice(0, 10)
    case 1114:
    case 1184:
      return { date: new Date(epoch2000 + Number(b.readBigInt64BE(0) / 1000n)).toISOString() }
    case 2950: {
      const h = b.toString("hex")
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    }
    case 25:
    case 19:
    case 114:
    case 1042:
    case 1043:
      return b.toString("utf8") // text, name, json, char, varchar: their bytes are their text
    case 3802:
      return b.toString("utf8", 1) // jsonb: a version byte, then the text
    case 17:
      return `\\x${b.toString("hex")}` // bytea as its text form
    default: {
      if (!arrayTypes.has(oid)) return b.toString("utf8")
      // an array: dimensions, then each element in its element type's binary form
      if (b.readInt32BE(0) === 1) {
        const element = b.readInt32BE(8)
        const count = b.readInt32BE(12)
        const out: Array<Value> = []
        let at = 20
        for (let i = 0; i < count; i++) {
          const len = b.readInt32BE(at)
          at += 4
          if (len === -1) out.push(null)
          else {
            out.push(binary(element, b.subarray(at, at + len)))
            at += len
          }
        }
        return out
      }
      return [] // no dimensions: an empty array
    }
  }
}

/** A `Bind`: the statement it names, and its parameters as the bare server can send them again. */
const bind = (w: Wire, body: Buffer): Statement | undefined => {
  const [, afterPortal] = cstring(body, 0)
  const [name, afterName] = cstring(body, afterPortal)
  let at = afterName
  const prepared = w.statements.get(name)
  if (prepared === undefined) return undefined
  const formatCount = body.readInt16BE(at)
  at += 2
  const formats: Array<number> = []
  for (let i = 0; i < formatCount; i++, at += 2) formats.push(body.readInt16BE(at))
  const count = body.readInt16BE(at)
  at += 2
  const values: Array<Value> = []
  for (let i = 0; i < count; i++) {
    const len = body.readInt32BE(at)
    at += 4
    if (len === -1) {
      values.push(null)
      continue
    }
    const bytes = body.subarray(at, at + len)
    at += len
    const format = formatCount === 0 ? 0 : formatCount === 1 ? formats[0] : formats[i]
    values.push(format === 1 ? binary(prepared.types[i] ?? 0, bytes) : bytes.toString("utf8"))
  }
  return { text: prepared.text, values }
}

const parseMessage = (body: Buffer): [string, Prepared] => {
  const [name, afterName] = cstring(body, 0)
  const [text, at] = cstring(body, afterName)
  const n = body.readInt16BE(at)
  const types: Array<number> = []
  for (let i = 0; i < n; i++) types.push(body.readInt32BE(at + 2 + i * 4))
  return [name, { text, types }]
}

const port = Number(process.env.BENCH_QUERY_LOG_PORT ?? 0)
if (isMainThread && port > 0) {
  let count = 0
  let recording: Array<Statement> | undefined
  let connection: unknown
  /** `pg`'s own idea of its connection (its password included), when the service uses `pg` */
  let pgConnection: Record<string, unknown> | undefined
  try {
    const pg = createRequire(Path.join(process.cwd(), "package.json"))("pg") as {
      Client: { prototype: { query: (...args: Array<unknown>) => unknown } }
    }
    const query = pg.Client.prototype.query
    pg.Client.prototype.query = function(
      this: { connectionParameters?: Record<string, unknown> },
      ...args: Array<unknown>
    ) {
      if (recording !== undefined && this.connectionParameters !== undefined) {
        const { database, host, password, port, user } = this.connectionParameters
        pgConnection = { database, host, password, port, user }
      }
      return query.apply(this, args)
    }
  } catch {
    // no `pg` where the service runs: its driver is @effect/sql-pg's own
  }
  /** The password of a driver that does not say it: DATABASE_URL's, else the embedded server's. */
  const envPassword = () => {
    try {
      return decodeURIComponent(new URL(process.env.DATABASE_URL ?? "").password) || "postgres"
    } catch {
      return "postgres"
    }
  }

  const wires = new WeakMap<net.Socket, Wire | null>()
  const message = (socket: net.Socket, w: Wire, type: number, body: Buffer) => {
    switch (type) {
      case 0x50: { // Parse
        const [name, prepared] = parseMessage(body)
        w.statements.set(name, prepared)
        return
      }
      case 0x42: // Bind
        w.bound = recording === undefined ? undefined : bind(w, body)
        return
      case 0x43: // Close: a statement no longer prepared
        if (body[0] === 0x53) w.statements.delete(cstring(body, 1)[0])
        return
      case 0x70: // PasswordMessage: a cleartext password is the password
        if (w.password === undefined && body.indexOf(0) === body.length - 1) {
          w.password = body.toString("utf8", 0, body.length - 1)
        }
        return
      case 0x45: // Execute
      case 0x51: { // Query
        count++
        if (recording === undefined) return
        const statement = type === 0x51 ? { text: cstring(body, 0)[0], values: [] } : w.bound
        if (statement === undefined) return
        recording.push(statement)
        connection = pgConnection ?? {
          host: socket.remoteAddress,
          port: socket.remotePort,
          user: w.user,
          database: w.database,
          password: w.password ?? envPassword()
        }
        return
      }
    }
  }
  /** The frontend messages in what a socket writes; a socket whose first bytes are no startup is let be. */
  const observe = (socket: net.Socket, chunk: Buffer) => {
    let w = wires.get(socket)
    if (w === null) return
    if (w === undefined) {
      const code = chunk.length >= 8 ? chunk.readInt32BE(4) : -1
      if (code !== protocol3 && code !== sslRequest) return void wires.set(socket, null)
      w = { pending: undefined, started: false, statements: new Map(), bound: undefined }
      wires.set(socket, w)
    }
    let b = w.pending === undefined ? chunk : Buffer.concat([w.pending, chunk])
    w.pending = undefined
    while (true) {
      if (!w.started) {
        if (b.length < 8) break
        const len = b.readInt32BE(0)
        if (b.length < len) break
        const code = b.readInt32BE(4)
        if (code === sslRequest) {
          // what follows is TLS, which this does not read
          if (b.length > len) return void wires.set(socket, null)
          b = b.subarray(len)
          if (b.length === 0) return
          continue
        }
        const params = b.subarray(8, len).toString("utf8").split("\0")
        for (let i = 0; i + 1 < params.length; i += 2) {
          if (params[i] === "user") w.user = params[i + 1]
          if (params[i] === "database") w.database = params[i + 1]
        }
        w.database ??= w.user
        w.started = true
        b = b.subarray(len)
        continue
      }
      if (b.length < 5) break
      const len = b.readInt32BE(1)
      if (b.length < 1 + len) break
      message(socket, w, b[0], b.subarray(5, 1 + len))
      b = b.subarray(1 + len)
    }
    if (b.length > 0) {
      // a TLS record (after an accepted SSLRequest) is no frontend message
      if (!w.started && b[0] === 0x16) return void wires.set(socket, null)
      w.pending = Buffer.from(b)
    }
  }
  const toBuffer = (chunk: unknown, encoding?: BufferEncoding) =>
    Buffer.isBuffer(chunk)
      ? chunk
      : chunk instanceof Uint8Array
      ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      : Buffer.from(String(chunk), encoding)
  const proto = net.Socket.prototype as unknown as {
    _write: (chunk: unknown, encoding: BufferEncoding, cb: (e?: Error | null) => void) => void
    _writev: (chunks: Array<{ chunk: unknown; encoding: BufferEncoding }>, cb: (e?: Error | null) => void) => void
  }
  const write = proto._write
  const writev = proto._writev
  proto._write = function(this: net.Socket, chunk, encoding, cb) {
    try {
      observe(this, toBuffer(chunk, encoding))
    } catch {
      wires.set(this, null) // not what this reads: let it be
    }
    return write.call(this, chunk, encoding, cb)
  }
  proto._writev = function(this: net.Socket, chunks, cb) {
    try {
      for (const c of chunks) observe(this, toBuffer(c.chunk, c.encoding))
    } catch {
      wires.set(this, null)
    }
    return writev.call(this, chunks, cb)
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
