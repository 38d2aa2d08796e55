import { Sharding } from "@effect/cluster"
import { HttpApiBuilder } from "@effect/platform"
import { SystemService } from "@pic2video/cluster/services/SystemService"
import { Api } from "@pic2video/domain/api/Api"
import { Effect } from "effect"

/** Liveness, and readiness: the database answers and this process's cluster node is up. */
export const layer = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const system = yield* SystemService
    yield* Sharding.Sharding // readiness presumes the cluster layer was built
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      // the catalogue's failure, shaped as every error body (the pipeline set X-Request-Id)
      .handle("readyz", () => system.ready)
  }))
