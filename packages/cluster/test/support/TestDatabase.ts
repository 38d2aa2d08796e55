import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { makeDatabase } from "../../../../test/support/service.ts"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as KeyHasher from "../../src/config/KeyHasher.ts"
import * as Database from "../../src/database/Database.ts"
import { MediaRepo } from "../../src/repositories/MediaRepo.ts"
import * as Repositories from "../../src/repositories/Repositories.ts"

/**
 * A database of the test file's own on the run's PostgreSQL (vitest's globalSetup starts one, or
 * TEST_DATABASE_URL), migrated, with every repository over it and a key hasher with a random key.
 * Built inside `it.layer`, so the repositories read the test's `TestClock`.
 */
export const layer = Layer.unwrap(
  Effect.map(
    Effect.promise(makeDatabase),
    (url) =>
      Layer.mergeAll(Repositories.layer, Layer.succeed(KeyHasher.KeyHasher, KeyHasher.make(randomBytes(32)))).pipe(
        Layer.provideMerge(Database.layer),
        Layer.provide(AppConfig.layerWith({ databaseUrl: Option.some(Redacted.make(url)) }))
      )
  )
)

/** A 10×10 PNG's row in the workspace's library (no file behind it: the tests read rows only); its id. */
export const addPhoto = (workspaceId: string) =>
  Effect.gen(function*() {
    const id = randomUUID()
    const added = yield* (yield* MediaRepo).add({
      id,
      workspaceId,
      label: "",
      tags: [],
      width: 10,
      height: 10,
      mimeType: "image/png",
      sizeBytes: 1,
      blobKey: `media/${workspaceId}/${id}`,
      sourceRef: null
    })
    if (added._tag !== "Inserted") return yield* Effect.die(new Error(`photo ${id} was not inserted: ${added._tag}`))
    return id
  })
