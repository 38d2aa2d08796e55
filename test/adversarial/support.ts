import * as fs from "node:fs"
import * as net from "node:net"
import { type Admin, inProcessAdmin, type Keyed, keyed } from "../foundation/admin.ts"
import { stopOrKill } from "../renders/helpers.ts"
import { makeShared, type Service, type Shared, startService } from "../support/service.ts"

/**
 * The adversarial suite: attacks a hostile client can try on the running service, kept as
 * tests. Loopback only; every attack is bounded in count and in time.
 */
export interface Target {
  readonly shared: Shared
  readonly service: Service
  readonly admin: Admin
  readonly main: Keyed
  readonly close: () => Promise<void>
}

/** One service (`npm start` as the harness runs it) with a studio workspace and an all-scopes key. */
export const target = async (env: Record<string, string> = {}): Promise<Target> => {
  const shared = await makeShared()
  const service = await startService(shared, env)
  const admin = inProcessAdmin(service.env)
  const main = await keyed(admin, "studio")
  return {
    shared,
    service,
    admin,
    main,
    close: async () => {
      await admin.dispose()
      await stopOrKill(service)
      fs.rmSync(shared.dataDir, { recursive: true, force: true })
    }
  }
}

/** `[[[…]]]` nested `depth` levels, around `inner`. */
export const nested = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth)

/** What a raw connection got: the server's bytes, how many body bytes were written before it closed, when. */
export interface Streamed {
  readonly text: string
  readonly sent: number
  readonly ms: number
}

/**
 * Sends `head` (request line, headers and any body prefix) and then `size` filler bytes as fast as the
 * connection takes them, stopping when the server ends or closes the connection: how much of a large
 * body a server reads before it answers and hangs up.
 */
export const streamBody = (port: number, head: string, size: number, chunk = 1024 * 1024) =>
  new Promise<Streamed>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let text = ""
    let sent = 0
    let closed = false
    const opened = Date.now()
    socket.on("data", (d) => (text += d.toString("latin1")))
    socket.on("error", () => {})
    const done = () => {
      if (closed) return
      closed = true
      resolve({ text, sent, ms: Date.now() - opened })
    }
    socket.once("end", done)
    socket.once("close", done)
    const filler = Buffer.alloc(chunk, 0x41)
    const pump = () => {
      while (!closed && !socket.destroyed && sent < size) {
        const n = Math.min(chunk, size - sent)
        sent += n
        if (!socket.write(filler.subarray(0, n))) return void socket.once("drain", pump)
      }
    }
    socket.once("connect", () => {
      socket.write(head)
      pump()
    })
  })

/** A multipart upload's head for a body of one file of `size` bytes (Content-Length counts it all). */
export const uploadHead = (target: string, size: number, headers: Record<string, string>) => {
  const boundary = "----p2vbig"
  const part =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`
  const tail = `\r\n--${boundary}--\r\n`
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")
  return `POST ${target} HTTP/1.1\r\nHost: x\r\n${lines}Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
    `Content-Length: ${part.length + size + tail.length}\r\n\r\n${part}`
}

/** The status line and headers of a raw answer, lower-cased; the body apart. */
export const parseAnswer = (text: string) => {
  const end = text.indexOf("\r\n\r\n")
  return {
    head: text.slice(0, end === -1 ? text.length : end).toLowerCase(),
    body: end === -1 ? "" : text.slice(end + 4)
  }
}

/**
 * A portal session over plain HTTP, as a program signs in (docs/portal.md): the link's token POSTed
 * to /portal/sign-in; then the session cookie and the CSRF token its pages carry.
 */
export const portalSession = async (t: Target, workspaceId: string) => {
  const { url } = await t.admin.ok("portal", "link", workspaceId)
  const token = new URL(url).searchParams.get("token")!
  const r = await fetch(`${t.service.baseUrl}/portal/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token })
  })
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!
  const page = await (await fetch(`${t.service.baseUrl}/portal/library`, { headers: { cookie } })).text()
  const csrf = /data-csrf="([^"]+)"/.exec(page)?.[1]
  if (r.status !== 303 || csrf === undefined) throw new Error(`no portal session: ${r.status} ${page.slice(0, 300)}`)
  return { cookie, csrf }
}
