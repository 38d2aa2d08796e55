import * as AppConfig from "@pic2video/cluster/AppConfig"
import * as BlobStore from "@pic2video/cluster/BlobStore"
import * as Database from "@pic2video/cluster/Database"
import * as KeyHasher from "@pic2video/cluster/KeyHasher"
import { Layer } from "effect"

/** What every process needs: configuration, the database (migrated), stored files, key hashing. */
export const layerInfra = Layer.mergeAll(BlobStore.layerLocal, KeyHasher.layer).pipe(
  Layer.provideMerge(Database.layer),
  Layer.provideMerge(AppConfig.layer)
)
