import { HttpApi, HttpApiBuilder, HttpApiScalar, type HttpApp, HttpServer, HttpServerRequest, OpenApi } from "@effect/platform"
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
import * as Services from "@pic2video/cluster/services/Services"
import * as Sharding from "@pic2video/cluster/Sharding"
import * as Portal from "@pic2video/portal"
import { Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Api } from "./Api.ts"
import { answerClientErrors } from "./ClientError.ts"
import * as HttpTimeouts from "./HttpTimeouts.ts"
import * as ImportsHandlers from "./handlers/Imports.ts"
import * as IntegrationsHandlers from "./handlers/Integrations.ts"
import * as MediaHandlers from "./handlers/Media.ts"
import * as OAuthHandlers from "./handlers/OAuth.ts"
import * as RendersHandlers from "./handlers/Renders.ts"
import * as SystemHandlers from "./handlers/System.ts"
import * as Pipeline from "./Pipeline.ts"
import { layerInfra } from "./Infra.ts"

/** The HttpApi with its handlers and the checks of the request pipeline (Pipeline.ts). */
const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    SystemHandlers.layer,
    MediaHandlers.layer,
    RendersHandlers.layer,
    ImportsHandlers.layer,
    IntegrationsHandlers.layer,
    OAuthHandlers.layer
  ]),
  Layer.provide(Pipeline.layerAdmission),
  Layer.provide(ImportsHandlers.layerCurrentImport),
  Layer.provide(Services.layer)
)

const HttpServerLive = Layer.unwrapEffect(
  Effect.zipWith(AppConfig.AppConfig, HttpTimeouts.config, (c, timeouts) =>
    NodeHttpServer.layer(() => {
      const server = createServer({ connectionsCheckingInterval: HttpTimeouts.checkingIntervalMillis(timeouts) })
      // a stuck or trickling client cannot hold a fiber, a temp file, or shutdown (HttpTimeouts.ts)
      HttpTimeouts.apply(server, timeouts)
      // A body the handler never read (a 401 before an upload is parsed) is dumped by Node once the
      // answer is sent; Deno 2.9's node:http leaves it buffered and stops reading the connection, so
      // the next keep-alive request on it hangs until reset. Dump it here too (a no-op on Node).
      server.on("request", (req: IncomingMessage, res: ServerResponse) =>
        res.once("finish", () => {
          if (!req.readableDidRead) req.resume()
        }))
      answerClientErrors(server)
      return server
    }, { port: c.port, host: c.host }))
)

/** The documents name the origin this service answers under (PUBLIC_BASE_URL) as their server. */
const DocumentedApi = Layer.effect(
  HttpApi.Api,
  Effect.gen(function*() {
    const { api, context } = yield* HttpApi.Api
    const { publicBaseUrl } = yield* AppConfig.AppConfig
    return { api: api.annotate(OpenApi.Servers, [{ url: publicBaseUrl, description: "This service" }]), context }
  })
)

/**
 * /docs: Scalar's page with its script inlined by @effect/platform, nothing loaded from elsewhere
 * (no vendor fonts, no telemetry, no toolbar linking to the vendor's SDK and sharing services),
 * Bearer preselected, operations headed by their summaries.
 */
const scalar = {
  withDefaultFonts: false,
  showToolbar: "never",
  telemetry: false,
  hideClientButton: false,
  operationTitleSource: "summary",
  authentication: { preferredSecurityScheme: "bearer" },
  customCss: ":root { --scalar-font: system-ui, sans-serif; --scalar-font-code: ui-monospace, monospace; }"
} as HttpApiScalar.ScalarConfig

/**
 * The account portal is served beside the API, not through it: /portal requests go to the portal's
 * own app before the API's pipeline sees them, so the API's routes, authentication (Bearer only, a
 * cookie is never read) and OpenAPI document are exactly what they are without it.
 */
const withPortal = (api: HttpApp.Default) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Portal.isPortalPath(new URL(request.url, "http://localhost").pathname) ? Portal.app : api)

export const layerHttp = HttpApiBuilder.serve(withPortal).pipe(
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }).pipe(Layer.provide(DocumentedApi))),
  Layer.provide(HttpApiScalar.layer({ path: "/docs", scalar }).pipe(Layer.provide(DocumentedApi))),
  Layer.provide(Pipeline.layer),
  Layer.provide(ApiLive),
  Layer.provide(Pipeline.layerRouterConfig),
  // the portal's pages call the same services (one instance: layers are shared within a build)
  Layer.provide(Services.layer),
  HttpServer.withLogAddress,
  Layer.provide(HttpServerLive),
  Pipeline.layerUntracedReads,
  // the operator CLI prints the URLs this process serves under
  Layer.merge(Layer.effectDiscard(Effect.orDie(PublicBaseUrl.record)))
)

export { layerInfra }

/**
 * The drive integration (contract §1, §7): the provider client (GOOGLE_* variables), the key that
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
