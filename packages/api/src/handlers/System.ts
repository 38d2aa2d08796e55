import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Sharding } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
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
          Effect.catchAllCause(() =>
            Effect.succeed(HttpServerResponse.unsafeJson({ status: "unavailable", reason: "database unreachable" }, { status: 503 }))
          )
        ))
  }))
