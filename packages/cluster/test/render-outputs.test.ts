import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { RenderResult } from "@pic2video/renderer"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { outputKeys, storeOutputs } from "../src/entities/RenderEntity.ts"
import { MediaRepo } from "../src/repositories/MediaRepo.ts"
import { RendersRepo } from "../src/repositories/RendersRepo.ts"
import { WorkspacesRepo } from "../src/repositories/WorkspacesRepo.ts"
import { Charges } from "../src/services/Charges.ts"
import { cancel } from "../src/services/RenderService.ts"
import * as RenderTransitions from "../src/services/RenderTransitions.ts"
import { BlobStore, makeLocal } from "../src/storage/BlobStore.ts"
import * as TestDatabase from "./support/TestDatabase.ts"

/**
 * A finished render's files as the Render entity stores them (the very function it calls), on
 * PostgreSQL and the local blob store: the poster beside the video, and both gone when the video is
 * deleted (a render canceled while its files were being stored keeps neither).
 */
let runtime: ManagedRuntime.ManagedRuntime<
  SqlClient.SqlClient | BlobStore | RendersRepo | Charges | WorkspacesRepo | MediaRepo,
  never
>
let root: string

beforeAll(async () => {
  root = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-outputs-"))
  runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Charges.layer.pipe(Layer.provideMerge(TestDatabase.layer)),
      Layer.succeed(BlobStore, makeLocal(Path.join(root, "blobs")))
    ).pipe(Layer.orDie)
  )
  await runtime.runPromise(Effect.void)
})

afterAll(async () => {
  await runtime?.dispose()
  fs.rmSync(root, { recursive: true, force: true })
})

const result = (withPoster: boolean): RenderResult => ({
  duration_sec: 1,
  width: 1080,
  height: 1920,
  byte_size: 4,
  content_type: "video/mp4",
  ...(withPoster
    ? { poster: { width: 360, height: 640, byte_size: 3, content_type: "image/jpeg", frame: 14, time_sec: 14 / 30 } }
    : {})
})

/** A processing render of a fresh workspace (charged as the portal charges), and its finished files on disk. */
const processing = Effect.gen(function*() {
  const ws = yield* WorkspacesRepo.use((repo) =>
    repo.create("outputs", { plan: "custom", included: 10, storageBudgetBytes: 10 ** 9 })
  )
  const mediaId = yield* TestDatabase.addPhoto(ws.id)
  const id = `rnd_${randomUUID().replaceAll("-", "")}`
  yield* Charges.use((charges) =>
    charges.charge({
      id,
      payer: { workspaceId: ws.id, keyId: null, spendCap24h: null },
      mediaId,
      request: { media_id: mediaId },
      metadata: {},
      idempotencyKey: null,
      idempotencyRecordId: null,
      captionBlobKey: null,
      deadline: Date.now() + 10_000
    })
  )
  expect(yield* RenderTransitions.markProcessing(id)).toBeDefined()
  const files = { video: Path.join(root, `${id}.mp4`), poster: Path.join(root, `${id}.jpg`) }
  fs.writeFileSync(files.video, "mp4!")
  fs.writeFileSync(files.poster, "jpg")
  return { id, workspaceId: ws.id, files }
})

const stored = (key: string) => fs.existsSync(Path.join(root, "blobs", key))

describe("a render's stored files", () => {
  it("a completed render keeps its poster beside its video, named on its row", () =>
    runtime.runPromise(Effect.gen(function*() {
      const r = yield* processing
      expect(yield* storeOutputs(r.id, result(true), r.files)).toBe(true)
      const keys = outputKeys(r.id)
      expect(keys).toEqual({ video: `renders/${r.id}.mp4`, poster: `renders/${r.id}.poster.jpg` })
      expect(stored(keys.video) && stored(keys.poster)).toBe(true)
      const row = yield* RendersRepo.use((repo) => repo.byId(r.id))
      expect(row).toMatchObject({ status: "completed", asset_blob_key: keys.video, poster_blob_key: keys.poster })
    })))

  it("a render without a poster (the renderer made none) completes with none", () =>
    runtime.runPromise(Effect.gen(function*() {
      const r = yield* processing
      expect(yield* storeOutputs(r.id, result(false), r.files)).toBe(true)
      expect(stored(outputKeys(r.id).video)).toBe(true)
      expect(stored(outputKeys(r.id).poster)).toBe(false)
      expect((yield* RendersRepo.use((repo) => repo.byId(r.id)))?.poster_blob_key).toBeNull()
    })))

  it("the poster is deleted with the video: a render canceled while its files were stored keeps neither", () =>
    runtime.runPromise(Effect.gen(function*() {
      const r = yield* processing
      // canceled (and refunded) after the renderer finished, before the files were stored
      yield* cancel(r.id, r.workspaceId)
      expect(yield* storeOutputs(r.id, result(true), r.files)).toBe(false)
      expect(stored(outputKeys(r.id).video)).toBe(false)
      expect(stored(outputKeys(r.id).poster)).toBe(false)
      const row = yield* RendersRepo.use((repo) => repo.byId(r.id))
      expect(row).toMatchObject({ status: "canceled", asset_blob_key: null, poster_blob_key: null })
    })))

  it("the table refuses a poster on a render that is not completed", () =>
    runtime.runPromise(Effect.gen(function*() {
      const r = yield* processing
      const sql = yield* SqlClient.SqlClient
      const refused = yield* Effect.flip(
        sql`UPDATE renders SET poster_blob_key = 'renders/x.poster.jpg' WHERE id = ${r.id}`
      )
      // Effect 4: the SqlError's cause is a structured reason; the driver's own error (naming the
      // constraint) is the reason's cause
      expect(refused.reason._tag).toBe("ConstraintError")
      expect(String((refused.reason.cause as { message?: string }).message)).toMatch(/renders_poster_completed/)
    })))
})
