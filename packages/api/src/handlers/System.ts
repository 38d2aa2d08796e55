import { SystemService } from "@pic2video/cluster/services/SystemService"
import { Api } from "@pic2video/domain/api/Api"
import { Effect } from "effect"
import { Sharding } from "effect/cluster/Sharding"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

/** Liveness, and readiness: the database answers and this process's cluster node is up. */
export const layer = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const system = yield* SystemService
    yield* Sharding // readiness presumes the cluster layer was built
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () => system.ready)
  }))
