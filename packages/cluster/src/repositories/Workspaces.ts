import { SqlClient } from "@effect/sql"
import { Errors, Ids, Plans } from "@pic2video/domain"
import { Effect } from "effect"

/** Workspaces as the operator CLI (the portal's stand-in) manages them: contract §2 and §3. */
export interface WorkspaceRow {
  readonly id: string
  readonly name: string
  readonly plan: Plans.Plan
  readonly status: "active" | "inactive"
  readonly api_enabled: boolean
  readonly included: number | null
  readonly storage_budget_bytes: number
  readonly storage_used_bytes: number
  readonly created_at: Date
}

export const toDocument = (w: WorkspaceRow, now = new Date()) => ({
  object: "workspace" as const,
  id: w.id,
  name: w.name,
  plan: w.plan,
  status: w.status,
  api_enabled: w.api_enabled,
  included: w.included,
  storage_budget_bytes: w.storage_budget_bytes,
  cycle_start: Plans.cycleStart(w.created_at, now).toISOString(),
  created_at: w.created_at.toISOString()
})

export interface WorkspaceSettings {
  readonly plan?: Plans.Plan
  readonly status?: "active" | "inactive"
  readonly apiEnabled?: boolean
  /** a number, or null for unlimited */
  readonly included?: number | null
  readonly storageBudgetBytes?: number
}

export const create = (name: string, settings: WorkspaceSettings & { plan: Plans.Plan }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const defaults = Plans.planDefaults[settings.plan]
    const [row] = yield* sql<WorkspaceRow>`
      INSERT INTO workspaces ${sql.insert({
        id: Ids.newWorkspaceId(),
        name,
        plan: settings.plan,
        status: settings.status ?? "active",
        api_enabled: settings.apiEnabled ?? true,
        included: settings.plan === "custom" ? settings.included ?? null : settings.included ?? defaults.included,
        storage_budget_bytes: settings.storageBudgetBytes ?? defaults.storageBudgetBytes,
        created_at: new Date()
      })}
      RETURNING *`
    return row
  }).pipe(Effect.orDie)

export const find = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<WorkspaceRow>`SELECT * FROM workspaces WHERE id = ${id}`
    return rows[0]
  }).pipe(Effect.orDie)

export const get = (id: string) =>
  Effect.flatMap(find(id), (w) => w === undefined ? Effect.fail(Errors.fail("validation_failed", `workspace ${id} does not exist`)) : Effect.succeed(w))

export const update = (id: string, s: WorkspaceSettings) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const current = yield* get(id)
    const plan = s.plan ?? current.plan
    // a plan change brings that plan's allowance unless --included says otherwise
    const included = s.included !== undefined
      ? s.included
      : s.plan !== undefined && s.plan !== current.plan
      ? (plan === "custom" ? null : Plans.planDefaults[plan].included)
      : current.included
    const [row] = yield* sql<WorkspaceRow>`
      UPDATE workspaces SET
        plan = ${plan},
        status = ${s.status ?? current.status},
        api_enabled = ${s.apiEnabled ?? current.api_enabled},
        included = ${included},
        storage_budget_bytes = ${s.storageBudgetBytes ?? (s.plan !== undefined && s.plan !== current.plan ? Plans.planDefaults[plan].storageBudgetBytes : current.storage_budget_bytes)}
      WHERE id = ${id}
      RETURNING *`.pipe(Effect.orDie)
    return row
  })
