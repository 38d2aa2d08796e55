import * as AppConfig from "@pic2video/cluster/AppConfig"
import * as BlobStore from "@pic2video/cluster/BlobStore"
import * as Database from "@pic2video/cluster/Database"
import * as KeyHasher from "@pic2video/cluster/KeyHasher"
import * as Repositories from "@pic2video/cluster/Repositories"
import { Vision } from "@pic2video/vision"
import { Layer } from "effect"

/**
 * What every process needs: configuration, the database (migrated) and its repositories, stored
 * files (BLOB_STORE_URL), key hashing, and the vision model (started on first use) that looks at photos entering the library.
 */
export const layerInfra = Layer.mergeAll(BlobStore.layer, KeyHasher.layer, Vision.layerFromEnv, Repositories.layer)
  .pipe(
    Layer.provideMerge(Database.layer),
    Layer.provideMerge(AppConfig.layer)
  )
