import * as fs from "node:fs"
import process from "node:process"

/**
 * The service's malloc (docs/contract.md H4). With glibc's allocator the resident set did not come
 * back after a burst of uploads: libvips decodes on libuv's threads, each with its own malloc arena,
 * and the freed pixel buffers stay in fragmented arenas (idle +19 % to +42 % of the start value after
 * 30 × 15 MiB uploads and 30 bombs, whatever MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ said). jemalloc
 * (what sharp's documentation recommends on glibc) returns it: idle within 3-4 %.
 *
 * A process cannot change its allocator once running, so a service entry (`bin/start.ts`, `api.ts`,
 * `runner.ts`) calls `useJemalloc()` before loading anything else: when `MEMORY_ALLOCATOR` is
 * `jemalloc` (the default) and libjemalloc.so.2 is installed (Debian's `libjemalloc2`, which
 * `npm install` installs as root with ffmpeg), the process re-executes itself in place (same pid, same
 * arguments and stdio) with it preloaded. `MEMORY_ALLOCATOR=system` keeps glibc's; without the
 * library, or where `process.execve` does not exist (Deno, Windows, Node < 22.15), the process goes on
 * with the system allocator. The preload is not passed on to the processes the service starts
 * (PostgreSQL, ffmpeg). jemalloc runs with its background thread (MALLOC_CONF=background_thread:true unless
 * MALLOC_CONF is set), which returns freed pages while the service is idle.
 */
const libraryPaths = (arch: string) => {
  const triplet = arch === "x64" ? "x86_64-linux-gnu" : arch === "arm64" ? "aarch64-linux-gnu" : undefined
  return [
    ...(triplet === undefined ? [] : [`/usr/lib/${triplet}/libjemalloc.so.2`]),
    "/usr/lib64/libjemalloc.so.2",
    "/usr/lib/libjemalloc.so.2",
    "/usr/local/lib/libjemalloc.so.2"
  ]
}

/** Set in the re-executed process's environment only, so it knows the preload (and the conf) is its own to drop. */
const marker = "P2V_JEMALLOC_PRELOADED"
const ownConf = "background_thread:true"

export const useJemalloc = (): void => {
  const env = process.env
  if (env[marker] === "1" || env[marker] === "conf") {
    // re-executed: jemalloc is loaded; the children get the environment the operator gave
    if (env[marker] === "conf") delete env.MALLOC_CONF
    delete env[marker]
    if (env.LD_PRELOAD !== undefined) {
      const rest = env.LD_PRELOAD.split(/[: ]/).filter((p) => p !== "" && !p.includes("libjemalloc"))
      if (rest.length === 0) delete env.LD_PRELOAD
      else env.LD_PRELOAD = rest.join(":")
    }
    return
  }
  const choice = (env.MEMORY_ALLOCATOR ?? "jemalloc").trim().toLowerCase()
  if (choice === "system") return
  if (choice !== "jemalloc") {
    console.warn(`MEMORY_ALLOCATOR=${env.MEMORY_ALLOCATOR} is neither jemalloc nor system; using the system allocator`)
    return
  }
  if (process.platform !== "linux" || typeof process.execve !== "function") return
  if (env.LD_PRELOAD?.includes("libjemalloc")) return // the operator preloads it already
  const library = libraryPaths(process.arch).find((p) => fs.existsSync(p))
  if (library === undefined) return
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...env,
      LD_PRELOAD: env.LD_PRELOAD ? `${library}:${env.LD_PRELOAD}` : library,
      // without its background thread jemalloc returns freed pages only when the arena is next used,
      // so an idle service would keep a burst's memory (an operator's MALLOC_CONF wins)
      MALLOC_CONF: env.MALLOC_CONF ?? ownConf,
      [marker]: env.MALLOC_CONF === undefined ? "conf" : "1"
    })
  } catch (e) {
    console.warn(`could not preload ${library} (${e instanceof Error ? e.message : String(e)}); using the system allocator`)
  }
}
