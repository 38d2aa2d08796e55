import { Errors, ImportState, Requests } from "@pic2video/domain"
import type { Vision } from "@pic2video/vision"
import { Effect, Result, Schedule, Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import * as fs from "node:fs/promises"
import { type DriveFile, FOLDER_MIME_TYPE } from "../drive/DriveApi.ts"
import { Integrations } from "../drive/Integrations.ts"
import * as MediaLibrary from "../media/MediaLibrary.ts"
import * as Imports from "../repositories/ImportsRepo.ts"
import { ImportsRepo } from "../repositories/ImportsRepo.ts"
import { MediaRepo } from "../repositories/MediaRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"

/**
 * One entity per import (contract §7). `Start` is persisted: stored before delivery and
 * redelivered until a reply is stored, so an import whose runner crashes or drains resumes on the
 * runner that takes its shard over. Resuming is safe because every considered file is recorded as
 * an item as it goes, and a recorded file is never looked at again; the unique keys on
 * `import_items (import_id, source_ref)` and `media (workspace_id, source_ref)` are the backstop.
 */
export const ImportEntity = Entity.make("Import", [
  Rpc.make("Start", {
    payload: { importId: Schema.String },
    success: Schema.String, // the terminal status
    primaryKey: () => "start"
  })
    .annotate(ClusterSchema.Persisted, true)
    // the sender never waits; an interrupt must never be stored as the reply
    .annotate(ClusterSchema.Uninterruptible, "client")
])

/** What considering one file comes to: an item, or a stop that leaves it (and the rest) without one. */
type Outcome = Imports.NewItem | { readonly status: "stop"; readonly reason: ImportState.StoppedReason }

const stop = (reason: ImportState.StoppedReason): Outcome => ({ status: "stop", reason })
const skipped = (reason: "unsupported_media_type" | "already_imported"): Outcome => ({ status: "skipped", reason })
const failed = (reason: "payload_too_large" | "download_failed"): Outcome => ({ status: "failed", reason })

/**
 * The drive's type decides first: only what may hold image bytes is downloaded (`image/*`, and
 * the untyped `application/octet-stream`); the bytes decide the rest in `MediaLibrary.ingest`.
 */
const mayBeImage = (mimeType: string) => mimeType.startsWith("image/") || mimeType === "application/octet-stream"

/** Labels are at most 200 characters (contract §5); longer drive names are cut. */
const labelOf = (name: string) => Array.from(name).slice(0, 200).join("")

/** A listing the provider cannot serve right now is retried for about ten minutes before giving up. */
const listingRetry = Schedule.max([Schedule.spaced("30 seconds"), Schedule.recurs(20)])

/** Runs one import to a terminal state and returns it. Only interruption (shutdown, shard move) leaves it pending. */
const runImport = (importId: string) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    const blobs = yield* BlobStore
    const imports = yield* ImportsRepo
    const row = yield* imports.byId(importId)
    if (row === undefined) return "missing"
    if (ImportState.isTerminal(row.status)) return row.status
    const end = (stopped: ImportState.StoppedReason | null) => imports.finish(importId, stopped)

    // the connection or the folder may have gone away since the import was accepted
    const connection = yield* Effect.result(integrations.open(row.workspace_id))
    if (Result.isFailure(connection)) return yield* end("integration_not_connected")
    const listing = yield* connection.success.listChildren(row.folder_id).pipe(
      Effect.tapErrorTag("ProviderUnavailable", (e) =>
        Effect.logWarning(`import ${importId}: listing failed, retrying: ${e.message}`)),
      Effect.retry({
        schedule: listingRetry,
        while: (e) =>
          e._tag === "ProviderUnavailable"
      }),
      Effect.result
    )
    if (Result.isFailure(listing)) {
      const e = listing.failure
      yield* Effect.logWarning(`import ${importId}: the folder could not be listed: ${e.message}`)
      return yield* end(
        e._tag === "NotConnected" || e._tag === "DriveNotConfigured" ? "integration_not_connected" : "unknown_folder"
      )
    }

    // sub-folders are neither items nor counted; a file listed twice (paging) counts once
    const files = [
      ...new Map(listing.success.filter((f) => f.mimeType !== FOLDER_MIME_TYPE).map((f) => [f.id, f])).values()
    ]
    yield* imports.setDiscovered(importId, files.length)
    const { considered, limitReached } = ImportState.considered(files)

    // a rerun after a crash: what is recorded stays as it is
    const recorded = yield* imports.items(importId)
    const done = new Set(recorded.map((i) => i.source_ref))
    let position = recorded.reduce((max, i) => Math.max(max, i.position + 1), 0)
    const pending = considered.filter((f) => !done.has(f.id))
    const inLibrary = yield* imports.existingMedia(row.workspace_id, pending.map((f) => f.id))

    const consider = (file: DriveFile): Effect.Effect<Outcome, never, MediaRepo | BlobStore | Vision> =>
      Effect.gen(function*() {
        const known = inLibrary.get(file.id)
        if (known !== undefined) {
          // Stored by this very import just before a crash, before its item was written: adopt it.
          if (!known.claimed && known.createdAt.getTime() >= row.created_at.getTime()) {
            return { status: "imported", mediaId: known.mediaId } as const
          }
          return skipped("already_imported")
        }
        if (!mayBeImage(file.mimeType)) return skipped("unsupported_media_type")
        if (file.size !== null && file.size > Requests.maxUploadBytes) return failed("payload_too_large")

        const temp = yield* blobs.tempPath(".download")
        const removeTemp = Effect.promise(() => fs.rm(temp, { force: true }))
        const downloaded = yield* connection.success.download(file.id, {
          maxBytes: Requests.maxUploadBytes,
          toPath: temp
        }).pipe(
          Effect.result
        )
        if (Result.isFailure(downloaded)) {
          yield* removeTemp
          const e = downloaded.failure
          switch (e._tag) {
            case "FileTooLarge":
              return failed("payload_too_large")
            case "NotConnected":
            case "DriveNotConfigured":
              return stop("integration_not_connected")
            default:
              yield* Effect.logWarning(`import ${importId}: download of ${file.id} failed: ${e.message}`)
              return failed("download_failed")
          }
        }

        // the one upload path: size, sniffing, decoding, the label rule and the storage budget
        const ingested = yield* MediaLibrary.ingest({
          source: "import",
          workspaceId: row.workspace_id,
          path: temp,
          label: labelOf(file.name),
          tags: [],
          sourceRef: file.id
        }).pipe(Effect.result, Effect.ensuring(removeTemp))
        if (Result.isSuccess(ingested)) return { status: "imported", mediaId: ingested.success.id } as const
        const refusal: Errors.ApiFailure = ingested.failure
        switch (refusal.code) {
          case "unsupported_media_type":
            return skipped("unsupported_media_type")
          case "payload_too_large":
            return failed("payload_too_large")
          case "quota_exceeded":
            return stop("storage_budget_exceeded")
          case "validation_failed": // imported meanwhile by another import of this workspace
            return skipped("already_imported")
          default:
            return yield* Effect.die(refusal)
        }
      })

    let stopped: ImportState.StoppedReason | null = null
    for (const file of pending) {
      // a folder that changed between a crash and the rerun must still stay within the limit
      if (position >= ImportState.maxFilesPerImport) {
        stopped = "file_limit_reached"
        break
      }
      const outcome = yield* consider(file)
      if (outcome.status === "stop") {
        stopped = outcome.reason
        break
      }
      yield* imports.recordItem(importId, position, file, outcome)
      position++
    }
    return yield* end(stopped ?? (limitReached ? "file_limit_reached" : null))
  }).pipe(Effect.withSpan("ImportEntity.runImport", { attributes: { importId } }))

export const layer = ImportEntity.toLayer(
  Effect.gen(function*() {
    const context = yield* Effect.context<Integrations | BlobStore | ImportsRepo | MediaRepo | Vision>()
    return ImportEntity.of({
      // A fault (e.g. the database unreachable) is a defect: the cluster restarts the entity and
      // redelivers Start, and the rerun picks up after the last recorded item.
      Start: ({ payload }) => runImport(payload.importId).pipe(Effect.provideContext(context))
    })
  }),
  { maxIdleTime: "1 minute" }
)
