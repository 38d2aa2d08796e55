import { ImportService } from "@pic2video/cluster/services/ImportService"
import { Admitted, CurrentImport } from "@pic2video/domain/api/Annotations"
import { Api } from "@pic2video/domain/api/Api"
import * as Requests from "@pic2video/domain/Requests"
import { Effect, Layer, Option } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { payload, Principal } from "../Principal.ts"

/**
 * Bulk import from a drive folder (contract §7). Every failure is a defect here: the pipeline
 * (Pipeline.ts) answers it with the catalogue's error body, not HttpApi's error encoder.
 */
export const layer = HttpApiBuilder.group(Api, "imports", (handlers) =>
  Effect.gen(function*() {
    const imports = yield* ImportService
    return handlers
      // the body was read once by the pipeline; decoded here (contract §4.8)
      .handleRaw("createImport", () =>
        Effect.orDie(
          Effect.flatMap(
            Effect.all([Principal, payload(Requests.CreateImportBody), Admitted]),
            ([p, body, admitted]) => imports.create(p, body.folder_id, Option.getOrNull(admitted.record))
          )
        ))
      .handle("getImport", ({ params }) =>
        Effect.orDie(Effect.flatMap(Principal, (p) => imports.get(p.workspaceId, params.id))))
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
