import { Ids } from "@pic2video/domain"
import { Context, Effect, Layer } from "effect"
import { Integrations, toApiFailure } from "../drive/Integrations.ts"
import { ImportEntity } from "../entities/ImportEntity.ts"
import * as Imports from "../repositories/ImportsRepo.ts"
import { ImportsRepo } from "../repositories/ImportsRepo.ts"

const entityTimeout = "5 seconds"

/** Bulk import from a drive folder (contract §7): accepted here, carried out by the ImportEntity. */
export class ImportService extends Context.Service<ImportService>()("pic2video/ImportService", {
  make: Effect.gen(function*() {
    const repo = yield* ImportsRepo
    const integrations = yield* Integrations
    const imports = yield* ImportEntity.client

    /**
     * Accepts an import of the folder. `requester.keyId` is the API key (null from the portal);
     * `recordId` the API's idempotency record, under which at most one import exists.
     */
    const create = (
      requester: { readonly workspaceId: string; readonly keyId: string | null },
      folderId: string,
      recordId: number | null
    ) =>
      Effect.gen(function*() {
        // A retry that took over an idempotency record whose first attempt died after creating
        // the import gets that import, not a second one.
        const earlier = recordId === null ? undefined : yield* repo.byIdempotencyRecord(recordId)
        const row = earlier ?? (yield* Effect.gen(function*() {
          // synchronous checks: a connection (409), and a folder the drive knows (404)
          const connection = yield* integrations.open(requester.workspaceId).pipe(Effect.mapError(toApiFailure))
          yield* connection.getFolder(folderId).pipe(Effect.mapError(toApiFailure))
          return yield* repo.create({
            id: Ids.newImportId(),
            workspaceId: requester.workspaceId,
            apiKeyId: requester.keyId,
            folderId,
            idempotencyRecordId: recordId
          })
        }))
        // read before Start is sent: a new import shows as created (pending, zero counts)
        const created = yield* repo.createdDocument(row)
        // accepted: from here on the answer is 202; Start is deduplicated, and the sweeper
        // resends one that was lost
        yield* imports(row.id).Start({ importId: row.id }, { discard: true }).pipe(
          Effect.timeout(entityTimeout),
          Effect.catchCause((cause) => Effect.logWarning("import Start not sent; the sweeper will resend it", cause))
        )
        return created
      })

    const get = (workspaceId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.get(workspaceId, id)
        return Imports.toDocument(row, yield* repo.items(row.id))
      })

    /** The import in its creation shape as it is now (a replayed create answers it); undefined when gone. */
    const created = (workspaceId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(workspaceId, id)
        return row === undefined ? undefined : yield* repo.createdDocument(row)
      })

    return {
      create,
      get,
      created,
      /** The workspace's latest imports with their counts (the portal's list). */
      recent: (workspaceId: string, limit: number) => repo.recent(workspaceId, limit)
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
