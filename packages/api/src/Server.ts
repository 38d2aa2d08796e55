import { HttpApiBuilder, HttpApiScalar, HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpServer } from "@effect/platform-node"
import * as AppConfig from "@pic2video/cluster/AppConfig"
import * as ApiKeyEntity from "@pic2video/cluster/ApiKeyEntity"
import * as BlobStore from "@pic2video/cluster/BlobStore"
import * as Database from "@pic2video/cluster/Database"
import * as DriveApi from "@pic2video/cluster/drive/DriveApi"
import * as TokenCipher from "@pic2video/cluster/drive/TokenCipher"
import * as ImportEntity from "@pic2video/cluster/ImportEntity"
import * as Integrations from "@pic2video/cluster/Integrations"
import * as KeyHasher from "@pic2video/cluster/KeyHasher"
import * as Maintenance from "@pic2video/cluster/Maintenance"
import * as PublicBaseUrl from "@pic2video/cluster/PublicBaseUrl"
import * as RenderEntity from "@pic2video/cluster/RenderEntity"
import { Renderer } from "@pic2video/renderer"
import * as Sharding from "@pic2video/cluster/Sharding"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { Api } from "./Api.ts"
import { answerClientErrors } from "./ClientError.ts"
import * as ImportsHandlers from "./handlers/Imports.ts"
import * as IntegrationsHandlers from "./handlers/Integrations.ts"
import * as MediaHandlers from "./handlers/Media.ts"
import * as OAuthHandlers from "./handlers/OAuth.ts"
import * as RendersHandlers from "./handlers/Renders.ts"
import * as SystemHandlers from "./handlers/System.ts"
import * as Pipeline from "./Pipeline.ts"
import { layerInfra } from "./Infra.ts"
import { Authenticated, authenticatedFromPipeline } from "./Principal.ts"

/** The HttpApi with its handlers, the request pipeline, /openapi.json and the /docs page. */
const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    SystemHandlers.layer,
    MediaHandlers.layer,
    RendersHandlers.layer,
    ImportsHandlers.layer,
    IntegrationsHandlers.layer,
    OAuthHandlers.layer
  ]),
  Layer.provide(Layer.succeed(Authenticated, authenticatedFromPipeline))
)

const HttpServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig.AppConfig, (c) =>
    NodeHttpServer.layer(() => {
      const server = createServer()
      // A connection that sends nothing and is answered nothing for this long is closed, so a
      // stuck request (a client that stops sending mid-body) cannot hold a fiber, a temp file, or
      // shutdown, forever.
      server.setTimeout(30_000)
      answerClientErrors(server)
      return server
    }, { port: c.port, host: c.host }))
)

export const layerHttp = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
  Layer.provide(Pipeline.layer),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress,
  Layer.provide(HttpServerLive),
  // the operator CLI prints the URLs this process serves under
  Layer.merge(Layer.effectDiscard(Effect.orDie(PublicBaseUrl.record)))
)

export { layerInfra }

/**
 * The drive integration (decisions §1, §7): the provider client (GOOGLE_* variables), the key that
 * encrypts stored tokens (TOKEN_ENCRYPTION_KEY or a key generated into DATA_DIR), the retry policy
 * (DRIVE_RETRY_*), and the connection store on top of them.
 */
export const layerDrive = Integrations.layer.pipe(
  Layer.provide(Layer.mergeAll(DriveApi.layerConfig, TokenCipher.layerConfig, Integrations.layerRetryPolicy)),
  Layer.provide(NodeContext.layer)
)

/** Entities this process hosts when it is a runner, and the runner's background duties. */
export const layerEntities = Layer.mergeAll(ApiKeyEntity.layer, RenderEntity.layer, ImportEntity.layer, Maintenance.layer).pipe(
  Layer.provide(RenderEntity.layerSlots),
  Layer.provide(Renderer.layerFromEnv)
)

/** `npm start`: the HTTP API and a runner in one process (embedded PostgreSQL unless DATABASE_URL). */
export const layerAllInOne = layerHttp.pipe(
  Layer.provideMerge(layerEntities),
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(Sharding.layerRunner),
  Layer.provideMerge(layerInfra)
)

/** `npm run api`: HTTP only, a client of the cluster; renders run on the runners. */
export const layerApiOnly = layerHttp.pipe(
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(Sharding.layerClientOnly),
  Layer.provideMerge(layerInfra)
)

/** `npm run runner`: hosts entities and renders, serves no HTTP. */
export const layerRunnerOnly = layerEntities.pipe(
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(Sharding.layerRunner),
  Layer.provideMerge(layerInfra)
)
