/**
 * `node bench/keep-alive.ts` — the keep-alive race (a reused socket closed under a request), shown on its own (loopback only).
 * A server (its own process) with Node's default idle handling (`Keep-Alive: timeout=5`, closes at
 * 6 s) or with the service's (packages/server/src/HttpTimeouts.ts: timeout=5, closes at 10 s), and
 * a client that sends a second request on a kept-alive socket after an idle time swept across the
 * server's close (one socket per trial, all trials at once), with Node's Agent either ignoring the
 * header (no `timeout` option: the Agent applies the hint only when it has one; the bench's agent
 * on main) or honouring it (it stops using a socket a second before the advertised timeout). Prints,
 * per server × client, how many second requests failed at the socket, with the code and idle time.
 */
import * as HttpTimeouts from "@pic2video/server/HttpTimeouts"
import { spawn } from "node:child_process"
import * as http from "node:http"
import type * as net from "node:net"

if (process.argv[2] === "--server") {
  const server = http.createServer((_req, res) => res.end("ok"))
  if (process.argv[3] === "service") {
    HttpTimeouts.apply(server, {
      headersMillis: 10_000,
      bodyMillis: 30_000,
      requestMillis: 180_000,
      keepAliveMillis: 5000
    })
  }
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as net.AddressInfo).port}\n`))
} else {
  const trial = (port: number, honours: boolean, idleMs: number) =>
    new Promise<{ idleMs: number; reused: boolean; failure: string | undefined }>((resolve) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1, ...(honours ? { timeout: 60_000 } : {}) })
      const get = () =>
        new Promise<{ reused: boolean; failure: string | undefined }>((done) => {
          const req = http.get({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
            res.resume()
            res.on("end", () => done({ reused: req.reusedSocket, failure: undefined }))
          })
          req.on(
            "error",
            (e: NodeJS.ErrnoException) => done({ reused: req.reusedSocket, failure: e.code ?? e.message })
          )
        })
      void get().then(() =>
        setTimeout(() =>
          void get().then((second) => {
            agent.destroy()
            resolve({ idleMs, ...second })
          }), idleMs)
      )
    })
  const sweep = (centreMs: number) => Array.from({ length: 81 }, (_, i) => centreMs - 40 + i)
  for (const mode of ["node-default", "service"] as const) {
    const child = spawn(process.execPath, [import.meta.filename, "--server", mode], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const port = Number(await new Promise<string>((resolve) => child.stdout.once("data", (d) => resolve(String(d)))))
    const closesAt = mode === "service" ? 10_000 : 6000
    for (const honours of [false, true]) {
      const results = await Promise.all(sweep(closesAt).map((idle) => trial(port, honours, idle)))
      const failed = results.filter((r) => r.failure !== undefined)
      const reused = results.filter((r) => r.reused).length
      console.log(
        `server ${mode.padEnd(12)} (advertises timeout=5, closes at ${closesAt / 1000} s)  client ${
          honours ? "honours" : "ignores"
        } the header:` +
          ` ${results.length} second requests at ${closesAt - 40}–${
            closesAt + 40
          } ms idle, ${reused} on the kept socket, ${failed.length} failed at the socket` +
          (failed.length === 0
            ? ""
            : ` (${
              failed.map((f) => `${f.failure}${f.reused ? " reused" : ""} @${f.idleMs} ms`).slice(0, 6).join(", ")
            }${failed.length > 6 ? ", …" : ""})`)
      )
    }
    child.kill()
  }
}
