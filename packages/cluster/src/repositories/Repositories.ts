import { Layer } from "effect"
import { ApiKeysRepo } from "./ApiKeysRepo.ts"
import { BacklogRepo } from "./BacklogRepo.ts"
import { ClusterRepo } from "./ClusterRepo.ts"
import { IdempotencyRepo } from "./IdempotencyRepo.ts"
import { ImportsRepo } from "./ImportsRepo.ts"
import { IntegrationsRepo } from "./IntegrationsRepo.ts"
import { KeyAccessRepo } from "./KeyAccessRepo.ts"
import { MediaRepo } from "./MediaRepo.ts"
import { PortalBatchesRepo } from "./PortalBatchesRepo.ts"
import { PortalSessionsRepo } from "./PortalSessionsRepo.ts"
import { RendersRepo } from "./RendersRepo.ts"
import { SystemRepo } from "./SystemRepo.ts"
import { WorkspacesRepo } from "./WorkspacesRepo.ts"

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
