/**
 * `node bench/profile-summary.ts PROFILE.cpuprofile [WINDOW.txt] [TOP]` — where a service's time
 * went, from a V8 CPU profile (`BENCH_CPU_PROF=DIR npm run bench:api` writes one, and a window file
 * per measured run): self time by category, by file and by function, restricted to the samples
 * inside the window when one is given ("<start µs> <end µs> [requests]", the profile's monotonic
 * clock). With the requests answered in the window, each line also gives µs of main-thread CPU per request.
 */
import * as fs from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, windowFile, topArg] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: node bench/profile-summary.ts PROFILE.cpuprofile [WINDOW.txt] [TOP]")
const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile
const top = Number(topArg ?? 25)
const window = windowFile ? fs.readFileSync(windowFile, "utf8").trim().split(/\s+/).map(Number) : undefined
const byId = new Map(profile.nodes.map((n) => [n.id, n]))

const self = new Map<number, number>()
let t = profile.startTime
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0
  if (window && (t < window[0] || t > window[1])) continue
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i + 1] ?? 0))
}
const total = [...self.values()].reduce((a, b) => a + b, 0)

const fileOf = (url: string, fn: string) => {
  if (!url) return `(${fn.replace(/[()]/g, "")})`
  const m = url.match(
    /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:dist\/(?:[\w-]+\/)?|src\/(?:[\w-]+\/)?|lib\/)?(?:internal\/)?([^/]+?)(?:\.m?js|\.ts)?$/
  )
  if (m) return `${m[1]}:${m[2]}`
  return url.replace(/^file:\/\/.*?\/packages\//, "packages/")
}
const categoryOf = (url: string, fn: string) => {
  if (!url) {
    if (fn === "(idle)") return "idle"
    if (fn === "(garbage collector)") return "garbage collector"
    if (/^(writev|writeBuffer|writeUtf8String|read|readv|close)$/.test(fn)) return "socket syscalls (writev/read)"
    return "V8/native other"
  }
  // Effect 4 has HTTP, SQL, cluster and rpc inside the effect package (effect/http, effect/sql …); Effect 3 had them as @effect/*
  if (/node_modules\/effect\/(dist|src)\/(http|http-api)\//.test(url)) {
    return "HTTP (router, HttpApi, body): effect/http, @effect/platform"
  }
  if (/node_modules\/effect\/(dist|src)\/sql\//.test(url)) return "effect/sql, @effect/sql"
  if (/node_modules\/effect\/(dist|src)\/(cluster|rpc)\//.test(url)) {
    return "cluster + rpc (entity messages): effect/cluster, @effect/cluster"
  }
  if (/node_modules\/effect\//.test(url)) return "effect runtime (fibers, context, schema)"
  if (/node_modules\/@effect\/(platform|platform-node|platform-node-shared)\//.test(url) || /find-my-way/.test(url)) {
    return "HTTP (router, HttpApi, body): effect/http, @effect/platform"
  }
  if (/node_modules\/@effect\/sql\//.test(url)) return "effect/sql, @effect/sql"
  // @effect/sql-pg 4 speaks the protocol itself; 3 ran on pg
  if (/node_modules\/@effect\/sql-pg\//.test(url)) return "PostgreSQL driver (protocol, row parsing)"
  if (
    /node_modules\/(pg|pg-pool|pg-protocol|pg-types|postgres-[a-z]+|pg-connection-string)\//.test(url) ||
    /node_modules\/pg\//.test(url)
  ) return "PostgreSQL driver (protocol, row parsing)"
  if (/node_modules\/@effect\/(cluster|rpc)\//.test(url)) {
    return "cluster + rpc (entity messages): effect/cluster, @effect/cluster"
  }
  if (/crypto/.test(url)) return "node crypto"
  if (/^node:_http|^node:net|^node:internal\/(streams|stream_base|http)/.test(url)) return "node http/net/streams"
  if (url.includes("/packages/")) return "this service's code"
  return "node other"
}

const sum = (key: (n: Node) => string) => {
  const m = new Map<string, number>()
  for (const [id, us] of self) {
    const k = key(byId.get(id)!)
    m.set(k, (m.get(k) ?? 0) + us)
  }
  return [...m].sort((a, b) => b[1] - a[1])
}
const requests = window?.[2]
const perRequest = (us: number) =>
  requests === undefined || !(requests > 0) ? "" : `${(us / requests).toFixed(1).padStart(8)} µs/req`
const show = (title: string, rows: Array<[string, number]>, n: number) => {
  console.log(`\n${title}`)
  for (const [k, us] of rows.slice(0, n)) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(6)}%${perRequest(us)}  ${k}`)
  }
}
const busy = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName !== "(idle)").reduce(
  (a, [, us]) => a + us,
  0
)
console.log(
  `${file}${window ? ` (window ${((window[1] - window[0]) / 1e6).toFixed(1)} s)` : ""}: ${
    (total / 1e6).toFixed(2)
  } s sampled`
)
if (requests !== undefined && requests > 0) {
  console.log(`${requests} requests; main thread busy ${perRequest(busy).trim()} (all but idle)`)
}
show("self time by category", sum((n) => categoryOf(n.callFrame.url, n.callFrame.functionName)), 20)
show("self time by file", sum((n) => fileOf(n.callFrame.url, n.callFrame.functionName)), top)
show(
  "self time by function",
  sum((n) =>
    `${n.callFrame.functionName || "(anonymous)"}  ${fileOf(n.callFrame.url, n.callFrame.functionName)}:${
      n.callFrame.lineNumber + 1
    }`
  ),
  top
)
