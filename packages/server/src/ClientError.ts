import { Errors } from "@pic2video/domain"
import { randomBase62 } from "@pic2video/domain/Random"
import { Buffer } from "node:buffer"
import type { Server } from "node:http"
import type { Duplex } from "node:stream"
import { errorBody } from "@pic2video/api/ErrorResponse"

/**
 * Requests Node's HTTP parser refuses before any handler sees them (a method it does not know, broken
 * framing, oversized headers) get the error shape too: 400 `invalid_request` with an `X-Request-Id`,
 * where Node would answer a bare "400 Bad Request". Timed-out or reset connections are just closed.
 */
export const answerClientErrors = (server: Server): void => {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === "ECONNRESET" || err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.destroy()
      return
    }
    console.warn(`refused a request Node's HTTP parser could not read: ${err.code ?? err.message}`)
    const failure = Errors.fail("invalid_request", "the request cannot be parsed as HTTP/1.1")
    const requestId = `req_${randomBase62(24)}`
    const body = JSON.stringify(errorBody(failure, requestId))
    socket.end(
      `HTTP/1.1 ${Errors.statusOf(failure.code)} Bad Request\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
    )
  })
}
