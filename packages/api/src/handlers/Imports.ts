import { HttpApiBuilder } from "@effect/platform"
import { ImportEntity } from "@pic2video/cluster/ImportEntity"
import * as Imports from "@pic2video/cluster/Imports"
import { Integrations, toApiFailure } from "@pic2video/cluster/Integrations"
import { Ids } from "@pic2video/domain"
import { Effect, FiberRef, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentRecord } from "../Idempotency.ts"
import { Principal } from "../Principal.ts"

const entityTimeout = "5 seconds"

/** Bulk import from a drive folder (decisions §7): accepted here, carried out by the ImportEntity. */
export const layer = HttpApiBuilder.group(Api, "imports", (handlers) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    const imports = yield* ImportEntity.client

    return handlers
      .handle("createImport", ({ payload }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          const recordId = Option.getOrNull(yield* FiberRef.get(CurrentRecord))
          // A retry that took over an idempotency record whose first attempt died after creating
          // the import gets that import, not a second one.
          const earlier = recordId === null ? undefined : yield* Imports.byIdempotencyRecord(recordId)
          const row = earlier ?? (yield* Effect.gen(function*() {
            // synchronous checks: a connection (409), and a folder the drive knows (404)
            const connection = yield* integrations.open(principal.workspaceId).pipe(Effect.mapError(toApiFailure))
            yield* connection.getFolder(payload.folder_id).pipe(Effect.mapError(toApiFailure))
            return yield* Imports.create({
              id: Ids.newImportId(),
              workspaceId: principal.workspaceId,
              apiKeyId: principal.keyId,
              folderId: payload.folder_id,
              idempotencyRecordId: recordId
            })
          }))
          // read before Start is sent: a new import shows as created (pending, zero counts)
          const created = yield* Imports.createdDocument(row)
          // accepted: from here on the answer is 202; Start is deduplicated, and the sweeper
          // resends one that was lost
          yield* imports(row.id).Start({ importId: row.id }, { discard: true }).pipe(
            Effect.timeout(entityTimeout),
            Effect.catchAllCause((cause) => Effect.logWarning("import Start not sent; the sweeper will resend it", cause))
          )
          return created
        }))
      .handle("getImport", ({ path }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const row = yield* Imports.get(workspaceId, path.id)
          return Imports.toDocument(row, yield* Imports.items(row.id))
        }))
  }))
