import { Errors } from "@pic2video/domain"
import { Context, Effect, Layer } from "effect"
import { SystemRepo } from "../repositories/SystemRepo.ts"

/** Liveness and readiness of this process. */
export class SystemService extends Context.Service<SystemService>()("pic2video/SystemService", {
  make: Effect.gen(function*() {
    const system = yield* SystemRepo
    return {
      /** Ready when the database answers within 2 s (the cluster node is up once this service is built). */
      ready: system.ping.pipe(
        Effect.as({ status: "ready" as const }),
        Effect.timeout("2 seconds"),
        Effect.catchCause(() =>
          Effect.fail(Errors.fail("service_unavailable", "the database is unreachable", { retryAfter: 5 }))
        )
      )
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
