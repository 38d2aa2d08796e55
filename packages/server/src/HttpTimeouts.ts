import { Config } from "effect"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"

/**
 * How long a client may take (docs/contract.md H3), so a slow or stalled client cannot hold a
 * connection, a fiber or a temp file for minutes:
 * - headers: the request line and headers must be complete within HTTP_HEADERS_TIMEOUT_SECONDS (10);
 * - body progress: a connection on which no byte moves either way for HTTP_BODY_TIMEOUT_SECONDS (30) is
 *   closed (a stalled body, an idle socket) when the wait is the client's: the server is waiting for
 *   body bytes it has asked for, or the connection is idle between requests, or the answer is being
 *   sent. A request whose body has arrived in full (the server is working on it: waiting for a decode
 *   slot, the database) or whose bytes wait unread in the server's buffer (the server is slow to take
 *   them: spooling to a busy disk) is not the client's stall and is not cut off; under load ten
 *   concurrent uploads lost connections that way (EPIPE mid-body, "other side closed" while waiting);
 * - whole request: the body must be complete within HTTP_REQUEST_TIMEOUT_SECONDS (180) of the first
 *   byte: a 15 MiB upload at about 85 KiB/s (0.7 Mbit/s) still fits, a body trickled a byte at a time
 *   does not.
 * - idle between requests: the answer advertises `Keep-Alive: timeout=N` (HTTP_KEEP_ALIVE_SECONDS, 5),
 *   and an idle connection is kept open twice that long. A client that honours the header (Node's
 *   Agent closes it a second early, fetch/undici a second or two early, browsers likewise) stops
 *   using it well before the server closes it, so it never sends a request on a connection the server
 *   is closing: with Node's default (advertise 5, close at 6) one poll in ~15,000 failed at the
 *   socket under load.
 * A connection past any of these is closed without an answer (there is no status a client that
 * stopped sending would read). Tests set small values.
 */
export interface HttpTimeouts {
  readonly headersMillis: number
  readonly bodyMillis: number
  readonly requestMillis: number
  /** advertised in `Keep-Alive: timeout=`, whole seconds */
  readonly keepAliveMillis: number
}

const seconds = (name: string, fallback: number) =>
  Config.Number(name).pipe(Config.withDefault(fallback), Config.map((s) => Math.max(1, Math.round(s * 1000))))

export const config: Config.Config<HttpTimeouts> = Config.all({
  headersMillis: seconds("HTTP_HEADERS_TIMEOUT_SECONDS", 10),
  bodyMillis: seconds("HTTP_BODY_TIMEOUT_SECONDS", 30),
  requestMillis: seconds("HTTP_REQUEST_TIMEOUT_SECONDS", 180),
  keepAliveMillis: Config.map(
    seconds("HTTP_KEEP_ALIVE_SECONDS", 5),
    (ms) => Math.max(1000, Math.round(ms / 1000) * 1000)
  )
})

/** Node checks the header and request deadlines on a timer; it is this often, so they hold to a second. */
export const checkingIntervalMillis = (t: HttpTimeouts) =>
  Math.max(100, Math.min(1000, Math.floor(t.headersMillis / 4)))

export const apply = (server: Server, t: HttpTimeouts): void => {
  // Node requires headersTimeout ≤ requestTimeout
  server.requestTimeout = t.requestMillis
  server.headersTimeout = Math.min(t.headersMillis, t.requestMillis)
  // advertised as `Keep-Alive: timeout=${keepAliveTimeout / 1000}`; Node closes the idle connection
  // after keepAliveTimeout + keepAliveTimeoutBuffer: twice the advertised time
  server.keepAliveTimeout = t.keepAliveMillis
  server.keepAliveTimeoutBuffer = t.keepAliveMillis
  server.setTimeout(t.bodyMillis)
  // the exchange in progress on each connection, to tell whose wait a quiet socket is
  const current = new WeakMap<Socket, { readonly req: IncomingMessage; readonly res: ServerResponse }>()
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const exchange = { req, res }
    current.set(req.socket, exchange)
    res.once("close", () => {
      if (current.get(req.socket) === exchange) current.delete(req.socket)
    })
  })
  // With a listener here Node leaves the socket to us (its default is to destroy it).
  server.on("timeout", (socket: Socket) => {
    // look again after another period: a client that stalls once the server has caught up is cut then
    if (serverIsWorking(current.get(socket))) return socket.setTimeout(t.bodyMillis)
    // Timers run before the loop reads sockets: when the loop was busy past the deadline, a request
    // the client sent in time may be waiting unread. Close only after the sockets were read, and only
    // if nothing came (destroying a socket with unread bytes resets it: the client's request fails).
    // Bytes read re-arm the socket's timer, so a connection that did get some is looked at again.
    const read = socket.bytesRead
    setImmediate(() => {
      if (!socket.destroyed && socket.bytesRead === read && current.get(socket) === undefined) socket.destroy()
    })
  })
}

/** The quiet is the server's: the request is in (or its bytes wait unread), and no answer has started. */
const serverIsWorking = (exchange: { readonly req: IncomingMessage; readonly res: ServerResponse } | undefined) =>
  exchange !== undefined && !exchange.res.headersSent && !exchange.res.writableEnded &&
  (exchange.req.complete || exchange.req.readableLength > 0)
