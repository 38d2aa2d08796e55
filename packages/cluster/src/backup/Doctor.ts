import { Clock, Effect } from "effect"
import { BackupRepo } from "../repositories/BackupRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"

/**
 * `admin doctor`: whether the database and the blob store agree. A row that names a blob the store
 * does not hold (a photo that cannot be rendered or previewed, a video that cannot be downloaded),
 * and a blob no row names (space nobody can reach).
 *
 * Safe while the service runs. Rows are read before the store is listed: a blob is stored before
 * its row commits and never deleted while named, so a row read first whose blob the listing lacks is
 * really missing. Rows are read again after the listing, so a blob whose row committed meanwhile is
 * not called an orphan; one still without a row may be an upload under way, so blobs younger than
 * `minAgeSeconds` are counted, not judged.
 */
export interface Options {
  readonly minAgeSeconds: number
}

export const check = (options: Options) =>
  Effect.gen(function*() {
    const repo = yield* BackupRepo
    const store = yield* BlobStore
    const before = yield* repo.references
    const listed = yield* store.list
    const after = yield* repo.references
    const now = yield* Clock.currentTimeMillis

    const inStore = new Set(listed.map((b) => b.key))
    const rowsWithoutBlobs = before.filter((r) => !inStore.has(r.key))
    const named = new Set([...before, ...after].map((r) => r.key))
    const unnamed = listed.filter((b) => !named.has(b.key))
    const judged = unnamed.filter((b) => now - b.lastModified.getTime() >= options.minAgeSeconds * 1000)
    return {
      object: "doctor" as const,
      ok: rowsWithoutBlobs.length === 0 && judged.length === 0,
      rows_naming_blobs: before.length,
      blobs: { count: listed.length, bytes: listed.reduce((n, b) => n + b.size, 0) },
      rows_without_blobs: rowsWithoutBlobs.map((r) => ({ table: r.table, id: r.id, column: r.column, key: r.key })),
      blobs_without_rows: judged.map((b) => ({
        key: b.key,
        bytes: b.size,
        modified_at: b.lastModified.toISOString()
      })),
      /** blobs without a row that are younger than --min-age-seconds: maybe an upload under way */
      recent_blobs_not_judged: unnamed.length - judged.length
    }
  })
