import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { WorkspacesRepo } from "../src/repositories/WorkspacesRepo.ts"
import { PortalSessionService } from "../src/services/PortalSessionService.ts"
import * as TestDatabase from "./support/TestDatabase.ts"

/**
 * Portal sign-in links and sessions (docs/portal.md) on the service's own code against PostgreSQL,
 * with time moved by TestClock: a link lives its TTL and signs in once; a session ends after 30
 * minutes unused (idle expiry) and 12 hours after sign-in however busy (absolute expiry).
 */
const minute = 60_000

const signIn = (ttlMinutes = 15) =>
  Effect.gen(function*() {
    const ws = yield* WorkspacesRepo.use((repo) => repo.create("portal", { plan: "studio" }))
    const link = yield* (yield* PortalSessionService).issueLink(ws.id, ttlMinutes, "http://localhost")
    return { workspaceId: ws.id, token: new URL(link.url).searchParams.get("token") ?? "" }
  })

/** Signs in with a fresh link: the session's token. */
const session = Effect.gen(function*() {
  const link = yield* signIn()
  const started = yield* (yield* PortalSessionService).redeem(link.token)
  if (started?._tag !== "Started") return yield* Effect.die(new Error("the link did not sign in"))
  return { ...link, session: started.session }
})

describe("portal sessions on TestClock", () => {
  it.layer(Layer.provideMerge(PortalSessionService.layer, TestDatabase.layer))((it) => {
    it.effect("a link signs in once, within its TTL", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-03-01T08:00:00Z"))
        const late = yield* signIn(15)
        yield* TestClock.adjust(15 * minute + 1)
        expect(yield* (yield* PortalSessionService).redeem(late.token)).toBeUndefined()

        const link = yield* signIn(15)
        yield* TestClock.adjust(15 * minute - 1)
        // the page a link opens only asks whose it is: nothing is spent
        expect(yield* (yield* PortalSessionService).redeem(link.token, { spend: false })).toEqual({
          _tag: "Usable",
          workspaceId: link.workspaceId
        })
        const started = yield* (yield* PortalSessionService).redeem(link.token)
        expect(started).toMatchObject({ _tag: "Started", workspaceId: link.workspaceId })
        expect(yield* (yield* PortalSessionService).redeem(link.token)).toBeUndefined()
      }))

    it.effect("a session unused for 30 minutes ends; one used within them goes on", () =>
      Effect.gen(function*() {
        const started = yield* session
        yield* TestClock.adjust(30 * minute - 1)
        expect((yield* (yield* PortalSessionService).resolve(started.session))?.workspaceId).toBe(started.workspaceId)
        // seen just now: the idle clock starts again
        yield* TestClock.adjust(30 * minute - 1)
        expect(yield* (yield* PortalSessionService).resolve(started.session)).toBeDefined()
        yield* TestClock.adjust(30 * minute)
        expect(yield* (yield* PortalSessionService).resolve(started.session)).toBeUndefined()
      }))

    it.effect("every session ends 12 hours after sign-in, however busy", () =>
      Effect.gen(function*() {
        const started = yield* session
        // used every 29 minutes (never idle) up to a minute before the 12 hours
        for (let used = 29; used < 12 * 60; used += 29) {
          yield* TestClock.adjust(29 * minute)
          expect(yield* (yield* PortalSessionService).resolve(started.session), `after ${used} minutes`).toBeDefined()
        }
        yield* TestClock.adjust(12 * 60 * minute - Math.floor((12 * 60) / 29) * 29 * minute)
        expect(yield* (yield* PortalSessionService).resolve(started.session)).toBeUndefined()
      }))

    it.effect("sign-out and an inactive workspace end the session for good", () =>
      Effect.gen(function*() {
        const first = yield* session
        yield* (yield* PortalSessionService).end(first.session)
        expect(yield* (yield* PortalSessionService).resolve(first.session)).toBeUndefined()

        const second = yield* session
        yield* WorkspacesRepo.use((repo) => repo.update(second.workspaceId, { status: "inactive" }))
        expect(yield* (yield* PortalSessionService).resolve(second.session)).toBeUndefined()
        yield* WorkspacesRepo.use((repo) => repo.update(second.workspaceId, { status: "active" }))
        expect(yield* (yield* PortalSessionService).resolve(second.session)).toBeUndefined()
      }))
  })
})
