import { SqlClient } from "@effect/sql"
import { Errors, Ids, ImportState, Resources } from "@pic2video/domain"
import { Effect, Schema } from "effect"

/**
 * Drive imports as rows (contract §7): the `imports` row is the import's state, and one
 * `import_items` row per considered file is its progress. Counts are derived from the items, so
 * they can never disagree with them; GETs read these tables, never the entity.
 */
const Timestamp = Schema.DateFromSelf

/** The imports row, decoded with the domain's own literals. */
export const ImportRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  api_key_id: Schema.NullOr(Schema.String),
  provider: Schema.Literal("cloud_drive"),
  folder_id: Schema.String,
  status: Resources.ImportStatus,
  discovered: Schema.Number,
  stopped_reason: Schema.NullOr(Schema.Literal(...ImportState.stoppedReasons)),
  idempotency_record_id: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp)
})
export interface ImportRow extends Schema.Schema.Type<typeof ImportRow> {}

export const ItemRow = Schema.Struct({
  import_id: Schema.String,
  position: Schema.Number,
  source_ref: Schema.String,
  name: Schema.String,
  status: Schema.Literal(...ImportState.itemStatuses),
  media_id: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.Literal(...ImportState.itemReasons))
})
export interface ItemRow extends Schema.Schema.Type<typeof ItemRow> {}

const decodeImports = Schema.decodeUnknown(Schema.Array(ImportRow))
const decodeItems = Schema.decodeUnknown(Schema.Array(ItemRow))
/** The first row decoded, or undefined; a row the schema refuses is a defect (the table's constraints forbid it). */
const first = (rows: ReadonlyArray<unknown>) => Effect.map(Effect.orDie(decodeImports(rows)), (decoded) => decoded[0])

/** The state machine's view of a row. */
export const stateOf = (r: ImportRow): ImportState.State => ({
  status: r.status,
  discovered: r.discovered,
  stoppedReason: r.stopped_reason
})

export type NewItem =
  | { readonly status: "imported"; readonly mediaId: string }
  | { readonly status: "skipped"; readonly reason: "unsupported_media_type" | "already_imported" }
  | { readonly status: "failed"; readonly reason: "payload_too_large" | "download_failed" }

export interface Tally extends ImportState.Tally {}

// -- documents ------------------------------------------------------------------------------------

const countsOf = (row: ImportRow, tally: Tally) => ({
  discovered: row.discovered,
  imported: tally.imported,
  skipped: tally.skipped,
  failed: tally.failed
})

/** The creation shape (spec: no stopped_reason, items, completed_at), also used for replays. */
export const toCreatedDocument = (row: ImportRow, tally: Tally) => ({
  object: "media_import" as const,
  id: row.id,
  status: row.status,
  provider: "cloud_drive" as const,
  folder_id: row.folder_id,
  counts: countsOf(row, tally),
  created_at: row.created_at.toISOString()
})

/** Keys that do not apply to an item are left out: media_id only on imported, reason only otherwise. */
export const toItemDocument = (item: ItemRow) => ({
  source_ref: item.source_ref,
  name: item.name,
  status: item.status,
  ...(item.status === "imported" && item.media_id !== null ? { media_id: item.media_id } : {}),
  ...(item.status !== "imported" && item.reason !== null ? { reason: item.reason } : {})
})

export const toDocument = (row: ImportRow, items: ReadonlyArray<ItemRow>) => {
  const tally = tallyOf(items)
  return {
    ...toCreatedDocument(row, tally),
    stopped_reason: row.stopped_reason,
    items: items.map(toItemDocument),
    completed_at: row.completed_at?.toISOString() ?? null
  }
}

export const tallyOf = (items: ReadonlyArray<Pick<ItemRow, "status">>): Tally => ({
  imported: items.filter((i) => i.status === "imported").length,
  skipped: items.filter((i) => i.status === "skipped").length,
  failed: items.filter((i) => i.status === "failed").length
})

// -- reads ----------------------------------------------------------------------------------------

/** The workspace's own import; a foreign, unknown or malformed id is indistinguishable (404). */
export const find = (workspaceId: string, id: string) =>
  Effect.gen(function*() {
    if (!Ids.isImportId(id)) return undefined
    const sql = yield* SqlClient.SqlClient
    return yield* first(yield* sql`SELECT * FROM imports WHERE id = ${id} AND workspace_id = ${workspaceId}`)
  }).pipe(Effect.orDie)

export const get = (workspaceId: string, id: string) =>
  Effect.flatMap(find(workspaceId, id), (row) =>
    row === undefined ? Effect.fail(Errors.fail("import_not_found", `no import ${id} for this account`)) : Effect.succeed(row))

export const byId = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* first(yield* sql`SELECT * FROM imports WHERE id = ${id}`)
  }).pipe(Effect.orDie)

export const byIdempotencyRecord = (recordId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* first(yield* sql`SELECT * FROM imports WHERE idempotency_record_id = ${recordId}`)
  }).pipe(Effect.orDie)

export const items = (importId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* Effect.orDie(decodeItems(yield* sql`SELECT * FROM import_items WHERE import_id = ${importId} ORDER BY position`))
  }).pipe(Effect.orDie)

export const tally = (importId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ status: ItemRow["status"]; n: number }>`
      SELECT status, count(*)::int AS n FROM import_items WHERE import_id = ${importId} GROUP BY status`
    const n = (status: ItemRow["status"]) => rows.find((r) => r.status === status)?.n ?? 0
    return { imported: n("imported"), skipped: n("skipped"), failed: n("failed") } satisfies Tally
  }).pipe(Effect.orDie)

/** The creation-shaped document with the import's current state (creation and idempotent replay). */
export const createdDocument = (row: ImportRow) => Effect.map(tally(row.id), (t) => toCreatedDocument(row, t))

/** Non-terminal imports nothing has touched since `before`: the sweeper resends their Start. */
export const idlePending = (before: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string }>`
      SELECT id FROM imports WHERE status = ${ImportState.initialStatus} AND updated_at < ${before} ORDER BY created_at LIMIT 100`
  }).pipe(Effect.orDie)

// -- writes ---------------------------------------------------------------------------------------

export interface NewImport {
  readonly id: string
  readonly workspaceId: string
  /** null: created from the portal, by the workspace itself */
  readonly apiKeyId: string | null
  readonly folderId: string
  readonly idempotencyRecordId: number | null
}

/**
 * Inserts the pending import. Under an idempotency record at most one import exists (unique
 * column): a retried create that raced or took the record over gets the existing one back.
 */
export const create = (input: NewImport) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    const inserted = yield* first(yield* sql`
      INSERT INTO imports ${sql.insert({
        id: input.id,
        workspace_id: input.workspaceId,
        api_key_id: input.apiKeyId,
        provider: "cloud_drive",
        folder_id: input.folderId,
        status: ImportState.initialStatus,
        discovered: 0,
        idempotency_record_id: input.idempotencyRecordId,
        created_at: now,
        updated_at: now
      })}
      ON CONFLICT (idempotency_record_id) DO NOTHING
      RETURNING *`)
    if (inserted !== undefined) return inserted
    const existing = input.idempotencyRecordId === null ? undefined : yield* byIdempotencyRecord(input.idempotencyRecordId)
    if (existing === undefined) return yield* Effect.dieMessage("import insert conflicted without an existing import")
    return existing
  }).pipe(Effect.orDie)

/**
 * Applies one event: `ImportState.transition` decides on the row as read, and the UPDATE is
 * guarded on the status it decided from (only a pending import changes). Returns the row as it is
 * afterwards, changed or not.
 */
export const apply = (importId: string, event: ImportState.Event) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const current = yield* byId(importId)
    if (current === undefined) return undefined
    const next = ImportState.transition(stateOf(current), event)
    if (next === undefined) return current
    const now = new Date()
    const written = yield* first(yield* sql`
      UPDATE imports SET ${sql.update({
        status: next.status,
        discovered: next.discovered,
        stopped_reason: next.stoppedReason,
        completed_at: ImportState.isTerminal(next.status) ? now : null,
        updated_at: now
      })}
      WHERE id = ${importId} AND status = ${current.status}
      RETURNING *`)
    // ended meanwhile (a rerun that raced): what it ended as stands
    return written ?? (yield* byId(importId))
  }).pipe(Effect.orDie)

export const setDiscovered = (importId: string, discovered: number) => Effect.asVoid(apply(importId, { _tag: "Discovered", discovered }))

/**
 * Records one considered file. The (import_id, source_ref) unique key makes a rerun after a crash
 * harmless: a file already recorded keeps its first item. Returns false when it already existed.
 */
export const recordItem = (importId: string, position: number, file: { readonly id: string; readonly name: string }, item: NewItem) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql`
        INSERT INTO import_items ${sql.insert({
          import_id: importId,
          position,
          source_ref: file.id,
          name: file.name,
          status: item.status,
          media_id: item.status === "imported" ? item.mediaId : null,
          reason: item.status === "imported" ? null : item.reason
        })}
        ON CONFLICT DO NOTHING
        RETURNING position`
      yield* sql`UPDATE imports SET updated_at = ${new Date()} WHERE id = ${importId}`
      return rows.length > 0
    }))
  }).pipe(Effect.orDie)

/** Ends a pending import; a second end (a rerun that raced) changes nothing. Returns the final status. */
export const finish = (importId: string, stopped: ImportState.StoppedReason | null) =>
  Effect.gen(function*() {
    const ended = yield* apply(importId, { _tag: "Ended", tally: yield* tally(importId), stopped })
    return ended?.status ?? ImportState.finalStatus(yield* tally(importId), stopped)
  })

/**
 * What the workspace's library already holds of these drive files (archived media included: a
 * drive file is imported into a workspace once). `claimed` says whether an import item points at
 * the media; an unclaimed one was stored by an import that stopped before recording its item.
 */
export const existingMedia = (workspaceId: string, sourceRefs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const found = new Map<string, { readonly mediaId: string; readonly createdAt: Date; readonly claimed: boolean }>()
    if (sourceRefs.length === 0) return found
    const sql = yield* SqlClient.SqlClient
    // chunks keep the parameter count well under PostgreSQL's limit
    for (let i = 0; i < sourceRefs.length; i += 1000) {
      const chunk = sourceRefs.slice(i, i + 1000)
      const rows = yield* sql<{ id: string; source_ref: string; created_at: Date; claimed: boolean }>`
        SELECT m.id, m.source_ref, m.created_at,
          EXISTS (SELECT 1 FROM import_items i WHERE i.media_id = m.id) AS claimed
        FROM media m
        WHERE m.workspace_id = ${workspaceId} AND m.source_ref IN ${sql.in(chunk)}`
      for (const r of rows) found.set(r.source_ref, { mediaId: r.id, createdAt: r.created_at, claimed: r.claimed })
    }
    return found
  }).pipe(Effect.orDie)
