import { ImportService } from "@pic2video/cluster/services/ImportService"
import { Admitted, CurrentImport } from "@pic2video/domain/api/Annotations"
import { Api } from "@pic2video/domain/api/Api"
import * as Requests from "@pic2video/domain/Requests"
import { Effect, Layer, Option } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { caller, payload } from "../Admitted.ts"

/** Bulk import from a drive folder (contract §7). */
export const layer = HttpApiBuilder.group(Api, "imports", (handlers) =>
  Effect.gen(function*() {
    const imports = yield* ImportService
    return handlers
      // the body was read once by admission; decoded here (contract §4.8)
      .handleRaw("createImport", () =>
        Effect.flatMap(
          Effect.all([payload(Requests.CreateImportBody), Admitted]),
          ([body, admitted]) => imports.create(admitted.caller, body.folder_id, Option.getOrNull(admitted.record))
        ))
      .handle("getImport", ({ params }) => Effect.flatMap(caller, (c) => imports.get(c.workspaceId, params.id)))
  }))

/** A replayed import create answers the import as it is now (contract §7), in its creation shape. */
export const layerCurrentImport = Layer.effect(
  CurrentImport,
  Effect.map(ImportService, (imports) =>
    CurrentImport.of({
      current: (workspaceId, stored) => {
        const id = typeof stored === "object" && stored !== null && "id" in stored && typeof stored.id === "string"
          ? stored.id
          : undefined
        return id === undefined ? Effect.succeed(undefined) : imports.created(workspaceId, id)
      }
    }))
)
