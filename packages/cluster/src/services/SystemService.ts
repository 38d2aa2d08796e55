import { SqlClient } from "@effect/sql"
import { Errors } from "@pic2video/domain"
import { Effect } from "effect"

/** Liveness and readiness of this process. */
export class SystemService extends Effect.Service<SystemService>()("pic2video/SystemService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      /** Ready when the database answers within 2 s (the cluster node is up once this service is built). */
      ready: sql`SELECT 1`.pipe(
        Effect.as({ status: "ready" as const }),
        Effect.timeout("2 seconds"),
        Effect.catchAllCause(() => Effect.fail(Errors.fail("service_unavailable", "the database is unreachable", { retryAfter: 5 })))
      )
    } as const
  })
}) {}
