import { Effect } from "effect"
import { open, readdir, stat } from "node:fs/promises"
import { createRequire } from "node:module"
import { join } from "node:path"
import type { ReadAt } from "../byte-reader.ts"

const FONT_EXT = /\.(ttf|otf|ttc|otc)$/i

/** All font files below the given directories (missing directories are skipped). */
export const listFontFiles = (dirs: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    const out: Array<string> = []
    const walk = async (dir: string, depth: number): Promise<void> => {
      if (depth > 8) return
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
      for (const e of entries) {
        const p = join(dir, e.name)
        if (e.isDirectory()) await walk(p, depth + 1)
        else if (FONT_EXT.test(e.name)) out.push(p)
      }
    }
    for (const d of dirs) await walk(d, 0)
    return out.sort()
  })

/** Random-access reads of one file (fonts can be 20+ MB; we only need their headers and cmap). */
export const fileReader = <A>(path: string, use: (read: ReadAt) => Promise<A>): Effect.Effect<A, unknown> =>
  Effect.tryPromise({
    try: async () => {
      const fh = await open(path, "r")
      try {
        return await use(async (offset, length) => {
          const buf = new Uint8Array(Math.max(0, length))
          const { bytesRead } = await fh.read(buf, 0, buf.length, offset)
          return buf.subarray(0, bytesRead)
        })
      } finally {
        await fh.close()
      }
    },
    catch: (e) => e
  })

export const fileSize = (path: string): Effect.Effect<number, unknown> =>
  Effect.tryPromise({ try: () => stat(path).then((s) => s.size), catch: (e) => e })

/** Absolute path of a file shipped in an npm package (e.g. a font). */
export const resolvePackageFile = (spec: string): string => createRequire(import.meta.url).resolve(spec)
