import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectOk } from "../support/limits.ts"
import { admin, client, makeShared, photo, type Service, startService } from "../support/service.ts"
import { type Admin, inProcessAdmin } from "./admin.ts"

/**
 * The operator CLI (contract §2, §3): exactly one JSON document on stdout and exit 0, or
 * `{"error":{code,message}}` on stderr and a non-zero exit; document shapes field for field; plan
 * defaults; and all of it while the server runs on the same database.
 *
 * Every command and each refusal the brief names runs through the real binary (`ok`/`fails`);
 * the many variations of plan defaults and option checks run the same command code in process
 * (`run`/`refused`), because each binary start costs about 2 s of CPU.
 */
const GiB = 1024 ** 3
const workspaceKeys = [
  "api_enabled",
  "created_at",
  "cycle_start",
  "id",
  "included",
  "name",
  "object",
  "plan",
  "status",
  "storage_budget_bytes"
]
const apiKeyKeys = [
  "created_at",
  "creates_per_minute",
  "expires_at",
  "id",
  "last_used_at",
  "name",
  "object",
  "reads_per_minute",
  "revoked_at",
  "scopes",
  "spend_cap_24h",
  "uploads_per_minute",
  "workspace_id"
]
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let service: Service
let env: Record<string, string>
let ops: Admin

beforeAll(async () => {
  service = await startService(await makeShared())
  env = service.env
  ops = inProcessAdmin(env)
})

afterAll(async () => {
  await ops?.dispose()
  expect(await service?.stop()).toBe(0)
})

/** The command's code in process: its document, or its error. */
const run = (...args: Array<string>) => ops.ok(...args)
const refused = async (...args: Array<string>) => {
  const r = await ops.attempt(...args)
  expect(r.ok, `admin ${args.join(" ")} should fail`).toBe(false)
  return r.json.error as { code: string; message: string }
}

/** Runs the binary; asserts the success contract (one JSON document, nothing on stderr). */
const ok = async (...args: Array<string>) => {
  const r = await admin(env, ...args)
  expect(r.code, `admin ${args.join(" ")}: ${r.stderr}`).toBe(0)
  expect(r.stdout.trim().split("\n").length).toBe(1)
  expect(r.stderr).toBe("")
  return JSON.parse(r.stdout)
}

/** Runs the binary; asserts the failure contract and returns the error. */
const fails = async (...args: Array<string>) => {
  const r = await admin(env, ...args)
  expect(r.code, `admin ${args.join(" ")} should fail; stdout: ${r.stdout}`).not.toBe(0)
  expect(r.code).not.toBeNull()
  expect(r.stdout).toBe("")
  const doc = JSON.parse(r.stderr.trim())
  expect(Object.keys(doc)).toEqual(["error"])
  expect(Object.keys(doc.error).sort()).toEqual(["code", "message"])
  expect(typeof doc.error.message).toBe("string")
  return doc.error as { code: string; message: string }
}

const expectWorkspace = (w: Readonly<Record<string, unknown>>) => {
  expect(Object.keys(w).sort()).toEqual(workspaceKeys)
  expect(w.object).toBe("workspace")
  expect(typeof w.id).toBe("string")
  expect(w.created_at).toMatch(iso)
  expect(w.cycle_start).toMatch(iso)
  expect(w.included === null || Number.isInteger(w.included)).toBe(true)
  expect(Number.isInteger(w.storage_budget_bytes)).toBe(true)
}

const expectApiKey = (k: Readonly<Record<string, unknown>>, withSecret: boolean) => {
  expect(Object.keys(k).sort()).toEqual(withSecret ? [...apiKeyKeys, "secret"].sort() : apiKeyKeys)
  expect(k.object).toBe("api_key")
  expect(k.created_at).toMatch(iso)
  for (const f of ["creates_per_minute", "reads_per_minute", "uploads_per_minute"]) {
    expect(Number.isInteger(k[f])).toBe(true)
  }
  expect(k.spend_cap_24h === null || Number.isInteger(k.spend_cap_24h)).toBe(true)
}

describe.concurrent("workspace commands", () => {
  it("create: document shape and plan defaults (contract §3)", async () => {
    const cases: Array<[Array<string>, { plan: string; included: number | null; storage_budget_bytes: number }]> = [
      [["--plan", "free"], { plan: "free", included: 0, storage_budget_bytes: 0 }],
      [["--plan", "starter"], { plan: "starter", included: 0, storage_budget_bytes: 1 * GiB }],
      [["--plan", "studio"], { plan: "studio", included: 100, storage_budget_bytes: 10 * GiB }],
      [["--plan", "agency"], { plan: "agency", included: 500, storage_budget_bytes: 50 * GiB }],
      [["--plan", "custom"], { plan: "custom", included: null, storage_budget_bytes: 100 * GiB }],
      [["--plan", "custom", "--included", "unlimited"], {
        plan: "custom",
        included: null,
        storage_budget_bytes: 100 * GiB
      }],
      [["--plan", "custom", "--included", "7", "--storage-budget-bytes", "12345"], {
        plan: "custom",
        included: 7,
        storage_budget_bytes: 12345
      }],
      [["--plan", "studio", "--storage-budget-bytes", "999"], {
        plan: "studio",
        included: 100,
        storage_budget_bytes: 999
      }]
    ]
    const docs = [
      // the binary once, the variations in process
      await ok("workspace", "create", "--name", "Plan 0", ...cases[0][0]),
      ...await Promise.all(
        cases.slice(1).map(([args], i) => run("workspace", "create", "--name", `Plan ${i + 1}`, ...args))
      )
    ]
    docs.forEach((w, i) => {
      expectWorkspace(w)
      expect(w).toMatchObject({ ...cases[i][1], name: `Plan ${i}`, status: "active", api_enabled: true })
      // a new workspace's billing cycle starts at its creation
      expect(w.cycle_start).toBe(w.created_at)
      expect(Math.abs(Date.parse(w.created_at) - Date.now())).toBeLessThan(120_000)
    })
    expect(new Set(docs.map((w) => w.id)).size).toBe(docs.length)
  })

  it("update and show: same document, changes applied; a plan change brings that plan's allowance", async () => {
    const w = await run("workspace", "create", "--name", "Updatable", "--plan", "studio")
    const updated = await ok(
      "workspace",
      "update",
      w.id,
      "--plan",
      "agency",
      "--status",
      "inactive",
      "--api-enabled",
      "false"
    )
    expectWorkspace(updated)
    expect(updated).toMatchObject({
      id: w.id,
      name: "Updatable",
      plan: "agency",
      status: "inactive",
      api_enabled: false,
      included: 500,
      storage_budget_bytes: 50 * GiB
    })
    expect(updated.created_at).toBe(w.created_at)
    const custom = await run(
      "workspace",
      "update",
      w.id,
      "--plan",
      "custom",
      "--included",
      "unlimited",
      "--storage-budget-bytes",
      "42"
    )
    expect(custom).toMatchObject({ plan: "custom", included: null, storage_budget_bytes: 42 })
    const limited = await run("workspace", "update", w.id, "--included", "3")
    expect(limited).toMatchObject({ plan: "custom", included: 3, storage_budget_bytes: 42, status: "inactive" })
    const shown = await ok("workspace", "show", w.id)
    expectWorkspace(shown)
    expect(shown).toEqual(limited)
  })

  it("bad input is an error document on stderr with a non-zero exit", async () => {
    const badPlan = await fails("workspace", "create", "--name", "Bad", "--plan", "platinum")
    expect(badPlan.code).toBe("validation_failed")
    expect(badPlan.message).toMatch(/plan/)
    const errors = await Promise.all([
      refused("workspace", "create", "--name", "Bad"),
      refused("workspace", "create", "--plan", "studio"),
      refused("workspace", "create", "--name", "Bad", "--plan", "custom", "--included", "-1"),
      refused("workspace", "create", "--name", "Bad", "--plan", "studio", "--storage-budget-bytes", "1.5"),
      refused("workspace", "update", "ws_doesnotexist00000000", "--plan", "studio"),
      refused("workspace", "show", "ws_doesnotexist00000000"),
      refused("workspace", "frobnicate")
    ])
    for (const e of errors) expect(e.code).toBe("validation_failed")
    const w = await run("workspace", "create", "--name", "Strict", "--plan", "studio")
    for (const args of [["--plan", "gold"], ["--status", "paused"], ["--api-enabled", "yes"], ["--colour", "red"]]) {
      expect((await refused("workspace", "update", w.id, ...args)).code).toBe("validation_failed")
    }
  })
})

describe.concurrent("key commands", () => {
  it("create shows the secret once (p2v_live_…); list has no secrets; revoke sets revoked_at; the key works at once", async () => {
    const w = await run("workspace", "create", "--name", "Keys", "--plan", "starter")
    const k = await ok(
      "key",
      "create",
      w.id,
      "--scopes",
      "media:read,media:write",
      "--name",
      "ci",
      "--spend-cap-24h",
      "3",
      "--creates-per-minute",
      "7",
      "--reads-per-minute",
      "8",
      "--uploads-per-minute",
      "9",
      "--expires-at",
      "2099-01-02T03:04:05Z"
    )
    expectApiKey(k, true)
    expect(k).toMatchObject({
      workspace_id: w.id,
      name: "ci",
      scopes: ["media:read", "media:write"],
      spend_cap_24h: 3,
      creates_per_minute: 7,
      reads_per_minute: 8,
      uploads_per_minute: 9,
      expires_at: "2099-01-02T03:04:05.000Z",
      revoked_at: null,
      last_used_at: null
    })
    expect(k.secret).toMatch(/^p2v_live_[0-9A-Za-z]{20,}$/)

    // works against the running server immediately
    const res = await client(service.baseUrl, k.secret).get("/api/v1/media")
    await expectOk(res)
    expect(res.headers.get("ratelimit-limit")).toBe("8")

    const plain = await run("key", "create", w.id, "--scopes", "renders:read")
    expectApiKey(plain, true)
    expect(plain).toMatchObject({
      name: "",
      scopes: ["renders:read"],
      spend_cap_24h: null,
      creates_per_minute: 60,
      reads_per_minute: 600,
      uploads_per_minute: 60,
      expires_at: null,
      revoked_at: null
    })
    expect(plain.secret).not.toBe(k.secret)

    const listed = await ok("key", "list", w.id)
    expect(Object.keys(listed).sort()).toEqual(["data", "has_more", "next_cursor", "object"])
    expect(listed).toMatchObject({ object: "list", has_more: false, next_cursor: null })
    expect(listed.data.map((x: { readonly id: string }) => x.id).sort()).toEqual([k.id, plain.id].sort())
    for (const item of listed.data) expectApiKey(item, false)
    expect(JSON.stringify(listed)).not.toContain(k.secret)
    expect(JSON.stringify(listed)).not.toContain("p2v_live_")
    // last_used_at is recorded once the key has been used
    expect(
      listed.data.find((x: { readonly id: string; readonly last_used_at: string | null }) => x.id === k.id).last_used_at
    ).toMatch(iso)

    const revoked = await ok("key", "revoke", k.id)
    expectApiKey(revoked, false)
    expect(revoked.revoked_at).toMatch(iso)
    expect(revoked).toMatchObject({ id: k.id, name: "ci" })
    const after = await client(service.baseUrl, k.secret).get("/api/v1/media")
    expect(after.status).toBe(401)
    expect((await after.json()).error.code).toBe("api_key_revoked")
    // revoking again keeps the first revocation time
    expect((await run("key", "revoke", k.id)).revoked_at).toBe(revoked.revoked_at)
  })

  it("an --expires-at in the past is accepted and yields an expired key", async () => {
    const w = await run("workspace", "create", "--name", "Expired", "--plan", "studio")
    const k = await run("key", "create", w.id, "--scopes", "media:read", "--expires-at", "2020-01-01T00:00:00Z")
    expect(k.expires_at).toBe("2020-01-01T00:00:00.000Z")
    const res = await client(service.baseUrl, k.secret).get("/api/v1/media")
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe("api_key_expired")
  })

  it("refusals: free plan is tier_not_eligible; unknown scope, no scope and bad numbers are refused", async () => {
    const [free, paid] = await Promise.all([
      run("workspace", "create", "--name", "Free", "--plan", "free"),
      run("workspace", "create", "--name", "Paid", "--plan", "studio")
    ])
    const tier = await fails("key", "create", free.id, "--scopes", "media:read")
    expect(tier.code).toBe("tier_not_eligible")
    const unknownScope = await fails("key", "create", paid.id, "--scopes", "media:read,media:delete")
    expect(unknownScope.code).toBe("validation_failed")
    expect(unknownScope.message).toMatch(/media:delete/)
    const others = await Promise.all([
      refused("key", "create", paid.id, "--scopes", "media:*"),
      refused("key", "create", paid.id, "--scopes", "admin"),
      refused("key", "create", paid.id, "--scopes", "Media:Read"),
      refused("key", "create", paid.id, "--scopes", ""),
      refused("key", "create", paid.id),
      refused("key", "create", paid.id, "--scopes", "media:read", "--reads-per-minute", "many"),
      refused("key", "create", paid.id, "--scopes", "media:read", "--spend-cap-24h", "-2"),
      refused("key", "create", paid.id, "--scopes", "media:read", "--expires-at", "not-a-date"),
      refused("key", "create", "ws_doesnotexist00000000", "--scopes", "media:read"),
      refused("key", "revoke", "key_doesnotexist000000"),
      refused("key", "list", "ws_doesnotexist00000000")
    ])
    for (const e of others) expect(e.code).toBe("validation_failed")
    // a workspace moved to free cannot mint either
    const demoted = await run("workspace", "create", "--name", "Demoted", "--plan", "studio")
    await run("workspace", "update", demoted.id, "--plan", "free")
    expect((await refused("key", "create", demoted.id, "--scopes", "media:read")).code).toBe("tier_not_eligible")
    // nothing was minted by the refusals
    expect((await run("key", "list", paid.id)).data).toEqual([])
  })
})

describe("media archive", () => {
  it("returns the media document; preview_url uses the default PUBLIC_BASE_URL (http://localhost:$PORT)", async () => {
    const w = await run("workspace", "create", "--name", "Archive", "--plan", "studio")
    const k = await run("key", "create", w.id, "--scopes", "media:read,media:write")
    const created = await expectOk(
      await client(service.baseUrl, k.secret).upload(photo("rocket.jpg"), { filename: "rocket.jpg", label: "L" }),
      201
    )
    expect(created.preview_url).toBe(`http://localhost:${env.PORT}/api/v1/media/${created.id}/preview`)
    const archived = await ok("media", "archive", created.id)
    expect(Object.keys(archived).sort()).toEqual(Object.keys(created).sort())
    expect(archived).toMatchObject({
      object: "media",
      id: created.id,
      label: "L",
      mime_type: "image/jpeg",
      file_size_bytes: created.file_size_bytes,
      preview_url: created.preview_url,
      preview_expires_at: null,
      width: 640,
      height: 427
    })
    for (const id of ["not-a-uuid", crypto.randomUUID()]) {
      expect((await refused("media", "archive", id)).code).toBe("unknown_media")
    }
  })

  it("given only DATABASE_URL / DATA_DIR (contract §2), it prints the URLs the running service serves under", async () => {
    const w = await run("workspace", "create", "--name", "Archive2", "--plan", "studio")
    const k = await run("key", "create", w.id, "--scopes", "media:read,media:write")
    const created = await expectOk(
      await client(service.baseUrl, k.secret).upload(photo("rocket.jpg"), { filename: "rocket.jpg" }),
      201
    )
    const { PORT: _port, PUBLIC_BASE_URL: _base, ...withoutPort } = env
    expect(Number(env.PORT)).not.toBe(8080)
    const r = await admin(withoutPort, "media", "archive", created.id)
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).preview_url).toBe(created.preview_url)
  })
})
