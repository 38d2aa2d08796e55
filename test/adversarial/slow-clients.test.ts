import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxUploadBytes } from "../foundation/photos.ts"
import { type Target, target } from "./support.ts"

/**
 * Finding 3: slow clients are bounded (docs/contract.md H3). With the limits set small here (headers 2 s,
 * no byte for 2 s, whole request 4 s): headers sent a byte at a time, a body that stalls, and a body
 * trickled so it never stalls are each cut off in bounded time; a 413 closes the connection whether
 * the body came fast or slowly.
 */
let t: Target
let port: number

beforeAll(async () => {
  t = await target({
    HTTP_HEADERS_TIMEOUT_SECONDS: "2",
    HTTP_BODY_TIMEOUT_SECONDS: "2",
    HTTP_REQUEST_TIMEOUT_SECONDS: "4"
  })
  port = Number(new URL(t.service.baseUrl).port)
})
afterAll(() => t?.close())

interface Conn {
  readonly socket: net.Socket
  readonly opened: number
  /** resolves with the ms from open to the server's end or close, and everything it sent */
  readonly ended: Promise<{ ms: number; text: string }>
}

const connect = () =>
  new Promise<Conn>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let text = ""
    socket.on("data", (d) => (text += d.toString("latin1")))
    socket.on("error", () => {})
    const opened = Date.now()
    const ended = new Promise<{ ms: number; text: string }>((r) => {
      const done = () => r({ ms: Date.now() - opened, text })
      socket.once("end", done)
      socket.once("close", done)
    })
    socket.once("connect", () => resolve({ socket, opened, ended }))
    socket.once("error", reject)
  })

/** Writes `chunk` every `everyMs` until the server ends the connection or `maxMs` passes. */
const trickle = (c: Conn, chunk: string, everyMs: number, maxMs: number) => {
  let stopped = false
  void c.ended.then(() => (stopped = true))
  const timer = setInterval(() => {
    if (stopped || Date.now() - c.opened > maxMs) return clearInterval(timer)
    c.socket.write(chunk)
  }, everyMs)
  return c.ended.finally(() => clearInterval(timer))
}

const auth = () => `Authorization: Bearer ${t.main.secret}\r\n`

describe("slow clients", () => {
  it("headers sent a byte every 500 ms are cut off by the header timeout", async () => {
    const c = await connect()
    c.socket.write("POST /api/v1/renders HTTP/1.1\r\nHost: x\r\n")
    const { ms } = await trickle(c, "X", 500, 30_000)
    expect(ms).toBeLessThan(12_000)
  }, 40_000)

  it("a body that stops arriving is cut off when no byte has come for the body timeout", async () => {
    const c = await connect()
    c.socket.write(
      `POST /api/v1/renders HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"media_id":`
    )
    const { ms } = await c.ended
    expect(ms).toBeLessThan(12_000)
  }, 40_000)

  it("a body trickled a byte every 500 ms (never stalling) is cut off by the whole-request ceiling", async () => {
    const c = await connect()
    c.socket.write(
      `POST /api/v1/renders HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n`
    )
    const { ms } = await trickle(c, " ", 500, 60_000)
    // the ceiling (4 s) is checked every 500 ms; the body timeout (2 s) never fires on a steady trickle
    expect(ms).toBeGreaterThanOrEqual(3_500)
    expect(ms).toBeLessThan(15_000)
  }, 60_000)

  for (const [pace, chunk, everyMs] of [["fast", 4 * 1024 * 1024, 0], ["slowly", 256 * 1024, 30]] as const) {
    it(
      `an upload over 15 MiB sent ${pace} is 413 with Connection: close, and the server ends the connection`,
      async () => {
        const boundary = "----p2vslow"
        const head =
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`
        const tail = `\r\n--${boundary}--\r\n`
        const size = maxUploadBytes + 1
        const length = head.length + size + tail.length
        const c = await connect()
        c.socket.write(
          `POST /api/v1/media HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
            `Content-Length: ${length}\r\n\r\n${head}`
        )
        const filler = Buffer.alloc(chunk, 0x41)
        let sent = 0
        let stopped = false
        void c.ended.then(() => (stopped = true))
        while (sent < size && !stopped && !c.socket.destroyed) {
          const n = Math.min(chunk, size - sent)
          if (!c.socket.write(filler.subarray(0, n))) {
            await new Promise((r) => c.socket.once("drain", r).once("close", r))
          }
          sent += n
          if (everyMs > 0) await new Promise((r) => setTimeout(r, everyMs))
        }
        if (!stopped && !c.socket.destroyed) c.socket.write(tail)
        const { text, ms } = await c.ended
        const headEnd = text.indexOf("\r\n\r\n")
        const headers = text.slice(0, headEnd).toLowerCase()
        expect(headers, text.slice(0, 500)).toMatch(/^http\/1\.1 413/)
        expect(headers).toMatch(/\r\nconnection: close\r\n/)
        expect(JSON.parse(text.slice(headEnd + 4)).error.code).toBe("payload_too_large")
        expect(ms).toBeLessThan(30_000)
      },
      60_000
    )
  }
})
