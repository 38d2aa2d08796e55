import { Layer } from "effect"
import { ApiKeysRepo } from "./ApiKeys.ts"
import { BacklogRepo } from "./Backlog.ts"
import { ClusterRepo } from "./Cluster.ts"
import { IdempotencyRepo } from "./IdempotencyRecords.ts"
import { ImportsRepo } from "./Imports.ts"
import { IntegrationsRepo } from "./Integrations.ts"
import { KeyAccessRepo } from "./KeyAccess.ts"
import { MediaRepo } from "./Media.ts"
import { PortalBatchesRepo } from "./PortalBatches.ts"
import { PortalSessionsRepo } from "./PortalSessions.ts"
import { RendersRepo } from "./Renders.ts"
import { SystemRepo } from "./System.ts"
import { WorkspacesRepo } from "./Workspaces.ts"

/**
 * Every repository: the only modules that hold SQL (one service per aggregate, rows decoded with
 * their schemas). Needs the database client.
 */
export const layer = Layer.mergeAll(
  ApiKeysRepo.layer,
  BacklogRepo.layer,
  ClusterRepo.layer,
  IdempotencyRepo.layer,
  ImportsRepo.layer,
  IntegrationsRepo.layer,
  KeyAccessRepo.layer,
  MediaRepo.layer,
  PortalBatchesRepo.layer,
  PortalSessionsRepo.layer,
  RendersRepo.layer,
  SystemRepo.layer,
  WorkspacesRepo.layer
)
