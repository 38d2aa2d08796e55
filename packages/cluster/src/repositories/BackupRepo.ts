import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import { operation } from "./Repository.ts"

/**
 * The database as `admin backup` and `admin doctor` see it (backup/Backup.ts, backup/Doctor.ts):
 * whole tables, read and written as JSON rows. Generic over the schema (the catalogue says which
 * tables, columns, foreign keys and sequences there are), so a table a later migration adds is
 * backed up without a change here.
 *
 * A row travels as `row_to_json` text: every column in its type's own text form (timestamptz with
 * microseconds and offset, bytea as hex, json verbatim, float8 shortest-exact), and
 * `json_populate_recordset` reads that form back, so a restored row is the row that was saved.
 */
const Table = Schema.Struct({ name: Schema.String, columns: Schema.Array(Schema.String) })
interface Table extends Schema.Schema.Type<typeof Table> {}

const Sequence = Schema.Struct({ name: Schema.String, last_value: Schema.NullOr(Schema.Number) })
interface Sequence extends Schema.Schema.Type<typeof Sequence> {}

/** A row that names a stored blob: its table, its id and the column holding the key. */
export const BlobReference = Schema.Struct({
  table: Schema.String,
  column: Schema.String,
  id: Schema.String,
  key: Schema.String
})
export interface BlobReference extends Schema.Schema.Type<typeof BlobReference> {}

/** Columns that hold a blob key: `blob_key`, or a name ending in `_blob_key` (media, captions, videos, posters). */
export const isBlobColumn = (column: string) => column === "blob_key" || column.endsWith("_blob_key")

/**
 * What a running installation keeps about its own processes (runner registrations, shard locks) is
 * never restored: the restored installation's processes write their own. Migration histories are
 * not rows either: a restore writes them by running the migrations the backup names.
 */
export const isSavedTable = (name: string) =>
  name !== "cluster_runners" && name !== "cluster_locks" && !name.endsWith("_migrations")

const fetchSize = 1000

export class BackupRepo extends Context.Service<BackupRepo>()("pic2video/BackupRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const tables = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Table,
      execute: () =>
        sql`
          SELECT c.relname::text AS name, array_agg(a.attname::text ORDER BY a.attnum) AS columns
          FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
          WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
          GROUP BY c.relname ORDER BY c.relname`
    })
    const foreignKeys = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ child: Schema.String, parent: Schema.String }),
      execute: () =>
        sql`
          SELECT child.relname::text AS child, parent.relname::text AS parent
          FROM pg_constraint k
          JOIN pg_class child ON child.oid = k.conrelid
          JOIN pg_class parent ON parent.oid = k.confrelid
          JOIN pg_namespace n ON n.oid = k.connamespace
          WHERE k.contype = 'f' AND n.nspname = current_schema()`
    })
    const sequences = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Sequence,
      execute: () =>
        sql`SELECT sequencename::text AS name, last_value FROM pg_sequences WHERE schemaname = current_schema() ORDER BY 1`
    })
    const migrationsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.Number, name: Schema.String }),
      execute: (table) => sql`SELECT migration_id AS id, name FROM ${sql(table)} ORDER BY migration_id`
    })
    const hasTable = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ present: Schema.Boolean }),
      execute: (table) =>
        sql`
          SELECT EXISTS (
            SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relname = ${table} AND c.relkind IN ('r', 'p')
          ) AS present`
    })
    const fetchRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ row: Schema.String }),
      execute: () => sql`FETCH ${sql.literal(String(fetchSize))} FROM p2v_backup`.unprepared
    })
    const referencesIn = SqlSchema.findAll({
      Request: Schema.Struct({ table: Schema.String, column: Schema.String }),
      Result: Schema.Struct({ id: Schema.String, key: Schema.String }),
      execute: ({ column, table }) =>
        sql`SELECT id::text AS id, ${sql(column)}::text AS key FROM ${sql(table)} WHERE ${sql(column)} IS NOT NULL`
    })
    const insertRows = SqlSchema.void({
      Request: Schema.Struct({ table: Schema.String, columns: Schema.Array(Schema.String), rows: Schema.String }),
      execute: ({ columns, rows, table }) => {
        // the column names come from the catalogue; quoted as identifiers, as sql(name) quotes one
        const list = sql.literal(columns.map((c) => `"${c.replaceAll("\"", "\"\"")}"`).join(", "))
        return sql`
          INSERT INTO ${sql(table)} (${list})
          SELECT ${list} FROM json_populate_recordset(NULL::${sql(table)}, ${rows}::json)`
      }
    })
    const setSequence = SqlSchema.void({
      Request: Schema.Struct({ name: Schema.String, value: Schema.Number }),
      execute: ({ name, value }) => sql`SELECT setval(quote_ident(${name})::regclass, ${value}, true)`
    })

    const listTables = tables(undefined).pipe(operation("BackupRepo.tables"))

    return {
      /** Every table of the schema with its columns (in order), the migration histories included. */
      tables: listTables,
      /** Pairs (child, parent): a child's rows name its parent's, so the parent's go in first. */
      foreignKeys: foreignKeys(undefined).pipe(operation("BackupRepo.foreignKeys")),
      sequences: sequences(undefined).pipe(operation("BackupRepo.sequences")),
      /** The migrations a history table records (empty when the table is not there). */
      migrations: (table: string) =>
        Effect.flatMap(
          hasTable(table),
          ({ present }) => present ? migrationsOf(table) : Effect.succeed([])
        ).pipe(operation("BackupRepo.migrations")),
      /**
       * Runs `use` in one read-only REPEATABLE READ transaction: everything it reads is the database
       * as of one instant, however long it takes and whatever commits meanwhile. Times read as UTC.
       */
      snapshot: <A, E, R>(use: Effect.Effect<A, E, R>) =>
        sql.withTransaction(
          Effect.gen(function*() {
            // (transaction control and cursors run unprepared: nothing to cache, and no parameters)
            yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`.unprepared.pipe(
              operation("BackupRepo.snapshot")
            )
            yield* sql`SET LOCAL TimeZone = 'UTC'`.unprepared.pipe(operation("BackupRepo.snapshot"))
            return yield* use
          })
        ).pipe(Effect.catchIf(isSqlError, Effect.die)),
      /**
       * A table's rows as JSON text, a batch at a time through a cursor (inside `snapshot`): memory
       * stays at one batch whatever the table's size.
       */
      eachRow: <E, R>(table: string, onBatch: (rows: ReadonlyArray<string>) => Effect.Effect<void, E, R>) =>
        Effect.gen(function*() {
          yield* sql`DECLARE p2v_backup NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS row FROM ${sql(table)} AS t`
            .unprepared.pipe(operation("BackupRepo.eachRow"))
          while (true) {
            const batch = yield* fetchRows(undefined).pipe(operation("BackupRepo.eachRow"))
            if (batch.length > 0) yield* onBatch(batch.map((r) => r.row))
            if (batch.length < fetchSize) break
          }
          yield* sql`CLOSE p2v_backup`.unprepared.pipe(operation("BackupRepo.eachRow"))
        }),
      /** Every row that names a blob, now (an `id` column names the row). */
      references: Effect.gen(function*() {
        const found: Array<BlobReference> = []
        for (const t of yield* listTables) {
          if (!t.columns.includes("id")) continue
          for (const column of t.columns.filter(isBlobColumn)) {
            const rows = yield* referencesIn({ table: t.name, column }).pipe(operation("BackupRepo.references"))
            for (const r of rows) found.push({ table: t.name, column, id: r.id, key: r.key })
          }
        }
        return found
      }),
      /** Inserts rows (JSON text, as `eachRow` read them) into a table, the named columns only. */
      insert: (table: string, columns: ReadonlyArray<string>, rows: ReadonlyArray<string>) =>
        insertRows({ table, columns, rows: `[${rows.join(",")}]` }).pipe(operation("BackupRepo.insert")),
      setSequence: (name: string, value: number) =>
        setSequence({ name, value }).pipe(operation("BackupRepo.setSequence")),
      /** Runs `use` in one transaction: a restore's rows go in whole or not at all. */
      transaction: <A, E, R>(use: Effect.Effect<A, E, R>) =>
        sql.withTransaction(use).pipe(Effect.catchIf(isSqlError, Effect.die))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
