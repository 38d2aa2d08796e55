import { IntegrationService } from "@pic2video/cluster/services/IntegrationService"
import { Api } from "@pic2video/domain/api/Api"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { caller } from "../Admitted.ts"

/** The cloud-drive connection of the caller's workspace (contract §7). */
export const layer = HttpApiBuilder.group(Api, "integrations", (handlers) =>
  Effect.gen(function*() {
    const drive = yield* IntegrationService
    return handlers
      .handle("connect", () => Effect.flatMap(caller, (c) => drive.connect(c.workspaceId)))
      .handle("status", () => Effect.flatMap(caller, (c) => drive.status(c.workspaceId)))
      .handle("disconnect", () => Effect.flatMap(caller, (c) => drive.disconnect(c.workspaceId)))
      .handle("folders", ({ query }) => Effect.flatMap(caller, (c) => drive.folders(c.workspaceId, query)))
  }))
