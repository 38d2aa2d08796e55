import * as AppConfig from "@pic2video/cluster/AppConfig"
import * as BlobStore from "@pic2video/cluster/BlobStore"
import * as Database from "@pic2video/cluster/Database"
import * as InstallationSecrets from "@pic2video/cluster/InstallationSecrets"
import * as KeyHasher from "@pic2video/cluster/KeyHasher"
import { RateWindows } from "@pic2video/cluster/RateWindows"
import * as Repositories from "@pic2video/cluster/Repositories"
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
