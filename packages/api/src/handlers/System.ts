import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Sharding } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Errors } from "@pic2video/domain"
import { Effect } from "effect"
import { Api } from "../Api.ts"

/** Liveness, and readiness: the database answers and this process's cluster node is up. */
export const layer = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Sharding.Sharding // readiness presumes the cluster layer was built
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        sql`SELECT 1`.pipe(
          Effect.as<{ readonly status: "ready" } | HttpServerResponse.HttpServerResponse>({ status: "ready" }),
          Effect.timeout("2 seconds"),
          // the catalogue's failure, shaped as every error body (the pipeline set X-Request-Id)
          Effect.catchAllCause(() => Effect.fail(Errors.fail("service_unavailable", "the database is unreachable", { retryAfter: 5 })))
        ))
  }))
