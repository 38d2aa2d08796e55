import { Effect } from "effect"
import { execFile } from "node:child_process"
import { accessSync, chmodSync, constants, statSync } from "node:fs"
import { createRequire } from "node:module"
import { delimiter, join } from "node:path"
import { BinaryNotFound } from "../errors.ts"

/**
 * Finds ffmpeg/ffprobe once at start-up: FFMPEG_PATH / FFPROBE_PATH, else the one on PATH (the install
 * step puts Debian's 5.1 there), else the static build shipped inside npm by @ffmpeg-installer (so a
 * fresh machine needs nothing else). This is the only module that knows about those packages.
 */
type BinaryName = "ffmpeg" | "ffprobe"

export interface BinaryInfo {
  readonly name: BinaryName
  readonly path: string
  readonly source: "env" | "PATH" | "npm"
  readonly version: string
}

const NPM_PACKAGE: Record<BinaryName, string> = {
  ffmpeg: "@ffmpeg-installer/ffmpeg",
  ffprobe: "@ffprobe-installer/ffprobe"
}

const isExecutable = (p: string): boolean => {
  try {
    accessSync(p, constants.X_OK)
    return statSync(p).isFile()
  } catch {
    return false
  }
}

export const findOnPath = (name: string, pathEnv: string): string | undefined =>
  pathEnv
    .split(delimiter)
    .filter((d) => d.length > 0)
    .map((d) => join(d, name))
    .find(isExecutable)

const fromNpm = (name: BinaryName): string | undefined => {
  try {
    const p: string = createRequire(import.meta.url)(NPM_PACKAGE[name]).path
    // npm 11 skips dependency install scripts, so the package's own chmod may not have run.
    if (!isExecutable(p)) chmodSync(p, 0o755)
    return p
  } catch {
    return undefined
  }
}

const versionOf = (path: string): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(path, ["-version"], { timeout: 15_000 }, (err, stdout) => {
      if (err) return reject(err)
      // "ffmpeg version 5.1.9-0+deb12u1 Copyright ..." → "5.1.9-0+deb12u1"
      resolve(stdout.split("\n")[0]?.split(" ")[2] ?? "unknown")
    })
  )

export const resolveBinary = (
  name: BinaryName,
  explicit: string | undefined,
  pathEnv: string
): Effect.Effect<BinaryInfo, BinaryNotFound> =>
  Effect.gen(function*() {
    // An explicit path is a decision: if it is broken we say so instead of silently using another.
    const found: { path: string; source: BinaryInfo["source"] } | undefined = explicit
      ? { path: explicit, source: "env" }
      : (() => {
        const p = findOnPath(name, pathEnv)
        if (p) return { path: p, source: "PATH" as const }
        const n = fromNpm(name)
        return n ? { path: n, source: "npm" as const } : undefined
      })()
    if (!found) {
      return yield* new BinaryNotFound({ name, message: `${name} not found on PATH nor in ${NPM_PACKAGE[name]}` })
    }
    const version = yield* Effect.tryPromise({
      try: () => versionOf(found.path),
      catch: (e) => new BinaryNotFound({ name, message: `${found.path} (${found.source}) does not run: ${String(e)}` })
    })
    return { name, ...found, version }
  })
