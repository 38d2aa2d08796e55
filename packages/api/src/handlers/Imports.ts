import { HttpApiBuilder } from "@effect/platform"
import { ImportService } from "@pic2video/cluster/services/ImportService"
import { Effect, FiberRef, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentRecord } from "../Idempotency.ts"
import { Principal } from "../Principal.ts"

/** Bulk import from a drive folder (contract §7). */
export const layer = HttpApiBuilder.group(Api, "imports", (handlers) =>
  Effect.gen(function*() {
    const imports = yield* ImportService
    return handlers
      .handle("createImport", ({ payload }) =>
        Effect.flatMap(Effect.all([Principal, FiberRef.get(CurrentRecord)]), ([p, record]) =>
          imports.create(p, payload.folder_id, Option.getOrNull(record))))
      .handle("getImport", ({ path }) => Effect.flatMap(Principal, (p) => imports.get(p.workspaceId, path.id)))
  }))
