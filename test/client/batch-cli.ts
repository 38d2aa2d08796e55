import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Path from "node:path"
import sharp from "sharp"
import { client, root, type Service } from "../support/service.ts"

/** `p2v batch` as a user runs it, a separate process, for the batch tests. */

/** Distinct photos (distinct bytes, so distinct idempotency keys), small so that renders are quick. */
export const makePhotos = async (n: number, into: string, prefix = "photo-", offset = 0) => {
  fs.mkdirSync(into, { recursive: true })
  const sources = ["rocket.jpg", "chelsea.png", "coffee.png", "astronaut.png"]
  for (let i = offset; i < offset + n; i++) {
    await sharp(Path.join(root, "test/fixtures", sources[i % sources.length]))
      .resize(320, 240)
      .modulate({ hue: i * 29 })
      .jpeg({ quality: 80 })
      .toFile(Path.join(into, `${prefix}${String(i + 1).padStart(2, "0")}.jpg`))
  }
}

export interface Finished {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
}

export const batchCli = (service: Service) => {
  /** `uid`/`gid`: run as another user (a file unreadable to root cannot be made). */
  const start = (secret: string, args: ReadonlyArray<string>, as: { uid?: number; gid?: number } = {}) => {
    const child = spawn(process.execPath, [Path.join(root, "packages/client/src/bin/p2v.ts"), "batch", ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: as.uid === undefined ? process.env.HOME ?? "/tmp" : "/tmp",
        P2V_API_KEY: secret,
        P2V_BASE_URL: service.baseUrl
      },
      stdio: ["ignore", "pipe", "pipe"],
      ...as
    })
    const out = { stdout: "", stderr: "" }
    child.stdout.on("data", (d) => (out.stdout += d))
    child.stderr.on("data", (d) => (out.stderr += d))
    const done = new Promise<Finished>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal, ...out }))
    )
    return { child, out, done }
  }
  const used = async (secret: string) =>
    (await (await client(service.baseUrl, secret).get("/api/v1/usage")).json()).aesthetic_quotes.used as number
  const media = async (secret: string) =>
    (await (await client(service.baseUrl, secret).get("/api/v1/media?limit=100")).json()).data as Array<
      { id: string; tags: Array<string> }
    >
  return { start, used, media }
}

export const manifestOf = (out: string) =>
  fs.readFileSync(Path.join(out, "batch.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))

export const videosIn = (out: string) => fs.readdirSync(out).filter((f) => f.endsWith(".mp4")).sort()
