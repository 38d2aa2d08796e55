import { Layer } from "effect"
import { ApiKeyService } from "./ApiKeyService.ts"
import { ImportService } from "./ImportService.ts"
import { IntegrationService } from "./IntegrationService.ts"
import { MediaService } from "./MediaService.ts"
import { PortalBatchService } from "./PortalBatchService.ts"
import { PortalSessionService } from "./PortalSessionService.ts"
import { RenderService } from "./RenderService.ts"
import { SystemService } from "./SystemService.ts"
import { WorkspaceService } from "./WorkspaceService.ts"

const layerShared = Layer.mergeAll(
  RenderService.layer,
  MediaService.layer,
  ImportService.layer,
  IntegrationService.layer,
  SystemService.layer,
  ApiKeyService.layer,
  WorkspaceService.layer,
  PortalSessionService.layer
)

/**
 * Every service the HTTP API and the portal call. Needs the infrastructure (database, blob store,
 * configuration, key hasher), the drive integration and the cluster (entity clients) from the
 * process's layers. The portal's batches create their renders through the one RenderService.
 */
export const layer = Layer.provideMerge(PortalBatchService.layer, layerShared)
