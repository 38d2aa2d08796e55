import * as net from "node:net"

/** Loopback helpers shared by the test harness and the benchmark scripts (no vitest imports here). */

/**
 * Ports handed to services come from below the kernel's ephemeral range (Linux: 32768–60999), so
 * nothing but another reservation can take one between its reservation and the service's listen:
 * an ephemeral port, free when tested, could become an outgoing connection's source port or a
 * `listen(0)` in the meantime (a CI run once lost a drive-crash test that way, EADDRINUSE). Each
 * vitest worker draws from its own slice, and within a process the draw never repeats a port.
 */
const low = 20_000
const sliceSize = 1_000
const slices = 12 // 20000–31999; slice 0 is the main process (global setup, benchmarks)
const slice = Number(process.env.VITEST_POOL_ID ?? 0) % slices
let next = Math.floor(Math.random() * sliceSize)

const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer()
    s.once("error", () => resolve(false))
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)))
  })

export const freePort = async (): Promise<number> => {
  for (let tries = 0; tries < sliceSize; tries++) {
    const port = low + slice * sliceSize + (next++ % sliceSize)
    if (await bindable(port)) return port
  }
  throw new Error(`no free port in ${low + slice * sliceSize}–${low + (slice + 1) * sliceSize - 1}`)
}

export const waitFor = async (check: () => Promise<boolean>, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}
