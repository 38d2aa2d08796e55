import { ApiKeyToken, Errors, Plans, Scopes, Text } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { KeyHasher } from "../config/KeyHasher.ts"
import { operation } from "./Repository.ts"
import * as Workspaces from "./WorkspacesRepo.ts"

export const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  secret_hash: Schema.Uint8Array,
  scopes: Schema.Array(Schema.String),
  spend_cap_24h: Schema.NullOr(Schema.Number),
  creates_per_minute: Schema.Number,
  reads_per_minute: Schema.Number,
  uploads_per_minute: Schema.Number,
  expires_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date),
  last_used_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date
})
export interface ApiKeyRow extends Schema.Schema.Type<typeof ApiKeyRow> {}

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

/** The api_keys table: a key's row is written once, revoked at most once, never deleted. */
export class ApiKeysRepo extends Context.Service<ApiKeysRepo>()("pic2video/ApiKeysRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const NewRow = ApiKeyRow.mapFields(Struct.omit(["revoked_at", "last_used_at"]))
    const insert = SqlSchema.findOne({
      Request: NewRow,
      Result: ApiKeyRow,
      execute: (row) => sql`INSERT INTO api_keys ${sql.insert({ ...row, scopes: [...row.scopes] })} RETURNING *`
    })
    const selectById = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ApiKeyRow,
      execute: (id) => sql`SELECT * FROM api_keys WHERE id = ${id}`
    })
    // the first revocation's time stands: revoking again changes nothing
    const revokeById = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, now: Schema.Date }),
      Result: ApiKeyRow,
      execute: ({ id, now }) =>
        sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${id} RETURNING *`
    })
    const selectByWorkspace = SqlSchema.findAll({
      Request: Schema.String,
      Result: ApiKeyRow,
      execute: (workspaceId) =>
        sql`SELECT * FROM api_keys WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC`
    })
    return {
      insert: (row: typeof NewRow.Type) => insert(row).pipe(operation("ApiKeysRepo.insert")),
      find: (id: string) => selectById(id).pipe(Effect.map(Option.getOrUndefined), operation("ApiKeysRepo.find")),
      revoke: (id: string, now: Date) =>
        revokeById({ id, now }).pipe(Effect.map(Option.getOrUndefined), operation("ApiKeysRepo.revoke")),
      listByWorkspace: (workspaceId: string) => selectByWorkspace(workspaceId).pipe(operation("ApiKeysRepo.list"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * Minting a key: the one path for every way a key is made (the operator CLI, the portal), with its
 * plan, scope and name rules (contract §4). The secret is returned once and only its hash is kept.
 */
export const create = (k: NewKey) =>
  Effect.gen(function*() {
    const repo = yield* ApiKeysRepo
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
    const row = yield* repo.insert({
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
      created_at: yield* DateTime.nowAsDate
    })
    return { ...toDocument(row), secret: minted.token }
  })

/** The key's row, or undefined when there is none. */
export const find = (id: string) => Effect.flatMap(ApiKeysRepo, (repo) => repo.find(id))

/** Revokes a key (idempotent: a revoked key keeps its first revocation time); 422 when there is none. */
export const revoke = (id: string) =>
  Effect.gen(function*() {
    const row = yield* (yield* ApiKeysRepo).revoke(id, yield* DateTime.nowAsDate)
    if (row === undefined) return yield* Effect.fail(Errors.fail("validation_failed", `api key ${id} does not exist`))
    return toDocument(row)
  })

/** The workspace's keys, newest first (never a secret); 422 when the workspace does not exist. */
export const list = (workspaceId: string) =>
  Effect.gen(function*() {
    yield* Workspaces.get(workspaceId)
    const rows = yield* (yield* ApiKeysRepo).listByWorkspace(workspaceId)
    return { object: "list" as const, data: rows.map(toDocument), has_more: false, next_cursor: null }
  })
