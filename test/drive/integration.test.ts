import * as fs from "node:fs"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { DriveEmulator } from "../support/drive-emulator.ts"
import { expectError } from "../support/limits.ts"
import { client, makeShared, type Service, type Shared, workspaceWithKey } from "../support/service.ts"
import {
  allTokens,
  CALLBACK_PATH,
  consent,
  createImport,
  driveEmulatorFor,
  expectNoToken,
  READONLY_SCOPE,
  reservePort,
  startDriveService
} from "./support.ts"

/** Every response body the suite saw, to prove no token ever appears in one. */
const seen: Array<string> = []
const record = async (r: Response) => {
  const text = await r.clone().text()
  seen.push(text)
  return r
}

const json = async (r: Response, status: number) => {
  await record(r)
  const text = await r.text()
  expect(r.status, text).toBe(status)
  return JSON.parse(text)
}

const expectHtml = async (r: Response, status: number) => {
  await record(r)
  const text = await r.text()
  expect(r.status, text).toBe(status)
  expect(r.headers.get("content-type") ?? "").toMatch(/^text\/html/)
  expect(text).toMatch(/<html/i)
  return text
}

describe("cloud-drive integration", () => {
  let emulator: DriveEmulator
  let shared: Shared
  let service: Service
  let unconfigured: Service
  /** Workspaces made up front, in parallel (each costs two operator CLI runs). */
  let a: Awaited<ReturnType<typeof workspaceWithKey>>
  let b: Awaited<ReturnType<typeof workspaceWithKey>>
  let c: Awaited<ReturnType<typeof workspaceWithKey>>
  let u: Awaited<ReturnType<typeof workspaceWithKey>>

  beforeAll(async () => {
    const at = await reservePort()
    emulator = await driveEmulatorFor(at.baseUrl)
    shared = await makeShared()
    const [s, un] = await Promise.all([
      startDriveService(shared, emulator, at),
      // the same service without GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET (its own database)
      makeShared().then(async (other) => startDriveService(other, undefined, await reservePort()))
    ])
    service = s
    unconfigured = un
    ;[a, b, c, u] = await Promise.all([
      workspaceWithKey(service.env),
      workspaceWithKey(service.env),
      workspaceWithKey(service.env),
      workspaceWithKey(unconfigured.env)
    ])
  })

  afterAll(async () => {
    const codes = await Promise.all([service?.stop(), unconfigured?.stop()])
    await emulator?.close()
    expect(codes, `${service?.output().slice(-3000)}\n${unconfigured?.output().slice(-3000)}`).toEqual([0, 0])
  })

  it("connect without an OAuth client configured is 503 service_unavailable", async () => {
    const api = client(unconfigured.baseUrl, u.secret)
    await expectError(await api.get("/api/v1/integrations/cloud/connect"), 503, "service_unavailable")
    expect(await json(await api.get("/api/v1/integrations/cloud"), 200)).toEqual({
      object: "integration",
      provider: "cloud_drive",
      connected: false,
      connected_at: null,
      scopes: []
    })
  })

  it("completes the consent: connect, consent at the provider, callback; then connected with read-only scope", async () => {
    const api = client(service.baseUrl, a.secret)

    expect(await json(await api.get("/api/v1/integrations/cloud"), 200)).toEqual({
      object: "integration",
      provider: "cloud_drive",
      connected: false,
      connected_at: null,
      scopes: []
    })

    const before = Date.now()
    const connect = await json(await api.get("/api/v1/integrations/cloud/connect"), 200)
    expect(Object.keys(connect).sort()).toEqual(["authorization_url", "expires_at", "object", "provider"])
    expect(connect).toMatchObject({ object: "oauth_connect", provider: "cloud_drive" })
    const expires = Date.parse(connect.expires_at)
    expect(expires).toBeGreaterThanOrEqual(before + 10 * 60_000 - 5_000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 10 * 60_000 + 5_000)
    const url = new URL(connect.authorization_url)
    expect(`${url.origin}${url.pathname}`).toBe(emulator.authorizeUrl)
    const q = Object.fromEntries(url.searchParams)
    expect(q).toMatchObject({
      response_type: "code",
      client_id: emulator.clientId,
      redirect_uri: `${service.env.PUBLIC_BASE_URL}${CALLBACK_PATH}`,
      scope: READONLY_SCOPE,
      access_type: "offline",
      code_challenge_method: "S256"
    })
    expect(q.state.length).toBeGreaterThanOrEqual(32)
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const redirect = await emulator.consent(connect.authorization_url)
    expect(redirect.state).toBe(q.state)
    const callbackUrl = `${service.baseUrl}${CALLBACK_PATH}?${new URLSearchParams(redirect)}`
    const page = await expectHtml(await fetch(callbackUrl), 200)
    expectNoToken(page, emulator)

    const status = await json(await api.get("/api/v1/integrations/cloud"), 200)
    expect(status).toMatchObject({
      object: "integration",
      provider: "cloud_drive",
      connected: true,
      scopes: [READONLY_SCOPE]
    })
    expect(Date.parse(status.connected_at)).toBeGreaterThanOrEqual(before - 1000)

    // the same callback again: the state is spent, 400, and nothing changes
    await expectHtml(await fetch(callbackUrl), 400)
    expect(await json(await api.get("/api/v1/integrations/cloud"), 200)).toEqual(status)

    // a connect while connected is allowed; completing it replaces the tokens
    const again = await consent(service, api, emulator)
    await expectHtml(again.callback, 200)
    const replaced = await json(await api.get("/api/v1/integrations/cloud"), 200)
    expect(replaced.connected).toBe(true)
    expect(Date.parse(replaced.connected_at)).toBeGreaterThanOrEqual(Date.parse(status.connected_at))
    expect(await json(await api.get("/api/v1/integrations/cloud/folders"), 200)).toMatchObject({ object: "list" })
  })

  it("answers 409 before any connection", async () => {
    const api = client(service.baseUrl, b.secret)
    const folder = emulator.addFolder({ name: "Nope" })
    await expectError(await api.get("/api/v1/integrations/cloud/folders"), 409, "integration_not_connected")
    await expectError(await createImport(api, folder), 409, "integration_not_connected")
    await expectError(await api.del("/api/v1/integrations/cloud"), 409, "integration_not_connected")
    // the create's outcome is remembered under its Idempotency-Key: the same key replays the 409
    const first = await createImport(api, folder, { "idempotency-key": "not-connected-1" })
    await expectError(first, 409, "integration_not_connected")
    const again = await createImport(api, folder, { "idempotency-key": "not-connected-1" })
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    await expectError(again, 409, "integration_not_connected")
  })

  it("refuses a bad or expired state with an HTML 400 and changes nothing", async () => {
    const api = client(service.baseUrl, b.secret)
    const workspace = b.workspace
    await expectHtml(await fetch(`${service.baseUrl}${CALLBACK_PATH}?code=abc&state=not-a-state`), 400)
    await expectHtml(await fetch(`${service.baseUrl}${CALLBACK_PATH}`), 400)

    const connect = await json(await api.get("/api/v1/integrations/cloud/connect"), 200)
    const redirect = await emulator.consent(connect.authorization_url)
    // the 10 minutes pass
    const db = new pg.Client({ connectionString: shared.databaseUrl })
    await db.connect()
    try {
      await db.query(`UPDATE oauth_states SET expires_at = now() - interval '1 second' WHERE workspace_id = $1`, [
        workspace.id
      ])
    } finally {
      await db.end()
    }
    await expectHtml(await fetch(`${service.baseUrl}${CALLBACK_PATH}?${new URLSearchParams(redirect)}`), 400)
    expect(await json(await api.get("/api/v1/integrations/cloud"), 200)).toEqual({
      object: "integration",
      provider: "cloud_drive",
      connected: false,
      connected_at: null,
      scopes: []
    })
    await expectError(await api.get("/api/v1/integrations/cloud/folders"), 409, "integration_not_connected")

    // a consent the person declined: 400 page, still not connected
    const declined = await json(await api.get("/api/v1/integrations/cloud/connect"), 200)
    const state = new URL(declined.authorization_url).searchParams.get("state")!
    await expectHtml(await fetch(`${service.baseUrl}${CALLBACK_PATH}?error=access_denied&state=${state}`), 400)
    expect((await json(await api.get("/api/v1/integrations/cloud"), 200)).connected).toBe(false)
  })

  it("lists sub-folders by name, page by page, with opaque cursors", async () => {
    const api = client(service.baseUrl, a.secret) // connected by the consent test
    const parent = emulator.addFolder({ name: "Library" })
    for (const name of ["delta", "Alpha", "charlie", "Bravo", "echo"]) emulator.addFolder({ name, parent })
    emulator.addFolder({ name: "zz-trashed", parent, trashed: true })
    emulator.addFile({ name: "a-file.jpg", parent, mimeType: "image/jpeg", bytes: "x" })

    emulator.setPagePlan([2, 0, 3])
    try {
      const names: Array<string> = []
      const pages: Array<{ count: number; hasMore: boolean }> = []
      let cursor: string | null = null
      do {
        const query: string = `parent=${parent}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
        const page = await json(await api.get(`/api/v1/integrations/cloud/folders?${query}`), 200)
        expect(Object.keys(page).sort()).toEqual(["data", "has_more", "next_cursor", "object"])
        expect(page.object).toBe("list")
        for (const f of page.data) {
          expect(Object.keys(f).sort()).toEqual(["id", "name"])
          names.push(f.name)
        }
        pages.push({ count: page.data.length, hasMore: page.has_more })
        expect(page.has_more).toBe(page.next_cursor !== null)
        cursor = page.next_cursor
      } while (cursor !== null)
      expect(pages).toEqual([{ count: 2, hasMore: true }, { count: 0, hasMore: true }, { count: 3, hasMore: false }])
      expect(names).toEqual(["Alpha", "Bravo", "charlie", "delta", "echo"])
    } finally {
      emulator.setPagePlan(null)
    }

    // root is the default parent
    const root = await json(await api.get("/api/v1/integrations/cloud/folders"), 200)
    expect(root.data.map((f: { readonly id: string }) => f.id)).toContain(parent)

    await expectError(
      await api.get("/api/v1/integrations/cloud/folders?cursor=not-a-cursor!"),
      422,
      "validation_failed"
    )
    // a cursor belongs to the folder it pages through
    emulator.setPagePlan([1, 1])
    try {
      const first = await json(await api.get(`/api/v1/integrations/cloud/folders?parent=${parent}`), 200)
      expect(first.next_cursor).not.toBeNull()
      await expectError(
        await api.get(`/api/v1/integrations/cloud/folders?cursor=${encodeURIComponent(first.next_cursor)}`),
        422,
        "validation_failed"
      )
    } finally {
      emulator.setPagePlan(null)
    }
    // an id the drive does not know is its 404, whatever characters it has; only a URL is refused as such
    await expectError(await createImport(api, "no.such~folder:1"), 404, "unknown_folder")
    await expectError(
      await api.get("/api/v1/integrations/cloud/folders?parent=no.such~folder:1"),
      404,
      "unknown_folder"
    )
    await expectError(await api.get("/api/v1/integrations/cloud/folders?parent=1NoSuchFolder"), 404, "unknown_folder")
    const file = emulator.addFile({ name: "not-a-folder.png", mimeType: "image/png", bytes: "x" })
    await expectError(await api.get(`/api/v1/integrations/cloud/folders?parent=${file}`), 404, "unknown_folder")
    await expectError(await createImport(api, "1NoSuchFolder"), 404, "unknown_folder")
  })

  it("disconnect revokes at the provider and forgets the connection; then 409 everywhere", async () => {
    const api = client(service.baseUrl, c.secret)
    await expectHtml((await consent(service, api, emulator)).callback, 200)
    expect((await json(await api.get("/api/v1/integrations/cloud"), 200)).connected).toBe(true)
    const folder = emulator.addFolder({ name: "Later" })
    const revokes = emulator.requestCount({ path: "/revoke" })

    const gone = await json(await api.del("/api/v1/integrations/cloud"), 200)
    expect(gone).toEqual({
      object: "integration",
      provider: "cloud_drive",
      connected: false,
      connected_at: null,
      scopes: [],
      revoked: true
    })
    expect(emulator.requestCount({ path: "/revoke" })).toBe(revokes + 1)
    // where Google documents the token (and its client libraries send it): the query string
    expect(emulator.requests.filter((r) => r.path === "/revoke").at(-1)?.query.token).toMatch(/\S/)

    expect(await json(await api.get("/api/v1/integrations/cloud"), 200)).toMatchObject({ connected: false, scopes: [] })
    await expectError(await api.get("/api/v1/integrations/cloud/folders"), 409, "integration_not_connected")
    await expectError(await createImport(api, folder), 409, "integration_not_connected")
    await expectError(await api.del("/api/v1/integrations/cloud"), 409, "integration_not_connected")
  })

  it("refreshes an expired access token and stores the refreshed tokens, encrypted", async () => {
    const api = client(service.baseUrl, a.secret)
    const stored = async () => {
      const db = new pg.Client({ connectionString: shared.databaseUrl })
      await db.connect()
      try {
        return (await db.query(`SELECT tokens_ciphertext FROM integrations WHERE workspace_id = $1`, [a.workspace.id]))
          .rows[0]?.tokens_ciphertext
      } finally {
        await db.end()
      }
    }
    const before = await stored()
    const issued = emulator.issuedTokens().accessTokens.length
    emulator.expireAccessTokens()
    await json(await api.get("/api/v1/integrations/cloud/folders"), 200)
    expect(emulator.issuedTokens().accessTokens.length).toBe(issued + 1)
    const after = await stored()
    expect(after).not.toBe(before)
    // the next call uses the stored, refreshed token: no second refresh
    await json(await api.get("/api/v1/integrations/cloud/folders"), 200)
    expect(emulator.issuedTokens().accessTokens.length).toBe(issued + 1)
  })

  it("keeps tokens encrypted at rest and out of every body and log line", async () => {
    const tokens = allTokens(emulator)
    expect(tokens.length).toBeGreaterThan(4)

    // the database: every row of the tables that hold drive state
    const db = new pg.Client({ connectionString: shared.databaseUrl })
    await db.connect()
    let dump = ""
    try {
      for (
        const table of [
          "integrations",
          "oauth_states",
          "idempotency_records",
          "imports",
          "cluster_messages",
          "cluster_replies"
        ]
      ) {
        const rows = await db.query(`SELECT row_to_json(t)::text AS j FROM ${table} t`)
        dump += rows.rows.map((r) => r.j).join("\n")
      }
      const stored = await db.query(`SELECT tokens_ciphertext FROM integrations`)
      expect(stored.rows.length).toBeGreaterThan(0)
      for (const r of stored.rows) expect(r.tokens_ciphertext).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    } finally {
      await db.end()
    }
    expect(dump.length).toBeGreaterThan(0)
    expectNoToken(dump, emulator)

    // every file under DATA_DIR
    const files: Array<string> = []
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = Path.join(dir, entry.name)
        if (entry.isDirectory()) walk(p)
        else if (entry.isFile()) files.push(p)
      }
    }
    walk(shared.dataDir)
    for (const f of files) expectNoToken(fs.readFileSync(f).toString("latin1"), emulator)

    expectNoToken(seen.join("\n"), emulator)
    expectNoToken(service.output(), emulator)
  })

  it("a provider that answers invalid_grant ends the connection", async () => {
    const api = client(service.baseUrl, a.secret)
    expect((await json(await api.get("/api/v1/integrations/cloud"), 200)).connected).toBe(true)
    emulator.revokeAll()
    emulator.expireAccessTokens()
    await expectError(await api.get("/api/v1/integrations/cloud/folders"), 409, "integration_not_connected")
    expect(await json(await api.get("/api/v1/integrations/cloud"), 200)).toMatchObject({
      connected: false,
      connected_at: null,
      scopes: []
    })
  })
})
