import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/**
 * TEST CODE: a small HTTP server on loopback that answers as a hostile or broken Pic-to-Video
 * service would, for the client and `p2v` hardening tests. It is not the
 * service and stands in for no part of it: each test gives it a handler (`scenarios`) that misbehaves
 * one way. Run by hand to see what a client does against one:
 *
 *   node test/adversarial/hostile-server.ts endless-json      # prints its address, serves until Ctrl-C
 *   P2V_API_KEY=x P2V_BASE_URL=http://127.0.0.1:PORT node packages/client/src/bin/p2v.ts usage
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
export const answer = (
  res: http.ServerResponse,
  status: number,
  body: string,
  headers: http.OutgoingHttpHeaders = {}
) => {
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

export const usageJson = JSON.stringify({
  object: "usage",
  cycle_start: "2026-01-01T00:00:00.000Z",
  aesthetic_quotes: { used: 3, included: 10 }
})

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
    asset: {
      url: `http://127.0.0.1/api/v1/renders/${id}/download`,
      expires_at: null,
      content_type: "video/mp4",
      width: 1080,
      height: 1920,
      byte_size: 10,
      duration_sec: 1
    },
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

// ---- the scenarios ----------------------------------------------------------------------------

const KiB64 = 64 * 1024

/** Each way of misbehaving, by name (the tests' and the command line's). */
export const scenarios = {
  /** A JSON answer that never ends. */
  "endless-json": (): Handler => (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    pour(res, Buffer.from(`{"object":"usage","pad":"${"x".repeat(KiB64)}`))
  },
  /** A 300 MB JSON answer, announced by its Content-Length. */
  "huge-json": (): Handler => (_req, res) => {
    const total = 300 * 1024 * 1024
    res.writeHead(200, { "content-type": "application/json", "content-length": total })
    pour(res, Buffer.from(`{"object":"usage","pad":"${"x".repeat(KiB64)}`), total)
  },
  /** Takes the connection and never answers. */
  silent: (): Handler => () => {},
  /** Begins an answer and stops sending. */
  stall: (): Handler => (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.write(`{"object":"usage",`)
  },
  /** A completed render of `byte_size` 10 whose download never ends. */
  "endless-download": (): Handler => (req, res) => {
    if (req.url!.endsWith("/download")) {
      res.writeHead(200, { "content-type": "video/mp4" })
      return pour(res, Buffer.alloc(KiB64, 1))
    }
    answer(res, 200, renderJson(req.url!.split("/")[4] ?? "rnd_x"))
  },
  /** An HTML page where JSON belongs. */
  garbage: (): Handler => (_req, res) => answer(res, 200, "<html>not the API</html>", { "content-type": "text/html" }),
  /** JSON, but not the API's shape. */
  "wrong-shape": (): Handler => (_req, res) => answer(res, 200, JSON.stringify({ object: "usage", cycle_start: 7 })),
  /** A JSON answer nested 200,000 deep. */
  deep: (): Handler => (_req, res) => answer(res, 200, "[".repeat(200_000) + "1" + "]".repeat(200_000)),
  /** Redirects every request to the same path on `target` (another origin). */
  redirect: (status: number, target: string): Handler => (req, res) => {
    res.writeHead(status, { location: `${target}${req.url}` })
    res.end()
  },
  /** Says things with terminal controls in them: an error, a media label and id, a render status. */
  escapes: (): Handler => (req, res) => {
    if (req.url === "/api/v1/renders/rnd_wait") {
      return answer(res, 200, renderJson("rnd_wait", { status: "\x1b[2Jqueued\u202e", asset: null }))
    }
    if (req.url!.startsWith("/api/v1/renders/")) {
      return answer(
        res,
        404,
        JSON.stringify({ error: { code: "render_not_found", message: evil }, request_id: "req\x1b]0;title\x07" })
      )
    }
    answer(
      res,
      200,
      JSON.stringify({ object: "list", data: [mediaJson("med\x1b[2J", evil)], has_more: false, next_cursor: null })
    )
  },
  /**
   * Destroys every connection's second request on arrival, unanswered: a server closing a kept-alive
   * connection just as the client sends on it, made certain. The rest: usage, or a stored upload.
   */
  "closes-second": (): Handler => (req, res, seen) => {
    if (seen.onSocket === 2) return void req.socket.destroy()
    if (req.method === "POST") {
      req.resume()
      return req.on("end", () => answer(res, 201, JSON.stringify(mediaJson("med_1", "x"))))
    }
    answer(res, 200, usageJson)
  }
}

/** What `escapes` says: CSI colours, RLO/PDF, BEL, DEL, a C1 CSI, isolates, marks, a forged line. */
export const evil = "gone \x1b[31mred\x1b[0m \u202eevil\u202c \x07\x7f\x9b1m \u2066x\u2069 \u200e\u061c\nerror: forged"

if (import.meta.main) {
  const name = process.argv[2] as keyof typeof scenarios | undefined
  if (name === undefined || !(name in scenarios)) {
    console.error(`usage: node test/adversarial/hostile-server.ts ${Object.keys(scenarios).join("|")}`)
    process.exit(2)
  }
  let handler: Handler
  if (name === "redirect") {
    const elsewhere = await hostile((_req, res, seen) => {
      console.log(`the other origin was asked: ${seen.method} ${seen.url}`)
      answer(res, 200, usageJson)
    })
    console.log(`the other origin: ${elsewhere.baseUrl}`)
    handler = scenarios.redirect(Number(process.argv[3] ?? 302), elsewhere.baseUrl)
  } else {
    handler = (scenarios[name] as () => Handler)()
  }
  const server = await hostile((req, res, seen) => {
    console.log(`${seen.method} ${seen.url} (connection ${seen.socket}, request ${seen.onSocket})`)
    handler(req, res, seen)
  })
  console.log(`${name}: ${server.baseUrl}`)
}
