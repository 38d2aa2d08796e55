/**
 * What a client scraping /metrics in a tight loop costs the API, one part of
 * `npm run bench:api -- --scrape-loop`: the poll (`GET /api/v1/renders/{id}`) against one service,
 * measured without and with one local client that scrapes the service's /metrics back to back (its
 * next request as soon as the previous answer is read, in a process of its own:
 * `node bench/scrape-loop.ts URL MODE`), in two kinds: on one keep-alive connection (as fetch, curl
 * --next or any HTTP library does), and with a new connection for every scrape (the worst a single
 * client can do: each connection is answered at once from the cached exposition). Rounds
 * (BENCH_ROUNDS, 3), each measuring the three in a rotating order, each measurement as the rest of
 * bench:api makes them; the service is also scraped once a second throughout, as deployed. Printed:
 * each round's polls/s side by side with their ratio to the poll alone, the scrapes/s the loop got
 * and the exposition's size, then the sums. Budget: a loop costs at most 10 % of poll throughput.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import type { Measured } from "./observability.ts"

export interface Tools {
  readonly pollUrl: string
  readonly metricsUrl: string
  readonly auth: Record<string, string>
  /** the service's pid, for its CPU time */
  readonly pid: number | undefined
  readonly load: (name: string, url: string, headers: Record<string, string>, pid?: number) => Promise<Measured>
  readonly quantile: (sorted: Float64Array, q: number) => number
  readonly children: Array<ChildProcess>
}

const modes = ["alone", "keep-alive", "new-connection"] as const
type Mode = (typeof modes)[number]

interface Loop {
  readonly scrapes: number
  readonly seconds: number
  readonly bytes: number
  readonly failures: number
}

/** Starts the scraping client; `stop` ends it and returns what it did. */
async function startLoop(t: Tools, mode: Mode) {
  const child = spawn(process.execPath, [import.meta.filename, t.metricsUrl, mode], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  t.children.push(child)
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve())
    child.once("exit", (code) => reject(new Error(`the scrape loop exited ${code}`)))
  })
  return {
    stop: async (): Promise<Loop> => {
      const exited = new Promise((r) => child.once("exit", r))
      child.kill("SIGTERM")
      await exited
      const last = out.trim().split("\n").pop()!
      return JSON.parse(last) as Loop
    }
  }
}

export async function scrapeLoopCost(t: Tools, rounds = Number(process.env.BENCH_ROUNDS ?? 3)) {
  const measured = new Map<Mode, Array<Measured>>(modes.map((m) => [m, []]))
  const loops = new Map<Mode, Array<Loop>>(modes.map((m) => [m, []]))
  const rps = (m: Measured) => m.requests / m.seconds
  const cpu = (m: Measured) => m.cpuSeconds === undefined ? "-" : (m.cpuSeconds * 1000 / m.requests).toFixed(3)
  const headers = ["polls/s", "p99 ms", "CPU ms/poll", "ratio", "scrapes/s"]
  console.log(
    `${"round".padEnd(7)}${"poll alone".padEnd(30)}${
      "+ loop on one keep-alive connection".padEnd(52)
    }+ loop, a new connection per scrape`
  )
  console.log(
    `${"".padEnd(7)}${headers.slice(0, 3).map((h) => h.padStart(10)).join("")}` +
      `${[...headers, "body KiB"].map((h) => h.padStart(10)).join("").padEnd(52)}${
        headers.map((h) => h.padStart(10)).join("")
      }`
  )
  for (let round = 0; round < rounds; round++) {
    // each round starts with the next kind, so none is always measured on a warmer (or busier) service
    const order = modes.map((_, i) => modes[(i + round) % modes.length])
    const inRound = new Map<Mode, { m: Measured; loop?: Loop }>()
    for (const mode of order) {
      const name = `scrape-${mode}-${round}`
      if (mode === "alone") {
        inRound.set(mode, { m: await t.load(name, t.pollUrl, t.auth, t.pid) })
        continue
      }
      const loop = await startLoop(t, mode)
      const m = await t.load(name, t.pollUrl, t.auth, t.pid)
      inRound.set(mode, { m, loop: await loop.stop() })
    }
    for (const [mode, r] of inRound) {
      measured.get(mode)!.push(r.m)
      if (r.loop) loops.get(mode)!.push(r.loop)
    }
    const alone = inRound.get("alone")!.m
    const cells = (mode: Mode, size: boolean) => {
      const { loop, m } = inRound.get(mode)!
      const base = [rps(m).toFixed(0), t.quantile(m.latenciesMs, 0.99).toFixed(2), cpu(m)]
      if (loop === undefined) return base
      return [
        ...base,
        (rps(m) / rps(alone)).toFixed(3),
        (loop.scrapes / loop.seconds).toFixed(1),
        ...(size ? [(loop.bytes / 1024).toFixed(0)] : [])
      ]
    }
    console.log(
      `${String(round + 1).padEnd(7)}${cells("alone", false).map((c) => c.padStart(10)).join("")}` +
        `${cells("keep-alive", true).map((c) => c.padStart(10)).join("").padEnd(52)}${
          cells("new-connection", false).map((c) => c.padStart(10)).join("")
        }`
    )
  }
  const sum = (mode: Mode) => {
    const ms = measured.get(mode)!
    return ms.reduce((a, m) => a + m.requests, 0) / ms.reduce((a, m) => a + m.seconds, 0)
  }
  const rate = (mode: Mode) => {
    const ls = loops.get(mode)!
    return ls.reduce((a, l) => a + l.scrapes, 0) / ls.reduce((a, l) => a + l.seconds, 0)
  }
  const failures = [...loops.values()].flat().reduce((a, l) => a + l.failures, 0)
  const ratio = (mode: Mode) => sum(mode) / sum("alone")
  console.log(
    `${"all".padEnd(7)}${sum("alone").toFixed(0).padStart(10)}${"".padStart(20)}` +
      `${
        [sum("keep-alive").toFixed(0), "", "", ratio("keep-alive").toFixed(3), rate("keep-alive").toFixed(1)].map((c) =>
          c.padStart(10)
        ).join("").padEnd(52)
      }` +
      `${
        [
          sum("new-connection").toFixed(0),
          "",
          "",
          ratio("new-connection").toFixed(3),
          rate("new-connection").toFixed(1)
        ].map((c) => c.padStart(10)).join("")
      }`
  )
  console.log(
    `poll throughput under a tight scrape loop: ${
      (100 * (1 - ratio("keep-alive"))).toFixed(1)
    } % below the poll alone on one keep-alive connection, ` +
      `${
        (100 * (1 - ratio("new-connection"))).toFixed(1)
      } % with a new connection per scrape (budget ≤ 10 %); failed scrapes ${failures}`
  )
  return { alone: sum("alone"), keepAlive: sum("keep-alive"), newConnection: sum("new-connection") }
}

// the scraping client, when this file is run as `node bench/scrape-loop.ts URL MODE`: GET after GET,
// each answer read to its end, on one keep-alive connection or a new one each time; on SIGTERM it
// prints what it did as JSON
if (process.argv[1] === import.meta.filename) {
  const url = new URL(process.argv[2])
  const agent = process.argv[3] === "new-connection" ? false : new http.Agent({ keepAlive: true, maxSockets: 1 })
  const started = performance.now()
  let scrapes = 0
  let bytes = 0
  let failures = 0
  let stopped = false
  process.on("SIGTERM", () => (stopped = true))
  const once = () =>
    new Promise<void>((resolve) => {
      const req = http.get({ host: url.hostname, port: url.port, path: url.pathname, agent }, (res) => {
        let size = 0
        res.on("data", (d: Buffer) => (size += d.length))
        res.on("end", () => {
          if (res.statusCode === 200) {
            scrapes++
            bytes = size
          } else failures++
          resolve()
        })
      })
      req.on("error", () => {
        failures++
        resolve()
      })
    })
  process.stdout.write("scraping\n")
  while (!stopped) await once()
  process.stdout.write(
    `${JSON.stringify({ scrapes, seconds: (performance.now() - started) / 1000, bytes, failures })}\n`
  )
  if (agent) agent.destroy()
}
