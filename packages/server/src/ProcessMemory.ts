import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import process from "node:process"

/**
 * How the service's process holds memory (docs/contract.md H4), settled before anything is loaded,
 * because neither can change in a running process:
 *
 * - **malloc: jemalloc.** With glibc's allocator the resident set did not come back after a burst of
 *   uploads: libvips decodes on libuv's threads, each with its own malloc arena, and the freed pixel
 *   buffers stay in fragmented arenas (idle +19 % to +42 % of the start value after 30 × 15 MiB uploads
 *   and 30 bombs, whatever MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ said). jemalloc, which sharp's
 *   documentation recommends on glibc, with its background thread and a 1 s decay (`mallocConf`,
 *   unless MALLOC_CONF is set) returns it while the service is idle. Used when `MEMORY_ALLOCATOR` is
 *   `jemalloc` (the default) and libjemalloc.so.2 is installed (Debian's `libjemalloc2`, which
 *   `npm install` installs as root with ffmpeg); `MEMORY_ALLOCATOR=system` keeps the C library's.
 * - **V8's young generation: `--max-semi-space-size=4`** (MiB) unless the process was given one (on
 *   the command line or in NODE_OPTIONS). Node 24's default lets each isolate (the service's, the
 *   vision model's thread) keep tens of MiB of young generation it rarely needs: the service sat at
 *   ~330 MiB when ready, ~195 MiB with this, and its peak under 10 concurrent 15 MiB uploads fell from
 *   ~620 to ~470 MiB.
 * - **Node's compile cache** (`NODE_COMPILE_CACHE`, in `<tmpdir>/node-compile-cache` unless set, or
 *   off with `NODE_DISABLE_COMPILE_CACHE`): the service runs its TypeScript through Node's type
 *   stripping, whose WebAssembly transformer costs ~17 MiB of RSS in every isolate that strips a file:
 *   the main thread and each worker thread (a render's frame worker, the vision model's). With the
 *   cache the stripped code is read back (keyed by the source's hash) and the transformer is never
 *   loaded: a render's process held ~35 MiB less at its peak (packages/renderer/README.md). It stays in
 *   the environment (worker threads read it from there when they start).
 *
 * When any applies, the entry (`bin/start.ts`, `api.ts`, `runner.ts`) re-executes itself in place
 * (`process.execve`: same pid, arguments and stdio) with the flag, the preload and the cache. Where
 * `process.execve` does not exist (Deno, Windows, Node < 22.15) the process goes on as it is. What the
 * re-execution added to the environment is removed again, except the compile cache, so the processes
 * the service starts (PostgreSQL, ffmpeg) get the environment the operator gave.
 */
const semiSpaceMiB = 4

/**
 * jemalloc's settings when MALLOC_CONF is unset: its background thread, and freed pages returned
 * after 1 s instead of 10 s (`dirty_decay_ms`). A render frees its decode and raster buffers within
 * its first second and then runs for seconds more beside ffmpeg; with the default they stayed
 * resident through the encode: the render's peak (node + ffmpeg) was ~20 MB higher (measured,
 * packages/renderer/README.md).
 */
const mallocConf = "background_thread:true,dirty_decay_ms:1000"

const libraryPaths = (arch: string) => {
  const triplet = arch === "x64" ? "x86_64-linux-gnu" : arch === "arm64" ? "aarch64-linux-gnu" : undefined
  return [
    ...(triplet === undefined ? [] : [`/usr/lib/${triplet}/libjemalloc.so.2`]),
    "/usr/lib64/libjemalloc.so.2",
    "/usr/lib/libjemalloc.so.2",
    "/usr/local/lib/libjemalloc.so.2"
  ]
}

/** Set in the re-executed process's environment only: which variables it added (to drop again). */
const marker = "P2V_MEMORY_REEXEC"

const jemallocLibrary = (env: NodeJS.ProcessEnv): string | undefined => {
  const choice = (env.MEMORY_ALLOCATOR ?? "jemalloc").trim().toLowerCase()
  if (choice === "system") return undefined
  if (choice !== "jemalloc") {
    console.warn(`MEMORY_ALLOCATOR=${env.MEMORY_ALLOCATOR} is neither jemalloc nor system; using the system allocator`)
    return undefined
  }
  if (process.platform !== "linux" || env.LD_PRELOAD?.includes("libjemalloc")) return undefined // preloaded already
  return libraryPaths(process.arch).find((p) => fs.existsSync(p))
}

const hasSemiSpaceFlag = (env: NodeJS.ProcessEnv) =>
  [...process.execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].some((a) =>
    /^--max[-_]semi[-_]space[-_]size\b/.test(a)
  )

export const tuneMemory = (): void => {
  const env = process.env
  const added = env[marker]
  if (added !== undefined) {
    delete env[marker]
    for (const name of added.split(",")) {
      if (name === "LD_PRELOAD") {
        const rest = (env.LD_PRELOAD ?? "").split(/[: ]/).filter((p) => p !== "" && !p.includes("libjemalloc"))
        if (rest.length === 0) delete env.LD_PRELOAD
        else env.LD_PRELOAD = rest.join(":")
      } else if (name === "MALLOC_CONF") delete env.MALLOC_CONF
    }
    return
  }
  if (typeof process.execve !== "function") return
  const flags = hasSemiSpaceFlag(env) ? [] : [`--max-semi-space-size=${semiSpaceMiB}`]
  const library = jemallocLibrary(env)
  const compileCache = env.NODE_COMPILE_CACHE === undefined && env.NODE_DISABLE_COMPILE_CACHE === undefined
    ? path.join(os.tmpdir(), "node-compile-cache")
    : undefined
  if (flags.length === 0 && library === undefined && compileCache === undefined) return
  const extra: Record<string, string> = {}
  if (library !== undefined) {
    extra.LD_PRELOAD = env.LD_PRELOAD ? `${library}:${env.LD_PRELOAD}` : library
    if (env.MALLOC_CONF === undefined) extra.MALLOC_CONF = mallocConf
  }
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], {
      ...env,
      ...extra,
      // not in the marker: it is kept (see above)
      ...(compileCache === undefined ? {} : { NODE_COMPILE_CACHE: compileCache }),
      [marker]: Object.keys(extra).join(",")
    })
  } catch (e) {
    console.warn(
      `could not re-execute with ${[...flags, ...Object.values(extra)].join(" ")} (${
        e instanceof Error ? e.message : String(e)
      }); going on as started`
    )
  }
}
