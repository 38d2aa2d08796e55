import { Errors, type Requests } from "@pic2video/domain"
import { Cause, Context, Effect, Exit, Fiber, Layer } from "effect"
import { type Outcome, PortalBatchesRepo } from "../repositories/PortalBatchesRepo.ts"
import { RenderService } from "./RenderService.ts"

export { isBatchId } from "../repositories/PortalBatchesRepo.ts"

/** The idempotency key of one photo's render in a batch (shown on the render's page, as any key). */
const batchKey = (batchId: string, mediaId: string) => `portal-batch:${batchId}:${mediaId.toLowerCase()}`

/** One photo of a batch and the create body its render is made from. */
interface BatchRender {
  readonly mediaId: string
  readonly body: Requests.CreateRenderBody
}

/** What a refused create is recorded as: its catalogue failure; anything else is a fault (logged). */
const refusalOf = (cause: Cause.Cause<unknown>): { readonly outcome: Outcome; readonly unexpected: boolean } => {
  const { failure, unexpected } = Errors.failureOf(cause)
  return { outcome: { code: failure.code, message: failure.message }, unexpected }
}

/**
 * The portal's "Render selected" batches: one render per photo through `RenderService`, each under
 * an idempotency key derived from the batch id and the photo (the form sent twice charges nothing
 * more), and each photo's outcome recorded in the batch the renders list filters by. The payer is
 * the workspace itself (no key), as for every render the portal creates.
 */
export class PortalBatchService extends Context.Service<PortalBatchService>()("pic2video/PortalBatchService", {
  make: Effect.gen(function*() {
    const repo = yield* PortalBatchesRepo
    const renders = yield* RenderService
    const payerOf = (workspaceId: string) => ({ workspaceId, keyId: null, spendCap24h: null })

    return {
      /**
       * Why the allowance cannot cover every render of the batch not yet made under its keys, asked
       * once before any is created; undefined when it can.
       */
      refusal: (workspaceId: string, batchId: string, mediaIds: ReadonlyArray<string>) =>
        renders.batchRefusal(payerOf(workspaceId), mediaIds.map((id) => batchKey(batchId, id))),
      /**
       * Opens the batch (or finds it open: the same form sent again), then creates each render in
       * order, recording what each photo came to.
       */
      create: (workspaceId: string, batchId: string, items: ReadonlyArray<BatchRender>) =>
        Effect.gen(function*() {
          const payer = payerOf(workspaceId)
          yield* repo.open(workspaceId, batchId)
          // one at a time (each create prepares its caption, which is CPU work), and to the end once
          // begun, in a fiber of its own: a person who leaves the page meanwhile (the request is
          // interrupted) still gets every render, each recorded in the batch
          const all = Effect.forEach(items, ({ body, mediaId }, position) =>
            Effect.gen(function*() {
              const exit = yield* Effect.exit(
                renders.create(payer, body, { key: batchKey(batchId, mediaId), recordId: null })
              )
              if (Exit.isSuccess(exit)) {
                return yield* repo.record(workspaceId, batchId, mediaId, position, { renderId: exit.value.id })
              }
              // refused (the allowance changed meanwhile, the photo was archived…): said on the batch's list
              const { outcome, unexpected } = refusalOf(exit.cause)
              if (unexpected) yield* Effect.logError("portal batch: a render could not be created", exit.cause)
              yield* repo.record(workspaceId, batchId, mediaId, position, outcome)
            }), { discard: true })
          yield* Effect.flatMap(Effect.forkDetach(all), Fiber.join)
        }),
      /** The workspace's batch and its photos in the form's order; undefined for an unknown or foreign id. */
      find: (workspaceId: string, batchId: string) => repo.find(workspaceId, batchId)
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
