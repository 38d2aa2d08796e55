import { Errors } from "@pic2video/domain"
import { randomBase62 } from "@pic2video/domain/Random"
import { Buffer } from "node:buffer"
import type { Server } from "node:http"
import type { Duplex } from "node:stream"

/**
 * Requests Node's HTTP parser refuses before any handler sees them (a method it does not know, broken
 * framing, oversized headers, a request cut off mid-headers) get the error shape too: 400
 * `invalid_request` with an `X-Request-Id`, where Node would answer a bare "400 Bad Request". Timed-out
 * or reset connections are just closed.
 *
 * Any client can cause these at will and unauthenticated (2,000 partial requests closing at once
 * wrote 2,000 lines in 4 s), so they are logged at a bounded rate: at most `logsPerMinute` lines a
 * minute, then one line saying how many more there were. Every one, logged or not, goes to
 * `onProtocolError` — the point where the metric counting client protocol errors is fed.
 */
const logsPerMinute = 10

interface ClientErrorOptions {
  /** Called for every refused request, logged or not, with the parser's code (`HPE_INVALID_METHOD`, …). */
  readonly onProtocolError?: (code: string) => void
  /** Where the bounded lines go (console.warn). */
  readonly log?: (line: string) => void
  readonly now?: () => number
}

/** At most `perMinute` lines in each minute; the rest are counted, and said in one line when the minute ends. */
export const boundedLog = (perMinute: number, log: (line: string) => void, now: () => number = Date.now) => {
  let windowStart = -Infinity
  let logged = 0
  let suppressed = 0
  const flush = () => {
    if (suppressed > 0) {
      log(`${suppressed} more requests Node's HTTP parser could not read in the last minute (not logged one by one)`)
    }
    suppressed = 0
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  return (line: string) => {
    const t = now()
    if (t - windowStart >= 60_000) {
      flush()
      windowStart = t
      logged = 0
    }
    if (logged < perMinute) {
      logged++
      log(line)
      return
    }
    suppressed++
    // the summary comes at the minute's end even when nothing more arrives
    if (timer === undefined) {
      timer = setTimeout(() => {
        timer = undefined
        flush()
      }, Math.max(0, windowStart + 60_000 - t))
      timer.unref?.()
    }
  }
}

export const answerClientErrors = (server: Server, options: ClientErrorOptions = {}): void => {
  const warn = boundedLog(logsPerMinute, options.log ?? ((line) => console.warn(line)), options.now)
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === "ECONNRESET" || err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.destroy()
      return
    }
    const code = err.code ?? err.message
    options.onProtocolError?.(code)
    warn(`refused a request Node's HTTP parser could not read: ${code}`)
    const failure = Errors.fail("invalid_request", "the request cannot be parsed as HTTP/1.1")
    const requestId = `req_${randomBase62(24)}`
    const body = JSON.stringify(Errors.errorBody(failure, requestId))
    socket.end(
      `HTTP/1.1 ${Errors.statusOf(failure.code)} Bad Request\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
    )
  })
}
