import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/**
 * TEST CODE: a small HTTP server on loopback that answers as a hostile or broken Pic-to-Video
 * service would, for the client and `p2v` hardening tests (issue 24 item 4, issue 26). It is not the
 * service and stands in for no part of it: each test gives it a handler that misbehaves one way.
 */
export interface Seen {
  readonly method: string
  readonly url: string
  /** Which connection (1, 2, …) the request came on, and its number on that connection. */
  readonly socket: number
  readonly onSocket: number
}

export interface Hostile {
  readonly baseUrl: string
  readonly seen: Array<Seen>
  /** Bytes the server has handed to its sockets (headers included): what a client was sent. */
  readonly written: () => number
  readonly close: () => Promise<void>
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void

export const hostile = async (handler: Handler): Promise<Hostile> => {
  const sockets = new Set<Socket>()
  const ids = new WeakMap<Socket, { id: number; requests: number }>()
  let closedBytes = 0
  let next = 0
  const seen: Array<Seen> = []
  const server = http.createServer((req, res) => {
    const s = ids.get(req.socket)!
    s.requests++
    const one = { method: req.method ?? "", url: req.url ?? "", socket: s.id, onSocket: s.requests }
    seen.push(one)
    handler(req, res, one)
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    ids.set(socket, { id: ++next, requests: 0 })
    socket.on("close", () => {
      sockets.delete(socket)
      closedBytes += socket.bytesWritten
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    written: () => closedBytes + [...sockets].reduce((n, s) => n + s.bytesWritten, 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}

// ---- ways to answer -------------------------------------------------------------------------

/** One whole answer. */
export const answer = (res: http.ServerResponse, status: number, body: string, headers: http.OutgoingHttpHeaders = {}) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
  res.end(body)
}

/**
 * A body that never ends (or ends after `total` bytes): `chunk` again and again, as fast as the
 * client takes it, until the client goes away.
 */
export const pour = (res: http.ServerResponse, chunk: Buffer, total = Infinity) => {
  let sent = 0
  const more = () => {
    while (sent < total && !res.destroyed) {
      const piece = total - sent >= chunk.length ? chunk : chunk.subarray(0, total - sent)
      sent += piece.length
      if (!res.write(piece)) return void res.once("drain", more)
    }
    if (!res.destroyed) res.end()
  }
  res.on("error", () => {})
  more()
}

export const usageJson = JSON.stringify({ object: "usage", cycle_start: "2026-01-01T00:00:00.000Z", aesthetic_quotes: { used: 3, included: 10 } })

export const renderJson = (id: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    object: "render",
    id,
    type: "aesthetic_quote",
    status: "completed",
    progress: 100,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:01.000Z",
    completed_at: "2026-01-01T00:00:01.000Z",
    asset: { url: `http://127.0.0.1/api/v1/renders/${id}/download`, expires_at: null, content_type: "video/mp4", width: 1080, height: 1920, byte_size: 10, duration_sec: 1 },
    error: null,
    idempotency_key: null,
    metadata: {},
    ...fields
  })

export const mediaJson = (id: string, label: string) => ({
  object: "media",
  id,
  created_at: "2026-01-01T00:00:00.000Z",
  label,
  tags: [],
  width: 10,
  height: 10,
  mime_type: "image/png",
  file_size_bytes: 100,
  preview_url: `http://127.0.0.1/api/v1/media/${id}/preview`,
  preview_expires_at: null
})
