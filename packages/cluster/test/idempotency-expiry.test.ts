import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as ApiKeys from "../src/repositories/ApiKeysRepo.ts"
import { IdempotencyRepo } from "../src/repositories/IdempotencyRepo.ts"
import { WorkspacesRepo } from "../src/repositories/WorkspacesRepo.ts"
import * as TestDatabase from "./support/TestDatabase.ts"

/**
 * The 24-hour idempotency window (contract §4.6, §6) on the repository's own statements against
 * PostgreSQL, with time moved by TestClock: the record answers for 24 hours, then it is gone and
 * the same key runs again; a record whose request died is taken over once its 30 s lock lapses.
 */
const start = Date.parse("2026-03-01T12:00:00Z")
const hour = 3600_000

const aKey = Effect.gen(function*() {
  const ws = yield* WorkspacesRepo.use((repo) => repo.create("idempotency", { plan: "studio" }))
  const key = yield* ApiKeys.create({ workspaceId: ws.id, scopes: ["renders:create"] })
  return key.id
})

describe("idempotency records on TestClock", () => {
  it.layer(TestDatabase.layer)((it) => {
    it.effect("a remembered outcome replays until 24 h after the first use, then the key runs anew", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const keyId = yield* aKey
        const first = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", "k1", "fp"))
        expect(first._tag).toBe("New")
        if (first._tag !== "New") return
        yield* IdempotencyRepo.use((repo) => repo.finish(first.recordId, 202, { id: "rnd_1" }))

        yield* TestClock.adjust(24 * hour - 1000)
        const replay = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", "k1", "fp"))
        expect(replay).toEqual({ _tag: "Replay", recordId: first.recordId, status: 202, body: { id: "rnd_1" } })
        // another body under the key is a conflict for as long as the record lives
        expect((yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", "k1", "other")))._tag).toBe(
          "Conflict"
        )

        yield* TestClock.adjust(1000)
        const again = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", "k1", "other"))
        expect(again._tag).toBe("New")
        if (again._tag === "New") expect(again.recordId).not.toBe(first.recordId)
      }))

    it.effect("an unfinished record is in progress for 30 s, then the next retry takes it over", () =>
      Effect.gen(function*() {
        const keyId = yield* aKey
        const first = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createImport", "k2", "fp"))
        expect(first._tag).toBe("New")
        yield* TestClock.adjust(29_000)
        expect((yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createImport", "k2", "fp")))._tag).toBe(
          "InProgress"
        )
        yield* TestClock.adjust(1_001)
        const taken = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createImport", "k2", "fp"))
        expect(taken).toEqual(first)
        // taken over: locked again for the retry
        expect((yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createImport", "k2", "fp")))._tag).toBe(
          "InProgress"
        )
      }))

    it.effect("an outcome that is not remembered (5xx) releases the record for the retry at once", () =>
      Effect.gen(function*() {
        const keyId = yield* aKey
        const first = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", "k3", "fp"))
        if (first._tag !== "New") return expect.unreachable()
        yield* IdempotencyRepo.use((repo) => repo.finish(first.recordId, 503, { error: {} }))
        expect(yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", "k3", "fp"))).toEqual(first)
      }))
  })
})
