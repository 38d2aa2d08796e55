import { Layer } from "effect"
import { ImportService } from "./ImportService.ts"
import { IntegrationService } from "./IntegrationService.ts"
import { MediaService } from "./MediaService.ts"
import { RenderService } from "./RenderService.ts"
import { SystemService } from "./SystemService.ts"

/**
 * Every service the HTTP API and the portal call. Needs the infrastructure (database, blob store,
 * configuration), the drive integration and the cluster (entity clients) from the process's layers.
 */
export const layer = Layer.mergeAll(
  RenderService.layer,
  MediaService.layer,
  ImportService.layer,
  IntegrationService.layer,
  SystemService.layer
)
