import { IntegrationService } from "@pic2video/cluster/services/IntegrationService"
import { Api } from "@pic2video/domain/api/Api"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Principal } from "../Principal.ts"

/** The cloud-drive connection of the caller's workspace (contract §7). */
export const layer = HttpApiBuilder.group(Api, "integrations", (handlers) =>
  Effect.gen(function*() {
    const drive = yield* IntegrationService
    return handlers
      .handle("connect", () => Effect.orDie(Effect.flatMap(Principal, (p) => drive.connect(p.workspaceId))))
      .handle("status", () => Effect.orDie(Effect.flatMap(Principal, (p) => drive.status(p.workspaceId))))
      .handle("disconnect", () => Effect.orDie(Effect.flatMap(Principal, (p) => drive.disconnect(p.workspaceId))))
      .handle("folders", ({ query }) =>
        Effect.orDie(Effect.flatMap(Principal, (p) => drive.folders(p.workspaceId, query))))
  }))
