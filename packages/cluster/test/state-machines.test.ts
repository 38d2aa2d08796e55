import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type Caller, ImportState, Plans, RenderState, SpendCap } from "@pic2video/domain"
import { Effect, Exit, Layer, ManagedRuntime, Option, Redacted, Result, Scope } from "effect"
import { Entity, ShardingConfig } from "effect/cluster"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import { randomUUID } from "node:crypto"
import { makeDatabase } from "../../../test/support/service.ts"
import * as AppConfig from "../src/config/AppConfig.ts"
import * as Database from "../src/database/Database.ts"
import { ApiKeyEntity, layer as apiKeyEntityLayer } from "../src/entities/ApiKeyEntity.ts"
import { RateWindows } from "../src/entities/RateWindows.ts"
import { IdempotencyRepo } from "../src/repositories/IdempotencyRepo.ts"
import * as Imports from "../src/repositories/ImportsRepo.ts"
import { ImportsRepo } from "../src/repositories/ImportsRepo.ts"
import * as Renders from "../src/repositories/RendersRepo.ts"
import { RendersRepo } from "../src/repositories/RendersRepo.ts"
import * as Repositories from "../src/repositories/Repositories.ts"
import { WorkspacesRepo } from "../src/repositories/WorkspacesRepo.ts"
import { Charges, type NewRender } from "../src/services/Charges.ts"
import { cancel as cancelRender } from "../src/services/RenderService.ts"
import * as RenderTransitions from "../src/services/RenderTransitions.ts"

/**
 * Model-based tests of the real thing: random command sequences run against the service's own
 * code on PostgreSQL — charges through the ApiKey entity (an in-memory test client of the real
 * entity) and, for the keyless payer, the charge the RenderService makes (`Charges`); every render
 * transition through the functions the Render entity, the sweeper and `render cancel` call
 * (RenderTransitions.ts); imports through the repository functions the Import entity calls. Nothing here re-implements
 * the state machines: after every step the invariants are read back from the database.
 */

type Env =
  | SqlClient.SqlClient
  | ShardingConfig.ShardingConfig
  | RendersRepo
  | Charges
  | ImportsRepo
  | WorkspacesRepo
  | IdempotencyRepo
  | RateWindows
let runtime: ManagedRuntime.ManagedRuntime<Env, never>
/** holds the entity test clients until the end of the file */
const clients = Scope.makeUnsafe()

beforeAll(async () => {
  const url = await makeDatabase()
  runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Charges.layer.pipe(
        Layer.provideMerge(Repositories.layer),
        Layer.provideMerge(Database.layer),
        Layer.provide(AppConfig.layerWith({ databaseUrl: Option.some(Redacted.make(url)) }))
      ),
      ShardingConfig.layerDefaults,
      RateWindows.layer
    ).pipe(Layer.orDie)
  )
  await runtime.runPromise(Effect.void)
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(clients, Exit.void))
  await runtime?.dispose()
})

const run = <A, E>(effect: Effect.Effect<A, E, Env>) => runtime.runPromise(effect)

// -- renders ----------------------------------------------------------------------------------------

const included = 5
const cap = 2

interface Account {
  readonly workspaceId: string
  readonly cycleStart: Date
  readonly mediaId: string
  /** a key with a spend cap, one without, and the workspace itself (the portal) */
  readonly payers: ReadonlyArray<Caller.Caller>
  readonly charge: (
    payer: Caller.Caller,
    r: Omit<NewRender, "payer">
  ) => Effect.Effect<{ renderId: string; charged: boolean }, { code: string }>
}

interface Model {
  readonly account: Account
  /** every render created, with what was last seen of it */
  readonly renders: Array<{ readonly id: string; status: RenderState.RenderState["status"]; progress: number }>
  /** idempotency key → the render created under it, and its record (keyed payers) */
  readonly idempotent: Map<string, { readonly renderId: string; readonly recordId: number | null }>
}

const makeAccount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const charges = yield* Charges
  const ws = yield* WorkspacesRepo.use((repo) =>
    repo.create("model", { plan: "custom", included, storageBudgetBytes: 10 ** 9 })
  )
  const mediaId = randomUUID()
  yield* sql`INSERT INTO media ${
    sql.insert({
      id: mediaId,
      workspace_id: ws.id,
      created_at: new Date(),
      label: "",
      tags: [],
      width: 10,
      height: 10,
      mime_type: "image/png",
      file_size_bytes: 1,
      blob_key: `media/${ws.id}/${mediaId}`
    })
  }`
  const keyIds = [
    `key_${randomUUID().replaceAll("-", "").slice(0, 20)}`,
    `key_${randomUUID().replaceAll("-", "").slice(0, 20)}`
  ]
  for (const [i, id] of keyIds.entries()) {
    yield* sql`INSERT INTO api_keys ${
      sql.insert({
        id,
        workspace_id: ws.id,
        name: "model",
        secret_hash: new Uint8Array(32),
        scopes: ["renders:create"],
        spend_cap_24h: i === 0 ? cap : null,
        creates_per_minute: 60,
        reads_per_minute: 600,
        uploads_per_minute: 60,
        created_at: new Date()
      })
    }`
  }
  const keys = yield* Entity.makeTestClient(ApiKeyEntity, apiKeyEntityLayer)
  const charge = (
    payer: Caller.Caller,
    r: Omit<NewRender, "payer">
  ): Effect.Effect<{ renderId: string; charged: boolean }, { code: string }> =>
    payer.keyId === null
      ? Effect.map(charges.charge({ ...r, payer }), (c) => ({ renderId: c.row.id, charged: c._tag === "Charged" }))
      : Effect.flatMap(keys(payer.keyId), (client) => client.Charge({ ...r, payer }))
  return {
    workspaceId: ws.id,
    cycleStart: Plans.cycleStart(ws.created_at, new Date()),
    mediaId,
    payers: [
      { workspaceId: ws.id, keyId: keyIds[0], spendCap24h: cap },
      { workspaceId: ws.id, keyId: keyIds[1], spendCap24h: null },
      { workspaceId: ws.id, keyId: null, spendCap24h: null }
    ],
    charge
  } satisfies Account
}).pipe(Effect.orDie)

/** Read back after every step: the rules the state machines and the charge rule must keep. */
const checkInvariants = (m: Model) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { account } = m
    for (const seen of m.renders) {
      const row = yield* RendersRepo.use((repo) => repo.byId(seen.id))
      expect(row, seen.id).toBeDefined()
      const state = RenderTransitions.stateOf(row!)
      expect(RenderState.isConsistent(state), `${seen.id} ${JSON.stringify(state)}`).toBe(true)
      // statuses only move forward; terminal stays terminal; progress never goes back
      expect(RenderState.rank(state.status)).toBeGreaterThanOrEqual(RenderState.rank(seen.status))
      if (RenderState.isTerminal(seen.status)) expect(state.status).toBe(seen.status)
      expect(state.progress).toBeGreaterThanOrEqual(seen.progress)
      seen.status = state.status
      seen.progress = state.progress
    }
    // `used` is the cycle's charged renders minus refunds, never over the allowance
    const [usage] = yield* sql<{ used: number }>`
      SELECT coalesce((SELECT used FROM allowance_usage WHERE workspace_id = ${account.workspaceId} AND cycle_start = ${account.cycleStart}), 0) AS used`
    const [{ kept }] = yield* sql<{ kept: number }>`
      SELECT count(*)::int AS kept FROM renders WHERE workspace_id = ${account.workspaceId} AND refunded_at IS NULL`
    expect(usage.used).toBe(kept)
    expect(usage.used).toBeLessThanOrEqual(included)
    // no key's spend window holds more than its cap
    for (const payer of account.payers) {
      if (payer.keyId === null || payer.spendCap24h === null) continue
      const [{ n }] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM renders
        WHERE api_key_id = ${payer.keyId} AND refunded_at IS NULL AND created_at > ${SpendCap.windowStart(Date.now())}`
      expect(n).toBeLessThanOrEqual(payer.spendCap24h)
    }
    // one render per idempotency record, and per keyless idempotency key
    const [{ dupes }] = yield* sql<{ dupes: number }>`
      SELECT count(*)::int AS dupes FROM (
        SELECT 1 FROM renders WHERE workspace_id = ${account.workspaceId} AND idempotency_key IS NOT NULL
        GROUP BY api_key_id, idempotency_key HAVING count(*) > 1) d`
    expect(dupes).toBe(0)
  })

type Step = (m: Model) => Effect.Effect<void, never, Env>

/** A command: a step on the real code, then the invariants. */
const command = (label: string, step: Step, needsRender = false): fc.AsyncCommand<Model, unknown> => ({
  check: (m) => !needsRender || m.renders.length > 0,
  run: (m) => run(Effect.andThen(step(m), checkInvariants(m))),
  toString: () => label
})

const pick = (m: Model, i: number) => m.renders[i % m.renders.length].id

const asset = (id: string): Renders.Asset => ({
  blobKey: `renders/${id}.mp4`,
  contentType: "video/mp4",
  width: 1080,
  height: 1920,
  byteSize: 1000,
  durationSec: 1,
  posterBlobKey: `renders/${id}.poster.jpg`
})

/** The transitions a render goes through, each the very call its owner makes. */
const transitions = {
  start: (id: string) => Effect.asVoid(RenderTransitions.markProcessing(id)), // the Render entity (and its rerun after a crash)
  progress: (id: string, p: number) => Effect.asVoid(RenderTransitions.recordProgress(id, p)),
  complete: (id: string) => Effect.asVoid(RenderTransitions.complete(id, asset(id))),
  fail: (id: string) => Effect.asVoid(RenderTransitions.endUnsuccessfully(id, "render_failed", "x")),
  // what the sweeper does to a render past its budget
  timeout: (id: string) => Effect.asVoid(RenderTransitions.endUnsuccessfully(id, "render_timeout", "x")),
  // the operator CLI's `render cancel` and RenderService.cancel
  cancel: (id: string) => Effect.ignore(cancelRender(id))
} as const
type TransitionName = keyof typeof transitions
const runTransition = (name: TransitionName, id: string, p: number) =>
  name === "progress" ? transitions.progress(id, p) : transitions[name](id)

const createCommand = (payerIndex: number, idempotencyKey: string | null) =>
  command(`create(payer ${payerIndex}, ${idempotencyKey ?? "-"})`, (m) =>
    Effect.gen(function*() {
      const payer = m.account.payers[payerIndex]
      const scopedKey = idempotencyKey === null ? null : `${payer.keyId ?? "ws"}:${idempotencyKey}`
      const earlier = scopedKey === null ? undefined : m.idempotent.get(scopedKey)
      // a keyed create runs under the API's idempotency record; a retry reuses the record it took over
      let recordId: number | null = earlier?.recordId ?? null
      const keyId = payer.keyId
      if (scopedKey !== null && keyId !== null && earlier === undefined) {
        const begun = yield* IdempotencyRepo.use((repo) => repo.begin(keyId, "createRender", scopedKey, "fp"))
        recordId = begun._tag === "New" ? begun.recordId : null
      }
      const before = yield* RendersRepo.use((repo) => repo.usage(payer.workspaceId))
      const id = `rnd_${randomUUID().replaceAll("-", "")}`
      const outcome = yield* Effect.result(m.account.charge(payer, {
        id,
        mediaId: m.account.mediaId,
        request: { media_id: m.account.mediaId },
        metadata: {},
        idempotencyKey: idempotencyKey === null ? null : scopedKey,
        idempotencyRecordId: recordId,
        captionBlobKey: null,
        deadline: Date.now() + 60_000
      }))
      if (Result.isFailure(outcome)) {
        // a refusal is the charge rule's, on the counts as they were
        const code = outcome.failure.code
        expect(earlier, "a retried create finds its render, never a refusal").toBeUndefined()
        if (code === "quota_exceeded") expect(before.used).toBeGreaterThanOrEqual(included)
        else expect(code).toBe("spend_cap_reached")
        return
      }
      const { renderId, charged } = outcome.success
      if (earlier !== undefined) {
        expect(renderId).toBe(earlier.renderId)
        expect(charged).toBe(false)
        return
      }
      expect(charged).toBe(true)
      m.renders.push({ id: renderId, status: "queued", progress: 0 })
      if (scopedKey !== null) m.idempotent.set(scopedKey, { renderId, recordId })
    }).pipe(Effect.orDie))

/** Mostly starts and progress, so renders spend a while processing before something ends them. */
const transitionName: fc.Arbitrary<TransitionName> = fc.oneof(
  { arbitrary: fc.constant("start" as const), weight: 3 },
  { arbitrary: fc.constant("progress" as const), weight: 6 },
  { arbitrary: fc.constantFrom("complete" as const, "fail" as const, "timeout" as const, "cancel" as const), weight: 3 }
)

const renderCommands = fc.commands([
  fc.tuple(fc.nat(2), fc.option(fc.constantFrom("a", "b", "c"), { nil: null })).map(([p, k]) => createCommand(p, k)),
  fc.tuple(transitionName, fc.nat(), fc.integer({ min: -20, max: 150 })).map(([name, i, p]) =>
    command(`${name}(${i}${name === "progress" ? `, ${p}` : ""})`, (m) => runTransition(name, pick(m, i), p), true)
  ),
  // two owners acting on one render at once (a cancel racing the runner's last steps, the sweeper racing a rerun)
  fc.tuple(transitionName, transitionName, fc.nat(), fc.integer({ min: 0, max: 99 })).map(
    ([a, b, i, p]) =>
      command(`race(${a}, ${b}, ${i})`, (m) => {
        const id = pick(m, i)
        return Effect.asVoid(Effect.all([runTransition(a, id, p), runTransition(b, id, p)], { concurrency: 2 }))
      }, true)
  )
], { maxCommands: 30 })

describe("renders and charges against PostgreSQL (model-based)", () => {
  it("random command sequences keep every invariant after every step", async () => {
    await fc.assert(
      fc.asyncProperty(renderCommands, async (cmds) => {
        const account = await run(Scope.provide(makeAccount, clients))
        await fc.asyncModelRun(
          () => ({ model: { account, renders: [], idempotent: new Map() } satisfies Model, real: {} }),
          cmds
        )
      }),
      { numRuns: 40 }
    )
  }, 120_000)
})

// -- imports ----------------------------------------------------------------------------------------

interface ImportModel {
  readonly importId: string
  readonly workspaceId: string
  status: ImportState.State["status"]
  stoppedReason: ImportState.StoppedReason | null
  /** the tally and stop of the first end: what the final status must follow from */
  ended: { readonly tally: ImportState.Tally; readonly stopped: ImportState.StoppedReason | null } | undefined
  position: number
}

const makeImport = Effect.gen(function*() {
  const ws = yield* WorkspacesRepo.use((repo) =>
    repo.create("imports", { plan: "custom", included: 0, storageBudgetBytes: 10 ** 9 })
  )
  const row = yield* ImportsRepo.use((repo) =>
    repo.create({
      id: `imp_${randomUUID().replaceAll("-", "")}`,
      workspaceId: ws.id,
      apiKeyId: null,
      folderId: "folder",
      idempotencyRecordId: null
    })
  )
  return {
    importId: row.id,
    workspaceId: ws.id,
    status: row.status,
    stoppedReason: null,
    ended: undefined,
    position: 0
  } satisfies ImportModel
})

const checkImport = (m: ImportModel) =>
  Effect.gen(function*() {
    const row = (yield* ImportsRepo.use((repo) => repo.byId(m.importId)))!
    // pending until it ends, once; what it ended as stands
    if (ImportState.isTerminal(m.status)) {
      expect(row.status).toBe(m.status)
      expect(row.stopped_reason).toBe(m.stoppedReason)
    }
    expect(row.completed_at === null).toBe(!ImportState.isTerminal(row.status))
    if (ImportState.isTerminal(row.status)) {
      expect(m.ended).toBeDefined()
      expect(row.status).toBe(ImportState.finalStatus(m.ended!.tally, m.ended!.stopped))
    }
    m.status = row.status
    m.stoppedReason = row.stopped_reason
  })

const importCommand = (
  label: string,
  step: (m: ImportModel) => Effect.Effect<void, never, Env>
): fc.AsyncCommand<ImportModel, unknown> => ({
  check: () => true,
  run: (m) => run(Effect.andThen(step(m), checkImport(m))),
  toString: () => label
})

const itemOf = (kind: number, mediaId: string): Imports.NewItem =>
  kind === 0
    ? { status: "imported", mediaId }
    : kind === 1
    ? { status: "skipped", reason: "already_imported" }
    : { status: "failed", reason: "download_failed" }

const endImport = (stopped: ImportState.StoppedReason | null) => (m: ImportModel) =>
  Effect.gen(function*() {
    const tally = yield* ImportsRepo.use((repo) => repo.tally(m.importId))
    const wasPending = !ImportState.isTerminal((yield* ImportsRepo.use((repo) => repo.byId(m.importId)))!.status)
    yield* ImportsRepo.use((repo) => repo.finish(m.importId, stopped))
    if (wasPending && m.ended === undefined) m.ended = { tally, stopped }
  })

const importCommands = fc.commands([
  fc.nat(600).map((n) =>
    importCommand(`discovered(${n})`, (m) => ImportsRepo.use((repo) => repo.setDiscovered(m.importId, n)))
  ),
  fc.nat(2).map((kind) =>
    importCommand(`item(${kind})`, (m) =>
      Effect.gen(function*() {
        // items are recorded only while the import runs, as the Import entity does
        if (ImportState.isTerminal(m.status)) return
        const sql = yield* SqlClient.SqlClient
        const mediaId = randomUUID()
        yield* sql`INSERT INTO media ${
          sql.insert({
            id: mediaId,
            workspace_id: m.workspaceId,
            created_at: new Date(),
            label: "",
            tags: [],
            width: 1,
            height: 1,
            mime_type: "image/png",
            file_size_bytes: 1,
            blob_key: `media/x/${mediaId}`,
            source_ref: `f${m.position}`
          })
        }`.pipe(Effect.orDie)
        yield* ImportsRepo.use((repo) =>
          repo.recordItem(
            m.importId,
            m.position,
            { id: `f${m.position}`, name: `f${m.position}` },
            itemOf(kind, mediaId)
          )
        )
        m.position++
      }))
  ),
  fc.option(fc.constantFrom(...ImportState.stoppedReasons), { nil: null }).map((stopped) =>
    importCommand(`finish(${stopped})`, endImport(stopped))
  ),
  // a rerun racing the first run to the end
  fc.tuple(
    fc.option(fc.constantFrom(...ImportState.stoppedReasons), { nil: null }),
    fc.option(fc.constantFrom(...ImportState.stoppedReasons), { nil: null })
  )
    .map(([a, b]) =>
      importCommand(`race(finish(${a}), finish(${b}))`, (m) =>
        Effect.gen(function*() {
          const tally = yield* ImportsRepo.use((repo) => repo.tally(m.importId))
          const pending = !ImportState.isTerminal((yield* ImportsRepo.use((repo) => repo.byId(m.importId)))!.status)
          const [sa, sb] = yield* Effect.all([
            ImportsRepo.use((repo) => repo.finish(m.importId, a)),
            ImportsRepo.use((repo) => repo.finish(m.importId, b))
          ], {
            concurrency: 2
          })
          if (pending && m.ended === undefined) {
            // whichever won, both answer the status it wrote
            expect(sa).toBe(sb)
            m.ended = { tally, stopped: ImportState.finalStatus(tally, a) === sa ? a : b }
          }
        }))
    )
], { maxCommands: 20 })

describe("imports against PostgreSQL (model-based)", () => {
  it("random command sequences keep every invariant after every step", async () => {
    await fc.assert(
      fc.asyncProperty(importCommands, async (cmds) => {
        const m = await run(makeImport)
        await fc.asyncModelRun(() => ({ model: m, real: {} }), cmds)
      }),
      { numRuns: 30 }
    )
  }, 120_000)
})
