/**
 * Preloaded into the service by `bench/api.ts` (`node --import ./bench/loop-delay.ts …`), in its main
 * thread only (worker threads inherit the flag and return at once). Every BENCH_LOOP_DELAY_MS
 * (default 1000) it prints to stderr, as one line the benchmark parses, how late the main thread's
 * event loop ran (perf_hooks.monitorEventLoopDelay, 5 ms resolution) and how long V8's garbage
 * collections paused it, over the last interval:
 *
 *   loop-delay {"t":<epoch ms>,"p50":…,"p99":…,"max":…,"gcMs":…,"gcMax":…,"gcs":…}
 *
 * With BENCH_MAIN_PROF=FILE it also profiles the main thread (node:inspector, 1 ms sampling) from
 * start until SIGUSR2, then writes FILE (a .cpuprofile, the clock of `--cpu-prof`): `--cpu-prof` only
 * writes at a clean exit, which a service stopped with renders in flight may not reach.
 * It measures; it changes nothing the service does.
 */
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { isMainThread } from "node:worker_threads"

if (isMainThread) {
  const everyMs = Number(process.env.BENCH_LOOP_DELAY_MS ?? 1000)
  const histogram = monitorEventLoopDelay({ resolution: 5 })
  histogram.enable()
  let gcMs = 0
  let gcMax = 0
  let gcs = 0
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs += e.duration
      gcMax = Math.max(gcMax, e.duration)
      gcs++
    }
  }).observe({ entryTypes: ["gc"] })
  const ms = (ns: number) => Math.round(ns / 1e4) / 100
  setInterval(() => {
    const line = {
      t: Date.now(),
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      gcMs: Math.round(gcMs * 100) / 100,
      gcMax: Math.round(gcMax * 100) / 100,
      gcs
    }
    histogram.reset()
    gcMs = 0
    gcMax = 0
    gcs = 0
    process.stderr.write(`loop-delay ${JSON.stringify(line)}\n`)
  }, everyMs).unref()

  const profileFile = process.env.BENCH_MAIN_PROF
  // the service re-executes itself once at start (ProcessMemory.ts): profile the process that stays
  if (profileFile && process.env.P2V_MEMORY_REEXEC !== undefined) {
    const inspector = await import("node:inspector")
    const fs = await import("node:fs")
    const session = new inspector.Session()
    session.connect()
    const post = (method: string, params?: object) =>
      new Promise<{ readonly profile?: unknown }>((resolve, reject) =>
        session.post(method, params, (e, r) => (e ? reject(e) : resolve(r ?? {})))
      )
    await post("Profiler.enable")
    await post("Profiler.setSamplingInterval", { interval: 1000 })
    await post("Profiler.start")
    // BENCH_MAIN_HEAP=FILE: a sampling allocation profile too, garbage included (what feeds the GC)
    const heapFile = process.env.BENCH_MAIN_HEAP
    if (heapFile) {
      await post("HeapProfiler.enable")
      await post("HeapProfiler.startSampling", {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
    }
    process.on("SIGUSR2", async () => {
      if (heapFile) fs.writeFileSync(heapFile, JSON.stringify((await post("HeapProfiler.stopSampling")).profile))
      const { profile } = await post("Profiler.stop")
      fs.writeFileSync(profileFile, JSON.stringify(profile))
      process.stderr.write(`loop-delay profile written to ${profileFile}\n`)
    })
  }
}
