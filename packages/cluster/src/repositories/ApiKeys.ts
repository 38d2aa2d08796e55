import { SqlClient } from "@effect/sql"
import { ApiKeyToken, Errors, Plans, Scopes, Text } from "@pic2video/domain"
import { DateTime, Effect } from "effect"
import { KeyHasher } from "../config/KeyHasher.ts"
import * as Workspaces from "./Workspaces.ts"

export interface ApiKeyRow {
  readonly id: string
  readonly workspace_id: string
  readonly name: string
  readonly secret_hash: Uint8Array
  readonly scopes: ReadonlyArray<string>
  readonly spend_cap_24h: number | null
  readonly creates_per_minute: number
  readonly reads_per_minute: number
  readonly uploads_per_minute: number
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
  readonly last_used_at: Date | null
  readonly created_at: Date
}

/** contract §4.5: default per-minute budgets (spec "Limits"). */
export const defaultLimits = { creates: 60, reads: 600, uploads: 60 } as const

export const toDocument = (k: ApiKeyRow) => ({
  object: "api_key" as const,
  id: k.id,
  workspace_id: k.workspace_id,
  name: k.name,
  scopes: [...k.scopes],
  spend_cap_24h: k.spend_cap_24h,
  creates_per_minute: k.creates_per_minute,
  reads_per_minute: k.reads_per_minute,
  uploads_per_minute: k.uploads_per_minute,
  expires_at: k.expires_at?.toISOString() ?? null,
  revoked_at: k.revoked_at?.toISOString() ?? null,
  last_used_at: k.last_used_at?.toISOString() ?? null,
  created_at: k.created_at.toISOString()
})

export interface NewKey {
  readonly workspaceId: string
  readonly scopes: ReadonlyArray<string>
  readonly name?: string
  readonly spendCap24h?: number | null
  readonly createsPerMinute?: number
  readonly readsPerMinute?: number
  readonly uploadsPerMinute?: number
  readonly expiresAt?: Date | null
}

export const create = (k: NewKey) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hasher = yield* KeyHasher
    const workspace = yield* Workspaces.get(k.workspaceId)
    if (!Plans.planDefaults[workspace.plan].canHoldKeys) {
      return yield* Effect.fail(Errors.fail("tier_not_eligible", `the ${workspace.plan} plan cannot hold API keys`))
    }
    const unknown = k.scopes.filter((s) => !Scopes.isScope(s))
    if (unknown.length > 0 || k.scopes.length === 0) {
      return yield* Effect.fail(Errors.fail(
        "validation_failed",
        unknown.length > 0
          ? `unknown scope ${unknown.join(", ")}; scopes are ${Scopes.scopes.join(", ")}`
          : "at least one scope is required"
      ))
    }
    // one rule for every way a key is minted (the operator CLI, the portal), counted in code points
    const nameProblem = Text.lengthProblem(k.name ?? "", 0, Text.maxKeyNameLength)
    if (nameProblem !== undefined) return yield* Effect.fail(Errors.fail("validation_failed", `name ${nameProblem}`))
    const minted = ApiKeyToken.mintToken()
    const createdAt = yield* DateTime.nowAsDate
    const [row] = yield* sql<ApiKeyRow>`
      INSERT INTO api_keys ${
      sql.insert({
        id: minted.keyId,
        workspace_id: workspace.id,
        name: k.name ?? "",
        secret_hash: hasher.hash(minted.secret),
        scopes: [...new Set(k.scopes)],
        spend_cap_24h: k.spendCap24h ?? null,
        creates_per_minute: k.createsPerMinute ?? defaultLimits.creates,
        reads_per_minute: k.readsPerMinute ?? defaultLimits.reads,
        uploads_per_minute: k.uploadsPerMinute ?? defaultLimits.uploads,
        expires_at: k.expiresAt ?? null,
        created_at: createdAt
      })
    }
      RETURNING *`.pipe(Effect.orDie)
    return { ...toDocument(row), secret: minted.token }
  })

export const find = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<ApiKeyRow>`SELECT * FROM api_keys WHERE id = ${id}`
    return rows[0]
  }).pipe(Effect.orDie)

export const revoke = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = yield* DateTime.nowAsDate
    const rows = yield* sql<ApiKeyRow>`
      UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${id} RETURNING *`.pipe(Effect.orDie)
    if (rows.length === 0) return yield* Effect.fail(Errors.fail("validation_failed", `api key ${id} does not exist`))
    return toDocument(rows[0])
  })

export const list = (workspaceId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Workspaces.get(workspaceId)
    const rows = yield* sql<ApiKeyRow>`
      SELECT * FROM api_keys WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC`.pipe(Effect.orDie)
    return { object: "list" as const, data: rows.map(toDocument), has_more: false, next_cursor: null }
  })
