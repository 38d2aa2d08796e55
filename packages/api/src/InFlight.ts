import { Context, Effect, Layer } from "effect"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"

/**
 * What admission leaves for the pipeline to finish a request with once it is answered: the
 * RateLimit-* headers every answer carries from step 5 on (contract §4.5), and the idempotency record
 * to finish with the answer (contract §6). Kept by the connection's request object, which every
 * adjusted view of the request shares, so an entry lives as long as its request: admission runs
 * inside the router, where what it sets in the fiber's context is not seen by the pipeline around it.
 */
export class InFlight extends Context.Service<InFlight>()("pic2video/api/InFlight", {
  make: Effect.sync(() => {
    const rateLimits = new WeakMap<object, Record<string, string>>()
    const records = new WeakMap<object, number>()
    return {
      setRateLimit: (request: HttpServerRequest, headers: Record<string, string>): void => {
        rateLimits.set(request.source, headers)
      },
      rateLimitOf: (request: HttpServerRequest): Record<string, string> | undefined => rateLimits.get(request.source),
      setRecord: (request: HttpServerRequest, recordId: number): void => {
        records.set(request.source, recordId)
      },
      /** The record the request began, forgotten as it is read (it is finished once). */
      takeRecord: (request: HttpServerRequest): number | undefined => {
        const id = records.get(request.source)
        if (id !== undefined) records.delete(request.source)
        return id
      }
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
