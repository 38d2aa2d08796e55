import { fingerprint } from "@pic2video/cluster/config/InstallationSecrets"
import * as TokenCipher from "@pic2video/cluster/drive/TokenCipher"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { admin, adminOk, client, makeShared, type Service, type Shared, startService } from "../support/service.ts"

/**
 * Rotating the installation's secrets without downtime (docs/operations.md,
 * "Rotating secrets"). The key-hashing secret and the drive-token key are changed while keys minted
 * before keep working: during the window (`…_PREVIOUS` set) a key hashed under the old secret
 * authenticates and is stored again under the new one; drive tokens decrypt under either key and
 * `admin secrets reencrypt` stores them under the new one. Once the previous values are dropped, a
 * key that was never used during the window no longer authenticates (it must be re-issued) — which
 * is why the window lasts until every key has been used or re-issued.
 */
const b64 = () => randomBytes(32).toString("base64")
const old = { hash: b64(), token: b64() }
const next = { hash: b64(), token: b64() }

let shared: Shared
let db: pg.Client
let service: Service | undefined

const start = async (vars: Record<string, string>) => {
  await service?.stop()
  service = await startService(shared, vars)
  return service
}
const oldOnly = { API_KEY_HASH_KEY: old.hash, TOKEN_ENCRYPTION_KEY: old.token }
const windowOpen = {
  API_KEY_HASH_KEY: next.hash,
  API_KEY_HASH_KEY_PREVIOUS: old.hash,
  TOKEN_ENCRYPTION_KEY: next.token,
  TOKEN_ENCRYPTION_KEY_PREVIOUS: old.token
}
const newOnly = { API_KEY_HASH_KEY: next.hash, TOKEN_ENCRYPTION_KEY: next.token }

const cipherOf = (key: string) =>
  Effect.runSync(TokenCipher.make(Redacted.make(new Uint8Array(Buffer.from(key, "base64")))))
const setting = async (name: string) =>
  (await db.query("SELECT value FROM service_settings WHERE name = $1", [name])).rows[0]?.value
const hashOf = async (keyId: string) =>
  Buffer.from((await db.query("SELECT secret_hash FROM api_keys WHERE id = $1", [keyId])).rows[0].secret_hash).toString(
    "hex"
  )
const status = async (secret: string) => (await client(service!.baseUrl, secret).get("/api/v1/media")).status

beforeAll(async () => {
  shared = await makeShared()
  db = new pg.Client({ connectionString: shared.databaseUrl })
  await db.connect()
})

afterAll(async () => {
  await db?.end()
  await service?.stop()
})

it("keys and drive tokens from before a rotation keep working through it", async () => {
  // before: the installation's secrets are `old`
  let svc = await start(oldOnly)
  const ws = await adminOk(svc.env, "workspace", "create", "--name", "Acme", "--plan", "studio")
  const used = await adminOk(svc.env, "key", "create", ws.id, "--scopes", "media:read", "--name", "used")
  const idle = await adminOk(svc.env, "key", "create", ws.id, "--scopes", "media:read", "--name", "idle")
  expect(await status(used.secret)).toBe(200)
  // a drive connection whose tokens are stored under the old key
  const tokens = JSON.stringify({
    accessToken: "at-1",
    refreshToken: "rt-1",
    expiresAt: Date.now() + 3600_000,
    scopes: ["drive.readonly"]
  })
  const stored = Effect.runSync(cipherOf(old.token).encrypt(tokens, ws.id))
  await db.query(
    `INSERT INTO integrations (workspace_id, tokens_ciphertext, scopes, connected_at, updated_at) VALUES ($1, $2, $3, now(), now())`,
    [ws.id, stored, ["drive.readonly"]]
  )
  expect(await setting("api_key_hash_key_fingerprint")).toBe(fingerprint(Buffer.from(old.hash, "base64")))

  // the window: new values current, old ones previous
  svc = await start(windowOpen)
  expect(await setting("api_key_hash_key_fingerprint")).toBe(fingerprint(Buffer.from(next.hash, "base64")))
  expect(await setting("token_encryption_key_fingerprint")).toBe(fingerprint(Buffer.from(next.token, "base64")))
  const hashBefore = await hashOf(used.id)
  expect(await status(used.secret)).toBe(200)
  // stored again under the new secret by its use
  expect(await hashOf(used.id)).not.toBe(hashBefore)
  // and its use recorded with it (the operator's list of keys not yet moved: docs, step 5)
  const lastUsed = (await db.query("SELECT last_used_at FROM api_keys WHERE id = $1", [used.id])).rows[0].last_used_at
  const switched =
    (await db.query("SELECT updated_at FROM service_settings WHERE name = 'api_key_hash_key_fingerprint'"))
      .rows[0].updated_at
  expect(lastUsed.getTime()).toBeGreaterThanOrEqual(switched.getTime())
  expect(await status(used.secret)).toBe(200)
  const minted = await adminOk(
    svc.env,
    "key",
    "create",
    ws.id,
    "--scopes",
    "media:read",
    "--name",
    "minted in the window"
  )
  expect(await status(minted.secret)).toBe(200)

  // a process still holding only the old secret is refused now, in one line naming the variable
  const stale = await admin({ ...svc.env, ...oldOnly }, "workspace", "show", ws.id)
  expect(stale.code).toBe(1)
  expect(stale.stderr.trim().split("\n")).toHaveLength(1)
  expect(stale.stderr).toContain("API_KEY_HASH_KEY is not the installation's key-hashing secret")
  // one started with the first step's settings (old current, new accepted) is not: it accepts both
  const firstStep = await admin(
    { ...svc.env, ...oldOnly, API_KEY_HASH_KEY_PREVIOUS: next.hash, TOKEN_ENCRYPTION_KEY_PREVIOUS: next.token },
    "workspace",
    "show",
    ws.id
  )
  expect(firstStep.code, firstStep.stderr).toBe(0)
  expect(await setting("api_key_hash_key_fingerprint")).toBe(fingerprint(Buffer.from(next.hash, "base64")))

  // the drive tokens, stored again under the new key
  const reencrypted = await adminOk(svc.env, "secrets", "reencrypt")
  expect(reencrypted).toEqual({
    object: "token_reencryption",
    drive_connections: 1,
    reencrypted: 1,
    undecryptable_workspaces: []
  })
  const row = (await db.query("SELECT tokens_ciphertext FROM integrations WHERE workspace_id = $1", [ws.id])).rows[0]
  expect(Effect.runSync(cipherOf(next.token).decrypt(row.tokens_ciphertext, ws.id))).toBe(tokens)
  expect(Effect.runSync(Effect.flip(cipherOf(old.token).decrypt(row.tokens_ciphertext, ws.id))).reason).toBe(
    "authentication_failed"
  )
  expect(await adminOk(svc.env, "secrets", "reencrypt")).toMatchObject({ drive_connections: 1, reencrypted: 0 })
  // a process still on the first step's settings stores under the installation's (new) value, not
  // back under its old one: nothing flips between the two while processes of both steps run
  const firstStepEnv = {
    ...svc.env,
    ...oldOnly,
    API_KEY_HASH_KEY_PREVIOUS: next.hash,
    TOKEN_ENCRYPTION_KEY_PREVIOUS: next.token
  }
  expect(await adminOk(firstStepEnv, "secrets", "reencrypt")).toMatchObject({ drive_connections: 1, reencrypted: 0 })
  const mintedByFirstStep = await adminOk(
    firstStepEnv,
    "key",
    "create",
    ws.id,
    "--scopes",
    "media:read",
    "--name",
    "first step"
  )

  // the window closed: the previous values dropped
  await start(newOnly)
  expect(await status(used.secret)).toBe(200)
  expect(await status(minted.secret)).toBe(200)
  expect(await status(mintedByFirstStep.secret)).toBe(200)
  // never used during the window: still hashed under the old secret, which no process holds now
  const refused = await client(service!.baseUrl, idle.secret).get("/api/v1/media")
  expect(refused.status).toBe(401)
  expect((await refused.json()).error.code).toBe("invalid_api_key")
})
