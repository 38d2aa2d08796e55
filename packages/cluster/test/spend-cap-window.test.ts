import { describe, expect, it } from "@effect/vitest"
import type { Caller } from "@pic2video/domain"
import { Clock, Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import * as ApiKeys from "../src/repositories/ApiKeysRepo.ts"
import { RendersRepo } from "../src/repositories/RendersRepo.ts"
import { WorkspacesRepo } from "../src/repositories/WorkspacesRepo.ts"
import { Charges } from "../src/services/Charges.ts"
import * as RenderTransitions from "../src/services/RenderTransitions.ts"
import * as TestDatabase from "./support/TestDatabase.ts"

/**
 * The rolling 24-hour spend cap (contract §3) on the charge transaction itself against PostgreSQL,
 * with time moved by TestClock: a key with cap N has at most N charged renders accepted in the
 * last 24 hours; each frees its place exactly 24 hours after it was accepted, or when refunded.
 */
const hour = 3600_000

const account = (cap: number) =>
  Effect.gen(function*() {
    const ws = yield* WorkspacesRepo.use((repo) => repo.create("spend-cap", { plan: "custom", included: null }))
    const key = yield* ApiKeys.create({ workspaceId: ws.id, scopes: ["renders:create"], spendCap24h: cap })
    const mediaId = yield* TestDatabase.addPhoto(ws.id)
    const payer: Caller.Caller = { workspaceId: ws.id, keyId: key.id, spendCap24h: cap }
    return { payer, mediaId }
  })

/** One create's charge, as the ApiKey entity makes it: the refusal's code, or the render's id. */
const charge = (a: { readonly payer: Caller.Caller; readonly mediaId: string }) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const outcome = yield* Effect.result(Charges.use((charges) =>
      charges.charge({
        id: `rnd_${randomUUID().replaceAll("-", "")}`,
        payer: a.payer,
        mediaId: a.mediaId,
        request: { media_id: a.mediaId },
        metadata: {},
        idempotencyKey: null,
        idempotencyRecordId: null,
        captionBlobKey: null,
        deadline: now + 60_000
      })
    ))
    return Result.isFailure(outcome) ? outcome.failure.code : outcome.success.row.id
  })

describe("the spend cap's window on TestClock", () => {
  it.layer(Charges.layer.pipe(Layer.provideMerge(TestDatabase.layer)))((it) => {
    it.effect("each charge holds its place for exactly 24 hours", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-03-02T00:00:00Z"))
        const a = yield* account(2)
        expect(yield* charge(a)).toMatch(/^rnd_/) // t = 0
        yield* TestClock.adjust(5 * hour)
        expect(yield* charge(a)).toMatch(/^rnd_/) // t = 5 h
        expect(yield* charge(a)).toBe("spend_cap_reached")
        expect(yield* RendersRepo.use((repo) => repo.chargedInWindow(a.payer.keyId ?? ""))).toBe(2)

        yield* TestClock.adjust(19 * hour - 1) // a millisecond before 24 h: the first is still inside
        expect(yield* charge(a)).toBe("spend_cap_reached")
        yield* TestClock.adjust(1) // 24 h after it was accepted, the first has left the window
        expect(yield* RendersRepo.use((repo) => repo.chargedInWindow(a.payer.keyId ?? ""))).toBe(1)
        expect(yield* charge(a)).toMatch(/^rnd_/)
        expect(yield* charge(a)).toBe("spend_cap_reached")
        // the early look before the caption work reads the same window
        expect((yield* Charges.use((charges) => charges.refusal(a.payer)))?.code).toBe("spend_cap_reached")
        yield* TestClock.adjust(5 * hour)
        expect(yield* Charges.use((charges) => charges.refusal(a.payer))).toBeUndefined()
        expect(yield* charge(a)).toMatch(/^rnd_/)
      }))

    it.effect("a refunded render frees its place at once", () =>
      Effect.gen(function*() {
        const a = yield* account(1)
        const first = yield* charge(a)
        expect(yield* charge(a)).toBe("spend_cap_reached")
        yield* TestClock.adjust(hour)
        yield* RenderTransitions.endUnsuccessfully(first, "render_canceled", "canceled")
        expect(yield* charge(a)).toMatch(/^rnd_/)
      }))
  })
})
