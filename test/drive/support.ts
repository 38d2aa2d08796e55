import { crc32 } from "@pic2video/domain/Crc32"
import sharp from "sharp"
import { expect } from "vitest"
import { type DriveEmulator, startDriveEmulator } from "../support/drive-emulator.ts"
import type { Json } from "../support/limits.ts"
import { client, freePort, type Service, type Shared, startService, workspaceWithKey } from "../support/service.ts"

/**
 * Shared steps of the drive suite: a service wired to the drive emulator, the consent a person
 * makes in a browser, and polling an import to its end. Everything goes over HTTP.
 */
export const CALLBACK_PATH = "/oauth/cloud_drive/callback"
export const READONLY_SCOPE = "https://www.googleapis.com/auth/drive.readonly"
export const MiB = 1024 * 1024

export type Api = ReturnType<typeof client>

/** A port chosen before start, so PUBLIC_BASE_URL (and the OAuth redirect URI) can name it. */
export const reservePort = async () => {
  const port = await freePort()
  return { port, baseUrl: `http://127.0.0.1:${port}` }
}

/** Starts the service pointed at the emulator, with a fast drive retry policy. */
export const startDriveService = async (
  shared: Shared,
  emulator: DriveEmulator | undefined,
  at: { readonly port: number; readonly baseUrl: string },
  extra: Record<string, string> = {}
): Promise<Service> =>
  startService(shared, {
    ...(emulator === undefined ? {} : emulator.env()),
    PORT: String(at.port),
    PUBLIC_BASE_URL: at.baseUrl,
    DRIVE_RETRY_BASE_MS: "10",
    ...extra
  })

export const driveEmulatorFor = (...baseUrls: Array<string>) =>
  startDriveEmulator({ redirectUris: baseUrls.map((b) => `${b}${CALLBACK_PATH}`) })

/** connect → consent at the provider → the browser lands on the callback. Returns the callback response. */
export const consent = async (service: Service, api: Api, emulator: DriveEmulator) => {
  const connect = await api.get("/api/v1/integrations/cloud/connect")
  expect(connect.status).toBe(200)
  const body = await connect.json()
  const redirect = await emulator.consent(body.authorization_url)
  const callbackUrl = `${service.baseUrl}${CALLBACK_PATH}?${new URLSearchParams(redirect)}`
  return { connect: body, redirect, callbackUrl, callback: await fetch(callbackUrl) }
}

/** A workspace with a key and a connected drive. */
export const connectedWorkspace = async (
  service: Service,
  emulator: DriveEmulator,
  opts: Parameters<typeof workspaceWithKey>[1] = {}
) => {
  const ws = await workspaceWithKey(service.env, opts)
  const api = client(service.baseUrl, ws.secret)
  const { callback } = await consent(service, api, emulator)
  expect(callback.status, await callback.clone().text()).toBe(200)
  return { ...ws, api }
}

export const createImport = (api: Api, folderId: string, headers?: Record<string, string>) =>
  api.postJson("/api/v1/media/import", { provider: "cloud_drive", folder_id: folderId }, headers)

export const terminal = new Set(["completed", "partial", "failed"])

/** Polls the import (every 250 ms) until it is terminal and returns the document. */
export const waitForImport = async (api: Api, id: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  let last: Json
  while (Date.now() < deadline) {
    const r = await api.get(`/api/v1/media/imports/${id}`)
    const text = await r.text()
    if (r.status !== 200) throw new Error(`GET import ${id}: ${r.status} ${text}`)
    last = JSON.parse(text)
    if (terminal.has(last.status)) return last
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`import ${id} did not end within ${timeoutMs} ms; last seen: ${JSON.stringify(last)?.slice(0, 800)}`)
}

/** Every media of the workspace (pages followed). */
export const allMedia = async (api: Api) => {
  const out: Array<Json> = []
  let cursor: string | null = null
  do {
    const r: Response = await api.get(
      `/api/v1/media?limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    )
    expect(r.status).toBe(200)
    const page = await r.json()
    out.push(...page.data)
    cursor = page.next_cursor
  } while (cursor !== null)
  return out
}

/** A small image of the given format; `shade` makes its bytes differ. */
export const image = (format: "jpeg" | "png" | "webp" | "gif", shade = 0, width = 24, height = 16) =>
  sharp({ create: { width, height, channels: 3, background: { r: (40 + shade * 7) % 256, g: 120, b: 200 } } })[format]()
    .toBuffer()
    .then((b) => new Uint8Array(b))

/** Pads a PNG with a private ancillary chunk (decoders skip it) to roughly `bytes`. */
export const paddedPng = async (bytes: number) => {
  const png = Buffer.from(await image("png"))
  const pad = Math.max(0, bytes - png.length - 12)
  const chunk = Buffer.alloc(12 + pad)
  chunk.writeUInt32BE(pad, 0)
  chunk.write("prVt", 4, "latin1")
  chunk.fill(0x61, 8, 8 + pad)
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + pad)), 8 + pad)
  const iend = png.length - 12
  return new Uint8Array(Buffer.concat([png.subarray(0, iend), chunk, png.subarray(iend)]))
}

/** Every token the emulator ever issued (access, refresh, authorization codes). */
export const allTokens = (emulator: DriveEmulator) => {
  const t = emulator.issuedTokens()
  return [...t.accessTokens, ...t.refreshTokens, ...t.codes]
}

export const expectNoToken = (text: string, emulator: DriveEmulator) => {
  for (const token of allTokens(emulator)) expect(text.includes(token), "a drive token leaked").toBe(false)
}
