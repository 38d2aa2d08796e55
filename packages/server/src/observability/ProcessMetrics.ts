import * as M from "@pic2video/cluster/metrics/Metric"
import { Effect } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"

/**
 * The process's own gauges, read from the runtime when /metrics is scraped: resident memory, CPU
 * time, the V8 heap, and the event loop's delay since the previous scrape (p99 and max; the
 * monitor runs only in a process that serves /metrics). Names as Prometheus' Node.js clients write them.
 */
const rss = M.gauge("process_resident_memory_bytes", "Resident set size of this process").of().register()
const cpu = M.counter("process_cpu_seconds_total", "User and system CPU time this process has used").of().register()
const started = M.gauge("process_start_time_seconds", "When this process started, in seconds since the epoch").of()
  .register()
const heapUsed = M.gauge("nodejs_heap_size_used_bytes", "V8 heap in use").of().register()
const heapTotal = M.gauge("nodejs_heap_size_total_bytes", "V8 heap reserved").of().register()
const external = M.gauge(
  "nodejs_external_memory_bytes",
  "Memory held outside the V8 heap by JavaScript objects (buffers)"
).of().register()
const lagP99 = M.gauge(
  "nodejs_eventloop_lag_p99_seconds",
  "99th percentile of the event loop's delay since the previous scrape"
).of().register()
const lagMax = M.gauge("nodejs_eventloop_lag_max_seconds", "Longest event loop delay since the previous scrape").of()
  .register()

/** Starts the event-loop monitor; the returned effect samples everything and restarts the delay window. */
export const make = Effect.sync(() => {
  // the monitor samples the loop every 20 ms; a runtime without it (some Deno versions) reports no lag
  let delay: ReturnType<typeof monitorEventLoopDelay> | undefined
  try {
    delay = monitorEventLoopDelay({ resolution: 20 })
    delay.enable()
  } catch {
    delay = undefined
  }
  started.unsafeUpdate(Math.round((Date.now() - performance.now()) / 1000), [])
  let cpuSeen = 0
  return Effect.sync(() => {
    const memory = process.memoryUsage()
    rss.unsafeUpdate(memory.rss, [])
    heapUsed.unsafeUpdate(memory.heapUsed, [])
    heapTotal.unsafeUpdate(memory.heapTotal, [])
    external.unsafeUpdate(memory.external, [])
    const usage = process.cpuUsage()
    const cpuNow = (usage.user + usage.system) / 1e6
    if (cpuNow > cpuSeen) cpu.unsafeUpdate(cpuNow - cpuSeen, [])
    cpuSeen = Math.max(cpuSeen, cpuNow)
    if (delay !== undefined && delay.count > 0) {
      lagP99.unsafeUpdate(delay.percentile(99) / 1e9, [])
      lagMax.unsafeUpdate(delay.max / 1e9, [])
      delay.reset()
    }
  })
})
