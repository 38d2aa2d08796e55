import { Vision, VisionUnavailable } from "@pic2video/vision"
import { Effect, Layer } from "effect"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { MediaService } from "../../src/services/MediaService.ts"
import { SystemService } from "../../src/services/SystemService.ts"
import * as BlobStore from "../../src/storage/BlobStore.ts"
import * as TestDatabase from "./TestDatabase.ts"

/**
 * The services the API and the portal call that need no cluster (the photo library and readiness),
 * built as the server builds them, over a database of the file's own (TestDatabase), the blob store
 * in memory (`BlobStore.layerMemory`) and a vision model that is not there — test code: every photo's
 * inference is stored as failed, which the service must survive (MediaInference.ts).
 */
export const publicBaseUrl = "http://p2v.test"

export const VisionAbsent = Layer.succeed(Vision, {
  model: "none (test)",
  infer: () => Effect.fail(new VisionUnavailable("no vision model in this test"))
})

export const layer = Layer.mergeAll(MediaService.layer, SystemService.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(BlobStore.layerMemory, VisionAbsent)),
  Layer.provideMerge(TestDatabase.layer),
  Layer.provideMerge(AppConfig.layerWith({ publicBaseUrl }))
)
