import { Effect, type Scope } from "effect"
import { copyFile, mkdtemp, rename, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import process from "node:process"

/** A private temp directory that is removed with everything in it when the scope closes. */
export const tempDir = (prefix: string): Effect.Effect<string, unknown, Scope.Scope> =>
  Effect.acquireRelease(
    // The pid in the name tells whose directory it is (tests check theirs are gone).
    Effect.tryPromise({ try: () => mkdtemp(join(tmpdir(), `${prefix}${process.pid}-`)), catch: (e) => e }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

/**
 * A hidden sibling of `finalPath` to encode into: same directory, so the final rename is atomic and
 * a half-written file never sits at `finalPath`. Removed on scope close unless it was renamed.
 */
export const partialFile = (finalPath: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() =>
      join(
        dirname(finalPath),
        `.${basename(finalPath)}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}.partial`
      )
    ),
    (p) => Effect.promise(() => rm(p, { force: true }))
  )

export const moveInto = (from: string, to: string): Effect.Effect<void, unknown> =>
  Effect.tryPromise({
    try: () =>
      rename(from, to).catch(async (e: NodeJS.ErrnoException) => {
        if (e.code !== "EXDEV") throw e
        await copyFile(from, to)
        await rm(from, { force: true })
      }),
    catch: (e) => e
  })
