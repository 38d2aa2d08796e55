import { Errors, Ids, ImportState, Resources } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * Drive imports as rows (contract §7): the `imports` row is the import's state, and one
 * `import_items` row per considered file is its progress. Counts are derived from the items, so
 * they can never disagree with them; GETs read these tables, never the entity.
 */
const Timestamp = Schema.Date

/** The imports row, decoded with the domain's own literals. */
const ImportRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  api_key_id: Schema.NullOr(Schema.String),
  provider: Schema.Literal("cloud_drive"),
  folder_id: Schema.String,
  status: Resources.ImportStatus,
  discovered: Schema.Number,
  stopped_reason: Schema.NullOr(Schema.Literals(ImportState.stoppedReasons)),
  idempotency_record_id: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp)
})
interface ImportRow extends Schema.Schema.Type<typeof ImportRow> {}

const ItemRow = Schema.Struct({
  import_id: Schema.String,
  position: Schema.Number,
  source_ref: Schema.String,
  name: Schema.String,
  status: Schema.Literals(ImportState.itemStatuses),
  media_id: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.Literals(ImportState.itemReasons))
})
interface ItemRow extends Schema.Schema.Type<typeof ItemRow> {}

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
const toCreatedDocument = (row: ImportRow, tally: Tally) => ({
  object: "media_import" as const,
  id: row.id,
  status: row.status,
  provider: "cloud_drive" as const,
  folder_id: row.folder_id,
  counts: countsOf(row, tally),
  created_at: row.created_at.toISOString()
})

/** Keys that do not apply to an item are left out: media_id only on imported, reason only otherwise. */
const toItemDocument = (item: ItemRow) => ({
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

const tallyOf = (items: ReadonlyArray<Pick<ItemRow, "status">>): Tally => ({
  imported: items.filter((i) => i.status === "imported").length,
  skipped: items.filter((i) => i.status === "skipped").length,
  failed: items.filter((i) => i.status === "failed").length
})

interface NewImport {
  readonly id: string
  readonly workspaceId: string
  /** null: created from the portal, by the workspace itself */
  readonly apiKeyId: string | null
  readonly folderId: string
  readonly idempotencyRecordId: number | null
}

/** An import with its item counts, as the portal lists them. */
const ImportWithCounts = Schema.Struct({
  ...ImportRow.fields,
  imported: Schema.Number,
  skipped: Schema.Number,
  failed: Schema.Number
})

const StatusCount = Schema.Struct({ status: ItemRow.fields.status, n: Schema.Number })
const InLibrary = Schema.Struct({
  id: Schema.String,
  source_ref: Schema.String,
  created_at: Timestamp,
  claimed: Schema.Boolean
})

export class ImportsRepo extends Context.Service<ImportsRepo>()("pic2video/ImportsRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const selectOwned = SqlSchema.findOneOption({
      Request: Schema.Struct({ workspaceId: Schema.String, id: Schema.String }),
      Result: ImportRow,
      execute: (r) => sql`SELECT * FROM imports WHERE id = ${r.id} AND workspace_id = ${r.workspaceId}`
    })
    const selectById = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ImportRow,
      execute: (id) => sql`SELECT * FROM imports WHERE id = ${id}`
    })
    const selectByRecord = SqlSchema.findOneOption({
      Request: Schema.Number,
      Result: ImportRow,
      execute: (recordId) => sql`SELECT * FROM imports WHERE idempotency_record_id = ${recordId}`
    })
    const selectItems = SqlSchema.findAll({
      Request: Schema.String,
      Result: ItemRow,
      execute: (importId) => sql`SELECT * FROM import_items WHERE import_id = ${importId} ORDER BY position`
    })
    const countItems = SqlSchema.findAll({
      Request: Schema.String,
      Result: StatusCount,
      execute: (importId) =>
        sql`SELECT status, count(*)::int AS n FROM import_items WHERE import_id = ${importId} GROUP BY status`
    })
    const selectIdle = SqlSchema.findAll({
      Request: Timestamp,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (before) =>
        sql`SELECT id FROM imports WHERE status = ${ImportState.initialStatus} AND updated_at < ${before} ORDER BY created_at LIMIT 100`
    })
    const selectRecent = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, limit: Schema.Number }),
      Result: ImportWithCounts,
      execute: (r) =>
        sql`
          SELECT i.*,
            (SELECT count(*)::int FROM import_items t WHERE t.import_id = i.id AND t.status = 'imported') AS imported,
            (SELECT count(*)::int FROM import_items t WHERE t.import_id = i.id AND t.status = 'skipped') AS skipped,
            (SELECT count(*)::int FROM import_items t WHERE t.import_id = i.id AND t.status = 'failed') AS failed
          FROM imports i WHERE i.workspace_id = ${r.workspaceId}
          ORDER BY i.created_at DESC, i.id DESC LIMIT ${r.limit}`
    })
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.String,
        workspaceId: Schema.String,
        apiKeyId: Schema.NullOr(Schema.String),
        folderId: Schema.String,
        idempotencyRecordId: Schema.NullOr(Schema.Number),
        now: Timestamp
      }),
      Result: ImportRow,
      execute: (r) =>
        sql`
          INSERT INTO imports ${
          sql.insert({
            id: r.id,
            workspace_id: r.workspaceId,
            api_key_id: r.apiKeyId,
            provider: "cloud_drive",
            folder_id: r.folderId,
            status: ImportState.initialStatus,
            discovered: 0,
            idempotency_record_id: r.idempotencyRecordId,
            created_at: r.now,
            updated_at: r.now
          })
        }
          ON CONFLICT (idempotency_record_id) DO NOTHING
          RETURNING *`
    })
    const update = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.String,
        from: Resources.ImportStatus,
        next: Schema.Struct({
          status: Resources.ImportStatus,
          discovered: Schema.Number,
          stoppedReason: Schema.NullOr(Schema.Literals(ImportState.stoppedReasons))
        }),
        now: Timestamp
      }),
      Result: ImportRow,
      execute: ({ from, id, next, now }) =>
        sql`
          UPDATE imports SET ${
          sql.update({
            status: next.status,
            discovered: next.discovered,
            stopped_reason: next.stoppedReason,
            completed_at: ImportState.isTerminal(next.status) ? now : null,
            updated_at: now
          })
        }
          WHERE id = ${id} AND status = ${from}
          RETURNING *`
    })
    const insertItem = SqlSchema.findAll({
      Request: ItemRow,
      Result: Schema.Struct({ position: Schema.Number }),
      execute: (item) => sql`INSERT INTO import_items ${sql.insert(item)} ON CONFLICT DO NOTHING RETURNING position`
    })
    const touch = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, now: Timestamp }),
      execute: (r) => sql`UPDATE imports SET updated_at = ${r.now} WHERE id = ${r.id}`
    })
    const selectInLibrary = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, sourceRefs: Schema.Array(Schema.String) }),
      Result: InLibrary,
      execute: (r) =>
        sql`
          SELECT m.id, m.source_ref, m.created_at,
            EXISTS (SELECT 1 FROM import_items i WHERE i.media_id = m.id) AS claimed
          FROM media m
          WHERE m.workspace_id = ${r.workspaceId} AND m.source_ref IN ${sql.in(r.sourceRefs)}`
    })

    const byId = (id: string) => selectById(id).pipe(Effect.map(Option.getOrUndefined), operation("ImportsRepo.byId"))

    /** The workspace's own import; a foreign, unknown or malformed id is indistinguishable (404). */
    const find = (workspaceId: string, id: string) =>
      Ids.isImportId(id)
        ? selectOwned({ workspaceId, id }).pipe(Effect.map(Option.getOrUndefined), operation("ImportsRepo.find"))
        : Effect.succeed(undefined)

    const byIdempotencyRecord = (recordId: number) =>
      selectByRecord(recordId).pipe(Effect.map(Option.getOrUndefined), operation("ImportsRepo.byIdempotencyRecord"))

    const tally = (importId: string) =>
      countItems(importId).pipe(
        Effect.map((rows) => {
          const n = (status: ItemRow["status"]) => rows.find((r) => r.status === status)?.n ?? 0
          return { imported: n("imported"), skipped: n("skipped"), failed: n("failed") } satisfies Tally
        }),
        operation("ImportsRepo.tally")
      )

    /**
     * Applies one event: `ImportState.transition` decides on the row as read, and the UPDATE is
     * guarded on the status it decided from (only a pending import changes). Returns the row as it
     * is afterwards, changed or not.
     */
    const apply = (importId: string, event: ImportState.Event) =>
      Effect.gen(function*() {
        const current = Option.getOrUndefined(yield* selectById(importId))
        if (current === undefined) return undefined
        const next = ImportState.transition(stateOf(current), event)
        if (next === undefined) return current
        const written = yield* update({ id: importId, from: current.status, next, now: yield* DateTime.nowAsDate })
        // ended meanwhile (a rerun that raced): what it ended as stands
        return Option.isSome(written) ? written.value : Option.getOrUndefined(yield* selectById(importId))
      }).pipe(operation("ImportsRepo.apply"))

    return {
      find,
      get: (workspaceId: string, id: string) =>
        Effect.flatMap(
          find(workspaceId, id),
          (row) =>
            row === undefined
              ? Effect.fail(Errors.fail("import_not_found", `no import ${id} for this account`))
              : Effect.succeed(row)
        ),
      byId,
      byIdempotencyRecord,
      items: (importId: string) => selectItems(importId).pipe(operation("ImportsRepo.items")),
      tally,
      /** The creation-shaped document with the import's current state (creation and idempotent replay). */
      createdDocument: (row: ImportRow) => Effect.map(tally(row.id), (t) => toCreatedDocument(row, t)),
      /** Non-terminal imports nothing has touched since `before`: the sweeper resends their Start. */
      idlePending: (before: Date) => selectIdle(before).pipe(operation("ImportsRepo.idlePending")),
      /** The workspace's imports, newest first, with their item counts. */
      recent: (workspaceId: string, limit: number) =>
        selectRecent({ workspaceId, limit }).pipe(operation("ImportsRepo.recent")),
      /**
       * Inserts the pending import. Under an idempotency record at most one import exists (unique
       * column): a retried create that raced or took the record over gets the existing one back.
       */
      create: (input: NewImport) =>
        Effect.gen(function*() {
          const inserted = yield* insert({ ...input, now: yield* DateTime.nowAsDate })
          if (Option.isSome(inserted)) return inserted.value
          const existing = input.idempotencyRecordId === null
            ? undefined
            : yield* byIdempotencyRecord(input.idempotencyRecordId)
          if (existing === undefined) {
            return yield* Effect.die(new Error("import insert conflicted without an existing import"))
          }
          return existing
        }).pipe(operation("ImportsRepo.create")),
      apply,
      setDiscovered: (importId: string, discovered: number) =>
        Effect.asVoid(apply(importId, { _tag: "Discovered", discovered })),
      /**
       * Records one considered file. The (import_id, source_ref) unique key makes a rerun after a
       * crash harmless: a file already recorded keeps its first item. Returns false when it already existed.
       */
      recordItem: (
        importId: string,
        position: number,
        file: { readonly id: string; readonly name: string },
        item: NewItem
      ) =>
        Effect.gen(function*() {
          const now = yield* DateTime.nowAsDate
          return yield* sql.withTransaction(Effect.gen(function*() {
            const rows = yield* insertItem({
              import_id: importId,
              position,
              source_ref: file.id,
              name: file.name,
              status: item.status,
              media_id: item.status === "imported" ? item.mediaId : null,
              reason: item.status === "imported" ? null : item.reason
            })
            yield* touch({ id: importId, now })
            return rows.length > 0
          }))
        }).pipe(operation("ImportsRepo.recordItem")),
      /** Ends a pending import; a second end (a rerun that raced) changes nothing. Returns the final status. */
      finish: (importId: string, stopped: ImportState.StoppedReason | null) =>
        Effect.gen(function*() {
          const ended = yield* apply(importId, { _tag: "Ended", tally: yield* tally(importId), stopped })
          return ended?.status ?? ImportState.finalStatus(yield* tally(importId), stopped)
        }),
      /**
       * What the workspace's library already holds of these drive files (archived media included: a
       * drive file is imported into a workspace once). `claimed` says whether an import item points at
       * the media; an unclaimed one was stored by an import that stopped before recording its item.
       */
      existingMedia: (workspaceId: string, sourceRefs: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const found = new Map<
            string,
            { readonly mediaId: string; readonly createdAt: Date; readonly claimed: boolean }
          >()
          // chunks keep the parameter count well under PostgreSQL's limit
          for (let i = 0; i < sourceRefs.length; i += 1000) {
            for (const r of yield* selectInLibrary({ workspaceId, sourceRefs: sourceRefs.slice(i, i + 1000) })) {
              found.set(r.source_ref, { mediaId: r.id, createdAt: r.created_at, claimed: r.claimed })
            }
          }
          return found
        }).pipe(operation("ImportsRepo.existingMedia"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
