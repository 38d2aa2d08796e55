import * as AppConfig from "@pic2video/cluster/config/AppConfig"
import * as InstallationSecrets from "@pic2video/cluster/config/InstallationSecrets"
import * as KeyHasher from "@pic2video/cluster/config/KeyHasher"
import * as Database from "@pic2video/cluster/database/Database"
import { RateWindows } from "@pic2video/cluster/entities/RateWindows"
import * as Repositories from "@pic2video/cluster/repositories/Repositories"
import * as BlobStore from "@pic2video/cluster/storage/BlobStore"
import { Vision } from "@pic2video/vision"
import { Layer } from "effect"

/**
 * What every process needs: configuration, the database (migrated) and its repositories, stored
 * files (BLOB_STORE_URL), key hashing, and the vision model (started on first use) that looks at photos entering the library.
 * The installation's secrets are checked against the database before anything uses them: a process
 * holding other secrets than the installation's stops there (InstallationSecrets.ts).
 */
export const layerInfra = Layer.mergeAll(
  BlobStore.layer,
  KeyHasher.layer,
  Vision.layerFromEnv,
  Repositories.layer,
  // one window table per process, below both the ApiKey entity and the request path's admission
  RateWindows.layer
)
  .pipe(
    Layer.provideMerge(InstallationSecrets.layer),
    Layer.provideMerge(Database.layer),
    Layer.provideMerge(AppConfig.layer)
  )
