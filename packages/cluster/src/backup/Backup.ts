import { Errors } from "@pic2video/domain"
import { DateTime, Effect, Result, Schema, Stream } from "effect"
import { SqlMessageStorage } from "effect/cluster"
import * as Migrator from "effect/sql/Migrator"
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import * as Readline from "node:readline"
import { AppConfig } from "../config/AppConfig.ts"
import { migrations as releaseMigrations } from "../database/migrations/Migrations.ts"
import { BackupRepo, type BlobReference, isBlobColumn, isSavedTable } from "../repositories/BackupRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"

/**
 * `admin backup create | verify | restore` (docs/operations.md "Backup and restore").
 *
 * A backup is a directory: `manifest.json` (written last: a directory without one is no backup),
 * `database/<table>.jsonl` (one row per line, as BackupRepo reads it), `blobs/<key>` (the stored
 * files the rows name) and, when asked for, `secrets/` (DATA_DIR's key files).
 *
 * Consistency: the database is read in one snapshot first, then exactly the blobs its rows name are
 * copied. Every blob is written before the row that names it commits (an upload stores the photo,
 * then inserts the row; a render stores its video, then completes), and no blob a row names is ever
 * deleted, so every blob the snapshot names is in the store when it is copied, however much
 * happens meanwhile. (Copying blobs first and the database after would miss the blob of a row
 * committed in between.) Blobs no row names (an upload still under way) are left out.
 */
const format = 1
const manifestFile = "manifest.json"
/** the release's history table (Database.ts) and the cluster's message tables' */
const historyTable = "pic2video_migrations"
const clusterHistoryTable = "cluster_migrations"

const Migration = Schema.Struct({ id: Schema.Number, name: Schema.String })

const TableEntry = Schema.Struct({
  name: Schema.String,
  columns: Schema.Array(Schema.String),
  rows: Schema.Number,
  bytes: Schema.Number,
  sha256: Schema.String
})
type TableEntry = Schema.Schema.Type<typeof TableEntry>

const BlobEntry = Schema.Struct({ key: Schema.String, bytes: Schema.Number, sha256: Schema.String })
type BlobEntry = Schema.Schema.Type<typeof BlobEntry>

const Reference = Schema.Struct({ table: Schema.String, column: Schema.String, id: Schema.String, key: Schema.String })

const SecretEntry = Schema.Struct({ name: Schema.String, sha256: Schema.String })
type SecretEntry = Schema.Schema.Type<typeof SecretEntry>

const Manifest = Schema.Struct({
  object: Schema.Literal("backup"),
  format: Schema.Literal(format),
  created_at: Schema.String,
  migrations: Schema.Array(Migration),
  cluster_migrations: Schema.Array(Migration),
  tables: Schema.Array(TableEntry),
  sequences: Schema.Array(Schema.Struct({ name: Schema.String, last_value: Schema.NullOr(Schema.Number) })),
  blobs: Schema.Struct({ count: Schema.Number, bytes: Schema.Number, items: Schema.Array(BlobEntry) }),
  /** rows whose blob was already missing from the store when the backup was made (admin doctor) */
  rows_without_blobs: Schema.Array(Reference),
  secrets: Schema.NullOr(Schema.Array(SecretEntry))
})
type Manifest = Schema.Schema.Type<typeof Manifest>

const decodeManifest = Schema.decodeUnknownResult(Schema.fromJsonString(Manifest))

const usage = (message: string) => Errors.fail("validation_failed", message)

const tableFile = (name: string) => {
  // table names are the schema's identifiers; anything else is not one of ours
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected table name ${name}`)
  return Path.join("database", `${name}.jsonl`)
}
/** a blob key as a path under `blobs/` (keys are checked by the store: no `..`, no leading slash) */
const blobFile = (dir: string, key: string) => {
  if (!/^[A-Za-z0-9_./-]+$/.test(key) || key.includes("..") || key.startsWith("/")) {
    throw new Error(`unexpected blob key ${key}`)
  }
  return Path.join(dir, "blobs", key)
}

const sha256File = (path: string) =>
  Effect.promise(async () => {
    const hash = createHash("sha256")
    let bytes = 0
    for await (const chunk of createReadStream(path)) {
      hash.update(chunk)
      bytes += chunk.length
    }
    return { bytes, sha256: hash.digest("hex") }
  })

/** A file's lines, read as they are needed (a table's file may be larger than memory). */
const lines = (path: string): Stream.Stream<string> =>
  Stream.suspend(() =>
    Stream.fromAsyncIterable(Readline.createInterface({ input: createReadStream(path), crlfDelay: Infinity }), (e) => e)
  ).pipe(Stream.orDie)

const exists = (path: string) => Effect.promise(() => fs.stat(path).then(() => true, () => false))

const byName = <A extends { readonly name: string }>(a: A, b: A) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/** The blob keys a table's rows (JSON text) name, with the row each comes from. */
const referencesOf = (table: string, columns: ReadonlyArray<string>, line: string): Array<BlobReference> => {
  const blobColumns = columns.filter(isBlobColumn)
  if (blobColumns.length === 0) return []
  const row: Record<string, unknown> = JSON.parse(line)
  const id = row.id === undefined || row.id === null ? "" : String(row.id)
  return blobColumns.flatMap((column) => {
    const key = row[column]
    return typeof key === "string" ? [{ table, column, id, key }] : []
  })
}

/** DATA_DIR/secrets: the key files a process generates when no environment variable gives the key. */
const secretFiles = (dataDir: string) =>
  Effect.promise(async () => {
    const dir = Path.join(dataDir, "secrets")
    const names = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
    // a `.tmp` is a key being created (TokenCipher.ts)
    return names.filter((e) => e.isFile() && !e.name.startsWith(".") && !e.name.endsWith(".tmp")).map((e) => ({
      name: e.name,
      path: Path.join(dir, e.name)
    }))
  })

// ---------------------------------------------------------------------------------------------- create

export interface CreateOptions {
  /** copy DATA_DIR/secrets too (the keys API key hashes and drive tokens need) */
  readonly withSecrets: boolean
}

export const create = (directory: string, options: CreateOptions) =>
  Effect.gen(function*() {
    const repo = yield* BackupRepo
    const store = yield* BlobStore
    const config = yield* AppConfig
    const dir = Path.resolve(directory)
    const entries = yield* Effect.promise(() => fs.readdir(dir).catch(() => undefined))
    if (entries !== undefined && entries.length > 0) {
      return yield* Effect.fail(usage(`${dir} is not empty: a backup goes into a new or empty directory`))
    }
    yield* Effect.promise(() => fs.mkdir(Path.join(dir, "database"), { recursive: true }))
    const createdAt = yield* DateTime.nowAsDate

    // 1. the database, as of one instant
    const references: Array<BlobReference> = []
    const snapshot = yield* repo.snapshot(Effect.gen(function*() {
      const tables: Array<TableEntry> = []
      for (const table of (yield* repo.tables).filter((t) => isSavedTable(t.name))) {
        const file = Path.join(dir, tableFile(table.name))
        const hash = createHash("sha256")
        let rows = 0
        let bytes = 0
        yield* Effect.acquireUseRelease(
          Effect.promise(() => fs.open(file, "wx")),
          (handle) =>
            repo.eachRow(table.name, (batch) =>
              Effect.promise(async () => {
                const text = batch.map((row) => `${row}\n`).join("")
                hash.update(text)
                bytes += Buffer.byteLength(text)
                rows += batch.length
                for (const row of batch) references.push(...referencesOf(table.name, table.columns, row))
                await handle.write(text)
              })),
          (handle) => Effect.promise(() => handle.close())
        )
        tables.push({ name: table.name, columns: table.columns, rows, bytes, sha256: hash.digest("hex") })
      }
      return {
        tables,
        sequences: yield* repo.sequences,
        migrations: yield* repo.migrations(historyTable),
        clusterMigrations: yield* repo.migrations(clusterHistoryTable)
      }
    }))

    // 2. the blobs those rows name (each once), streamed through the store and hashed on the way
    const keys = [...new Set(references.map((r) => r.key))].sort()
    const copied = yield* Effect.forEach(keys, (key) =>
      Effect.gen(function*() {
        const opened = yield* store.open(key)
        if (opened === undefined) return undefined
        const dest = blobFile(dir, key)
        yield* Effect.promise(() => fs.mkdir(Path.dirname(dest), { recursive: true }))
        const hash = createHash("sha256")
        let bytes = 0
        yield* Effect.acquireUseRelease(
          Effect.promise(() => fs.open(dest, "wx")),
          (handle) =>
            Stream.runForEach(opened.stream, (chunk) =>
              Effect.promise(async () => {
                hash.update(chunk)
                bytes += chunk.byteLength
                await handle.write(chunk)
              })),
          (handle) => Effect.promise(() => handle.close())
        )
        return { key, bytes, sha256: hash.digest("hex") } satisfies BlobEntry
      }), { concurrency: 4 })
    const blobs = copied.filter((b) => b !== undefined)
    const present = new Set(blobs.map((b) => b.key))
    const rowsWithoutBlobs = references.filter((r) => !present.has(r.key))

    // 3. the secrets, when asked for
    let secrets: Array<SecretEntry> | null = null
    if (options.withSecrets) {
      secrets = []
      yield* Effect.promise(() => fs.mkdir(Path.join(dir, "secrets"), { recursive: true, mode: 0o700 }))
      for (const s of yield* secretFiles(config.dataDir)) {
        const dest = Path.join(dir, "secrets", s.name)
        yield* Effect.promise(() => fs.copyFile(s.path, dest).then(() => fs.chmod(dest, 0o600)))
        secrets.push({ name: s.name, sha256: (yield* sha256File(dest)).sha256 })
      }
    }

    // 4. the manifest, last, by rename: it exists only once everything it lists does
    const manifest: Manifest = {
      object: "backup",
      format,
      created_at: createdAt.toISOString(),
      migrations: snapshot.migrations,
      cluster_migrations: snapshot.clusterMigrations,
      tables: snapshot.tables,
      sequences: snapshot.sequences,
      blobs: { count: blobs.length, bytes: blobs.reduce((n, b) => n + b.bytes, 0), items: blobs },
      rows_without_blobs: rowsWithoutBlobs,
      secrets
    }
    yield* Effect.promise(async () => {
      const tmp = Path.join(dir, `.${manifestFile}.tmp`)
      await fs.writeFile(tmp, JSON.stringify(manifest, null, 1) + "\n", { flag: "wx" })
      await fs.rename(tmp, Path.join(dir, manifestFile))
    })
    return {
      object: "backup" as const,
      /** false when some row's blob was already missing from the store (the backup is made all the same) */
      ok: rowsWithoutBlobs.length === 0,
      directory: dir,
      created_at: manifest.created_at,
      tables: manifest.tables.map((t) => ({ name: t.name, rows: t.rows })),
      rows: manifest.tables.reduce((n, t) => n + t.rows, 0),
      blobs: { count: manifest.blobs.count, bytes: manifest.blobs.bytes },
      rows_without_blobs: rowsWithoutBlobs,
      secrets: secrets === null ? null : secrets.map((s) => s.name)
    }
  })

// ---------------------------------------------------------------------------------------------- verify

const readManifest = (dir: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.promise(() => fs.readFile(Path.join(dir, manifestFile), "utf8").catch(() => undefined))
    if (text === undefined) {
      return yield* Effect.fail(usage(`${dir} holds no ${manifestFile}: not a backup, or one that did not finish`))
    }
    const decoded = decodeManifest(text)
    if (Result.isFailure(decoded)) {
      return yield* Effect.fail(usage(`${Path.join(dir, manifestFile)} is not a backup manifest this release reads`))
    }
    return decoded.success
  })

/** Every file under `root`, as paths relative to it. */
const filesUnder = (root: string) =>
  Effect.promise(async () => {
    const found: Array<string> = []
    const walk = async (dir: string, prefix: string): Promise<void> => {
      for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (e.isDirectory()) await walk(Path.join(dir, e.name), `${prefix}${e.name}/`)
        else found.push(`${prefix}${e.name}`)
      }
    }
    await walk(root, "")
    return found
  })

/**
 * Recomputes what the manifest says, from the files alone (no database, no store): each table's
 * row count, size and SHA-256, each blob's size and SHA-256, each secret's SHA-256; and that every
 * blob a row names is in the backup (or was recorded missing when it was made).
 */
export const verify = (directory: string) =>
  Effect.gen(function*() {
    const dir = Path.resolve(directory)
    const manifest = yield* readManifest(dir)
    const problems: Array<string> = []
    const named = new Set<string>()
    let rows = 0
    for (const t of manifest.tables) {
      const file = Path.join(dir, tableFile(t.name))
      if (!(yield* exists(file))) {
        problems.push(`table ${t.name}: ${tableFile(t.name)} is missing`)
        continue
      }
      let counted = 0
      let unreadable = 0
      yield* Stream.runForEach(lines(file), (line) =>
        Effect.sync(() => {
          counted++
          try {
            for (const r of referencesOf(t.name, t.columns, line)) named.add(r.key)
            if (!t.columns.some(isBlobColumn)) JSON.parse(line)
          } catch {
            unreadable++
          }
        }))
      const content = yield* sha256File(file)
      rows += counted
      if (counted !== t.rows) problems.push(`table ${t.name}: ${counted} rows, the manifest says ${t.rows}`)
      if (content.sha256 !== t.sha256 || content.bytes !== t.bytes) {
        problems.push(`table ${t.name}: its content does not match the manifest's SHA-256`)
      }
      if (unreadable > 0) problems.push(`table ${t.name}: rows that are not JSON: ${unreadable}`)
    }
    let bytes = 0
    const listed = new Set<string>()
    for (const b of manifest.blobs.items) {
      listed.add(b.key)
      const file = blobFile(dir, b.key)
      if (!(yield* exists(file))) {
        problems.push(`blob ${b.key}: missing from the backup`)
        continue
      }
      const actual = yield* sha256File(file)
      bytes += actual.bytes
      if (actual.bytes !== b.bytes) problems.push(`blob ${b.key}: ${actual.bytes} bytes, the manifest says ${b.bytes}`)
      else if (actual.sha256 !== b.sha256) problems.push(`blob ${b.key}: its SHA-256 does not match the manifest's`)
    }
    const knownMissing = new Set(manifest.rows_without_blobs.map((r) => r.key))
    for (const key of [...named].sort()) {
      if (!listed.has(key) && !knownMissing.has(key)) problems.push(`blob ${key}: named by a row, not in the backup`)
    }
    for (const file of yield* filesUnder(Path.join(dir, "blobs"))) {
      if (!listed.has(file)) problems.push(`blob ${file}: in the backup's directory, not in its manifest`)
    }
    for (const s of manifest.secrets ?? []) {
      const file = Path.join(dir, "secrets", Path.basename(s.name))
      if (!(yield* exists(file))) problems.push(`secret ${s.name}: missing from the backup`)
      else if ((yield* sha256File(file)).sha256 !== s.sha256) {
        problems.push(`secret ${s.name}: its SHA-256 does not match the manifest's`)
      }
    }
    return {
      object: "backup_verification" as const,
      ok: problems.length === 0,
      directory: dir,
      created_at: manifest.created_at,
      tables: manifest.tables.length,
      rows,
      blobs: { count: manifest.blobs.items.length, bytes },
      rows_without_blobs: manifest.rows_without_blobs.length,
      secrets: manifest.secrets === null ? null : manifest.secrets.map((s) => s.name),
      problems
    }
  })

// --------------------------------------------------------------------------------------------- restore

/** The release's migrations by id (`0004_portal` is id 4, name `portal`), as the migrator numbers them. */
const releaseById = new Map(
  Object.entries(releaseMigrations).map(([key, effect]) => {
    const m = /^(\d+)_(.+)$/.exec(key)!
    return [Number(m[1]), { key, name: m[2], effect }] as const
  })
)

/** Tables ordered so that every table comes after the ones its foreign keys point at. */
const parentsFirst = (
  names: ReadonlyArray<string>,
  foreignKeys: ReadonlyArray<{ readonly child: string; readonly parent: string }>
) => {
  const ordered: Array<string> = []
  const placed = new Set<string>()
  const visiting = new Set<string>()
  const visit = (name: string) => {
    if (placed.has(name) || visiting.has(name)) return // a cycle (none today) falls back to name order
    visiting.add(name)
    for (const fk of foreignKeys) {
      if (fk.child === name && fk.parent !== name && names.includes(fk.parent)) visit(fk.parent)
    }
    visiting.delete(name)
    placed.add(name)
    ordered.push(name)
  }
  for (const name of [...names].sort()) visit(name)
  return ordered
}

/** rows per INSERT: a few MB of JSON at most (a row is a few hundred bytes to a few KB) */
const batchRows = 1000

/**
 * Restores a backup into a new installation: an empty database (DATABASE_URL, or the embedded one
 * of a new DATA_DIR) and an empty blob store. Checks first (the backup verifies, the database holds
 * no table, the store no blob the backup lacks, no secret file differs), then writes the secrets,
 * then the blobs, then the database in one transaction: its schema as the backup's release left it
 * (the migrations the backup names), the rows, the sequences. Migrations this release adds run when
 * its processes start, as in an upgrade.
 */
export const restore = (directory: string) =>
  Effect.gen(function*() {
    const repo = yield* BackupRepo
    const store = yield* BlobStore
    const config = yield* AppConfig
    const dir = Path.resolve(directory)

    // ---- checks: nothing is written until all pass
    const verification = yield* verify(dir)
    if (!verification.ok) {
      return yield* Effect.fail(
        usage(
          `the backup in ${dir} does not match its manifest (${verification.problems.length} problems, first: ${
            verification.problems[0]
          }); see admin backup verify`
        )
      )
    }
    const manifest = yield* readManifest(dir)
    for (const m of manifest.migrations) {
      const ours = releaseById.get(m.id)
      if (ours === undefined || ours.name !== m.name) {
        return yield* Effect.fail(
          usage(
            `the backup's database has migration ${m.id}_${m.name}, which this release does not know: restore it with the release that made it`
          )
        )
      }
    }
    const existing = yield* repo.tables
    if (existing.length > 0) {
      return yield* Effect.fail(
        usage(`the database already has tables (${
          existing.map((t) => t.name).slice(0, 3).join(", ")
        }…): restore into a new, empty database`)
      )
    }
    const inBackup = new Map(manifest.blobs.items.map((b) => [b.key, b]))
    const stored = yield* store.list
    const foreign = stored.filter((b) =>
      inBackup.get(b.key)?.bytes !== b.size
    )
    if (foreign.length > 0) {
      return yield* Effect.fail(
        usage(
          `the blob store already holds blobs that are not this backup's (${
            foreign[0].key
          }…): restore into an empty store`
        )
      )
    }
    const secretsDir = Path.join(config.dataDir, "secrets")
    const secretsToWrite: Array<string> = []
    for (const s of manifest.secrets ?? []) {
      const target = Path.join(secretsDir, Path.basename(s.name))
      if (!(yield* exists(target))) secretsToWrite.push(s.name)
      else if ((yield* sha256File(target)).sha256 !== s.sha256) {
        return yield* Effect.fail(
          usage(`${target} differs from the backup's ${s.name}: restore into a new DATA_DIR, or move that file away`)
        )
      }
    }

    // ---- the secrets
    for (const name of secretsToWrite) {
      yield* Effect.promise(async () => {
        await fs.mkdir(secretsDir, { recursive: true, mode: 0o700 })
        await fs.copyFile(Path.join(dir, "secrets", Path.basename(name)), Path.join(secretsDir, Path.basename(name)))
        await fs.chmod(Path.join(secretsDir, Path.basename(name)), 0o600)
      })
    }

    // ---- the blobs (a restore run again after a failure finds the ones already there)
    const already = new Set(stored.map((b) => b.key))
    yield* Effect.forEach(manifest.blobs.items.filter((b) => !already.has(b.key)), (b) =>
      Effect.gen(function*() {
        // the store takes a file by moving it: it gets a copy
        const tmp = yield* store.tempPath(".restore")
        yield* Effect.promise(() => fs.copyFile(blobFile(dir, b.key), tmp))
        yield* store.putFile(b.key, tmp)
      }), { concurrency: 4, discard: true })

    // ---- the database, whole or not at all
    const clusterTables = manifest.tables.some((t) => t.name.startsWith("cluster_"))
    yield* repo.transaction(Effect.gen(function*() {
      const level = new Map(manifest.migrations.map((m) => [m.id, m]))
      const subset = Object.fromEntries(
        [...releaseById].filter(([id]) => level.has(id)).map(([, m]) => [m.key, m.effect])
      )
      yield* Migrator.make({})({ loader: Migrator.fromRecord(subset), table: historyTable }).pipe(Effect.orDie)
      if (clusterTables) {
        yield* Migrator.make({})({ loader: SqlMessageStorage.migrations(), table: clusterHistoryTable }).pipe(
          Effect.orDie
        )
      }
      const target = new Map((yield* repo.tables).map((t) => [t.name, t.columns]))
      for (const t of manifest.tables) {
        const columns = target.get(t.name)
        const lost = t.columns.filter((c) => columns === undefined || !columns.includes(c))
        if (lost.length > 0) {
          return yield* Effect.fail(
            usage(`the restored schema has no ${t.name}.${lost[0]}: this release cannot restore the backup`)
          )
        }
      }
      const order = parentsFirst(manifest.tables.map((t) => t.name), yield* repo.foreignKeys)
      for (const name of order) {
        const t = manifest.tables.find((e) => e.name === name)!
        if (t.rows === 0) continue
        yield* Stream.runForEach(
          Stream.grouped(lines(Path.join(dir, tableFile(t.name))), batchRows),
          (batch) => repo.insert(t.name, t.columns, batch)
        )
      }
      const sequences = new Set((yield* repo.sequences).map((q) => q.name))
      for (const s of manifest.sequences) {
        if (s.last_value !== null && sequences.has(s.name)) yield* repo.setSequence(s.name, s.last_value)
      }
    }))

    const pending = [...releaseById].filter(([id]) => !manifest.migrations.some((m) => m.id === id))
    return {
      object: "backup_restore" as const,
      directory: dir,
      created_at: manifest.created_at,
      tables: [...manifest.tables].sort(byName).map((t) => ({ name: t.name, rows: t.rows })),
      rows: manifest.tables.reduce((n, t) => n + t.rows, 0),
      blobs: { count: manifest.blobs.count, bytes: manifest.blobs.bytes },
      secrets: secretsToWrite,
      /** migrations of this release the backup's database did not have yet: they run at the next start */
      migrations_at_next_start: pending.map(([id, m]) => `${String(id).padStart(4, "0")}_${m.name}`)
    }
  })
