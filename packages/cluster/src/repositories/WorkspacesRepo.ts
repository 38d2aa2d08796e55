import { Errors, Ids, Plans } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/** Workspaces as the operator CLI (the portal's stand-in) manages them: contract §2 and §3. */
export const WorkspaceRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan: Plans.Plan,
  status: Schema.Literals(["active", "inactive"]),
  api_enabled: Schema.Boolean,
  included: Schema.NullOr(Schema.Number),
  storage_budget_bytes: Schema.Number,
  storage_used_bytes: Schema.Number,
  created_at: Schema.Date
})
export interface WorkspaceRow extends Schema.Schema.Type<typeof WorkspaceRow> {}

/** `now` places the current billing cycle. */
export const toDocument = (w: WorkspaceRow, now: Date) => ({
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

interface WorkspaceSettings {
  readonly plan?: Plans.Plan
  readonly status?: "active" | "inactive"
  readonly apiEnabled?: boolean
  /** a number, or null for unlimited */
  readonly included?: number | null
  readonly storageBudgetBytes?: number
}

const Settable = WorkspaceRow.mapFields(
  Struct.pick(["plan", "status", "api_enabled", "included", "storage_budget_bytes"])
)

export class WorkspacesRepo extends Context.Service<WorkspacesRepo>()("pic2video/WorkspacesRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.findOne({
      Request: WorkspaceRow.mapFields(Struct.omit(["storage_used_bytes"])),
      Result: WorkspaceRow,
      execute: (row) => sql`INSERT INTO workspaces ${sql.insert(row)} RETURNING *`
    })
    const selectById = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: WorkspaceRow,
      execute: (id) => sql`SELECT * FROM workspaces WHERE id = ${id}`
    })
    const write = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, settings: Settable }),
      Result: WorkspaceRow,
      execute: ({ id, settings }) => sql`UPDATE workspaces SET ${sql.update(settings)} WHERE id = ${id} RETURNING *`
    })

    const find = (id: string) =>
      selectById(id).pipe(Effect.map(Option.getOrUndefined), operation("WorkspacesRepo.find"))

    const get = (id: string) =>
      Effect.flatMap(
        find(id),
        (w) =>
          w === undefined
            ? Effect.fail(Errors.fail("validation_failed", `workspace ${id} does not exist`))
            : Effect.succeed(w)
      )

    return {
      create: (name: string, settings: WorkspaceSettings & { plan: Plans.Plan }) =>
        Effect.gen(function*() {
          const defaults = Plans.planDefaults[settings.plan]
          return yield* insert({
            id: Ids.newWorkspaceId(),
            name,
            plan: settings.plan,
            status: settings.status ?? "active",
            api_enabled: settings.apiEnabled ?? true,
            included: settings.plan === "custom" ? settings.included ?? null : settings.included ?? defaults.included,
            storage_budget_bytes: settings.storageBudgetBytes ?? defaults.storageBudgetBytes,
            created_at: yield* DateTime.nowAsDate
          })
        }).pipe(operation("WorkspacesRepo.create")),
      find,
      get,
      update: (id: string, s: WorkspaceSettings) =>
        Effect.gen(function*() {
          const current = yield* get(id)
          const plan = s.plan ?? current.plan
          const planChanged = s.plan !== undefined && s.plan !== current.plan
          // a plan change brings that plan's allowance and budget unless an option says otherwise
          const included = s.included !== undefined
            ? s.included
            : planChanged
            ? (plan === "custom" ? null : Plans.planDefaults[plan].included)
            : current.included
          return yield* write({
            id,
            settings: {
              plan,
              status: s.status ?? current.status,
              api_enabled: s.apiEnabled ?? current.api_enabled,
              included,
              storage_budget_bytes: s.storageBudgetBytes ??
                (planChanged ? Plans.planDefaults[plan].storageBudgetBytes : current.storage_budget_bytes)
            }
          }).pipe(operation("WorkspacesRepo.update"))
        })
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

/** The workspace, or 422 `validation_failed` when there is none (the operator CLI's and key minting's answer). */
export const get = (id: string) => Effect.flatMap(WorkspacesRepo, (repo) => repo.get(id))
