import ffprobeInstaller from "@ffprobe-installer/ffprobe"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { expect } from "vitest"
import { client, photo, type Service, waitFor } from "../support/service.ts"

/**
 * Helpers for the render suite (issue #4): polling a render to its end, probing the produced MP4,
 * finding which runner process is encoding (its ffmpeg child), and small HTTP shorthands.
 */
export type Api = ReturnType<typeof client>

export const terminal = new Set(["completed", "failed", "canceled"])

export const renderFields = [
  "asset",
  "completed_at",
  "created_at",
  "error",
  "id",
  "idempotency_key",
  "metadata",
  "object",
  "progress",
  "status",
  "type",
  "updated_at"
]

/** Races a step against a deadline; on expiry the error names the step and carries the processes' state and log tails. */
export const withTimeout = async <A>(
  what: string,
  ms: number,
  work: Promise<A>,
  services: ReadonlyArray<Service | undefined> = []
): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      const states = await Promise.all(services.map(async (svc) => {
        if (svc === undefined) return ""
        const ps = await new Promise<string>((resolve) =>
          execFile(
            "ps",
            ["-o", "pid,pcpu,stat,etime,comm", "-p", String(svc.process.pid)],
            (_e, out) => resolve(out.trim())
          )
        )
        return `--- pid ${svc.process.pid} (${svc.baseUrl}) ---\n${ps}\n${svc.output().slice(-2500)}`
      }))
      reject(new Error(`${what}: no answer within ${ms} ms\n${states.join("\n")}`))
    }, ms)
  })
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}

export const uploadPhoto = async (api: Api, name = "rocket.jpg", service?: Service) => {
  const res = await withTimeout(`upload of ${name}`, 60_000, api.upload(photo(name), { filename: name }), [service])
  const body = await res.json()
  expect(res.status, JSON.stringify(body)).toBe(201)
  return body as { id: string }
}

export const createRender = async (api: Api, body: Record<string, unknown>, headers?: Record<string, string>) => {
  const res = await withTimeout("POST /api/v1/renders", 60_000, api.postJson("/api/v1/renders", body, headers))
  const json = await res.json()
  expect(res.status, JSON.stringify(json)).toBe(202)
  return json as { object: "render"; id: string; status: "queued" }
}

export const getRender = async (api: Api, id: string) => {
  const res = await withTimeout(`GET /api/v1/renders/${id}`, 60_000, api.get(`/api/v1/renders/${id}`))
  const json = await res.json()
  expect(res.status, JSON.stringify(json)).toBe(200)
  return json
}

export const usedOf = async (api: Api) => {
  const res = await api.get("/api/v1/usage")
  const json = await res.json()
  expect(res.status, JSON.stringify(json)).toBe(200)
  return json.aesthetic_quotes.used as number
}

/** A render as GET /api/v1/renders/{id} answers it. */
export type RenderDocument = Awaited<ReturnType<typeof getRender>>

/** Polls until the render is terminal; returns the final document and the distinct statuses seen in order. */
export const pollToEnd = async (api: Api, id: string, timeoutMs: number, onPoll?: (render: RenderDocument) => void) => {
  const seen: Array<string> = []
  let render: RenderDocument
  try {
    await waitFor(
      async () => {
        render = await getRender(api, id)
        onPoll?.(render)
        if (seen[seen.length - 1] !== render.status) seen.push(render.status)
        return terminal.has(render.status)
      },
      timeoutMs,
      `render ${id} to finish`
    )
  } catch (e) {
    throw new Error(`${(e as Error).message}; statuses seen ${JSON.stringify(seen)}; last ${JSON.stringify(render)}`)
  }
  return { render, seen }
}

export interface Probe {
  readonly width: number
  readonly height: number
  readonly codec: string
  readonly profile: string
  readonly pixFmt: string
  readonly durationSec: number
  readonly fps: number
}

/** ffprobe over the downloaded bytes (the npm-shipped binary, so the test needs nothing installed). */
export const probeBytes = async (bytes: Uint8Array): Promise<Probe> => {
  const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-probe-"))
  const file = Path.join(dir, "video.mp4")
  fs.writeFileSync(file, bytes)
  try {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        ffprobeInstaller.path,
        ["-v", "error", "-show_streams", "-show_format", "-of", "json", file],
        { maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => (err ? reject(new Error(`ffprobe: ${err.message}\n${stderr}`)) : resolve(stdout))
      )
    )
    const data = JSON.parse(out)
    const v = data.streams.find((s: { readonly codec_type: string }) => s.codec_type === "video")
    const [a, b] = String(v?.avg_frame_rate ?? "0/1").split("/").map(Number)
    return {
      width: v?.width,
      height: v?.height,
      codec: v?.codec_name,
      profile: v?.profile,
      pixFmt: v?.pix_fmt,
      durationSec: Number(data.format?.duration),
      fps: b ? a / b : a
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Downloads a completed render and checks the response headers exactly and the video stream. */
export const downloadAndProbe = async (api: Api, id: string) => {
  const res = await api.get(`/api/v1/renders/${id}/download`)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toBe("video/mp4")
  expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${id}.mp4"`)
  expect(res.headers.get("cache-control")).toBe("private, no-store")
  const bytes = new Uint8Array(await res.arrayBuffer())
  const probe = await probeBytes(bytes)
  expect(probe).toMatchObject({ width: 1080, height: 1920, codec: "h264", pixFmt: "yuv420p" })
  return { bytes, probe, headers: res.headers }
}

/** Command names of a process's direct children (`ps --ppid`). */
export const childCommands = (pid: number) =>
  new Promise<Array<string>>((resolve) =>
    execFile(
      "ps",
      ["--ppid", String(pid), "-o", "comm="],
      (_err, stdout) => resolve(stdout.split("\n").map((s) => s.trim()).filter((s) => s !== ""))
    )
  )

export const isEncoding = async (pid: number) => (await childCommands(pid)).some((c) => c.startsWith("ffmpeg"))

/** Waits until exactly one of the given processes has an ffmpeg child; returns its index. */
export const findEncoder = async (pids: ReadonlyArray<number>, timeoutMs: number) => {
  let found = -1
  await waitFor(
    async () => {
      const flags = await Promise.all(pids.map(isEncoding))
      const hits = flags.flatMap((f, i) => (f ? [i] : []))
      if (hits.length === 1) found = hits[0]
      return hits.length === 1
    },
    timeoutMs,
    "a runner to start encoding"
  )
  return found
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** SIGTERM (or the given signal); a process still alive after `graceMs` is SIGKILLed and its log tail reported. */
export const stopOrKill = async (
  service: Service | undefined,
  graceMs = 30_000,
  signal: NodeJS.Signals = "SIGTERM"
) => {
  if (service === undefined || service.process.exitCode !== null || service.process.signalCode !== null) return
  let hung = false
  const timer = setTimeout(() => {
    hung = true
    service.process.kill("SIGKILL")
  }, graceMs)
  await service.stop(signal)
  clearTimeout(timer)
  if (hung) {
    console.error(
      `service pid ${service.process.pid} did not exit within ${graceMs} ms of ${signal}; log tail:\n${
        service.output().slice(-5000)
      }`
    )
  }
  return hung
}
