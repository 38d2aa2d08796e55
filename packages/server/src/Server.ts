import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Http from "@pic2video/api/Http"
import * as RouteMetrics from "@pic2video/api/RouteMetrics"
import * as AppConfig from "@pic2video/cluster/config/AppConfig"
import * as InstallationSecrets from "@pic2video/cluster/config/InstallationSecrets"
import * as DriveApi from "@pic2video/cluster/drive/DriveApi"
import * as Integrations from "@pic2video/cluster/drive/Integrations"
import * as ApiKeyEntity from "@pic2video/cluster/entities/ApiKeyEntity"
import * as ImportEntity from "@pic2video/cluster/entities/ImportEntity"
import * as Maintenance from "@pic2video/cluster/entities/Maintenance"
import * as RenderEntity from "@pic2video/cluster/entities/RenderEntity"
import * as Sharding from "@pic2video/cluster/entities/Sharding"
import * as Portal from "@pic2video/portal"
import { Renderer } from "@pic2video/renderer"
import { Effect, Layer } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { answerClientErrors } from "./ClientError.ts"
import * as HttpTimeouts from "./HttpTimeouts.ts"
import { layerInfra } from "./Infra.ts"
import * as Lifecycle from "./Lifecycle.ts"
import * as Observability from "./Observability.ts"

/**
 * The composition: which parts each process runs (all-in-one, api, runner), wired once. The API
 * (packages/api), the portal (packages/portal) and the cluster's entities (packages/cluster) know
 * nothing of each other's processes; this module decides where they run.
 */

const HttpServerLive = Layer.unwrap(
  Effect.map(
    Effect.all([AppConfig.AppConfig, HttpTimeouts.config, Effect.context<never>()]),
    ([c, timeouts, services]) =>
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
        // counted in /metrics; logged at a bounded rate through the process's logger (LOG_FORMAT)
        answerClientErrors(server, {
          onProtocolError: RouteMetrics.protocolError,
          log: (line) => Effect.runForkWith(services)(Effect.logWarning(line))
        })
        return server
      }, { port: c.port, host: c.host })
  )
)

/**
 * The account portal is served beside the API, not through it: /portal requests go to the portal's
 * own app before the API's pipeline sees them, so the API's routes, authentication (Bearer only, a
 * cookie is never read) and OpenAPI document are exactly what they are without it.
 */
type PortalServices = Effect.Services<typeof Portal.app>

const withPortal = <R>(api: Http.App<R>): Http.App<R | PortalServices> =>
  Effect.flatMap(
    HttpServerRequest,
    (request): Http.App<R | PortalServices> =>
      Portal.isPortalPath(new URL(request.url, "http://localhost").pathname) ? Portal.app : api
  )

const layerHttp = Http.serve((api) => Observability.observed(withPortal(api))).pipe(
  Layer.provide(Portal.layer),
  HttpServer.withLogAddress,
  Layer.provide(HttpServerLive)
)

export { layerInfra }

/**
 * The drive integration (contract §1, §7): the provider client (GOOGLE_* variables), the key that
 * encrypts stored tokens (the installation's: TOKEN_ENCRYPTION_KEY or a key generated into DATA_DIR,
 * checked against the database by layerInfra), the retry policy
 * (DRIVE_RETRY_*), and the connection store on top of them.
 */
export const layerDrive = Integrations.layer.pipe(
  Layer.provide(
    Layer.mergeAll(DriveApi.layerConfig, InstallationSecrets.layerTokenCipher, Integrations.layerRetryPolicy)
  ),
  Layer.provide(NodeServices.layer)
)

/**
 * Entities this process hosts when it is a runner, and the runner's background duties; once they
 * are registered, the runner takes its shards (Sharding.entitiesRegistered).
 */
export const layerEntities = Sharding.entitiesRegistered(
  Layer.mergeAll(
    ApiKeyEntity.layer,
    RenderEntity.layer,
    ImportEntity.layer,
    Maintenance.layer
  ).pipe(
    Layer.provide(RenderEntity.layerSlots),
    Layer.provide(Renderer.layerFromEnv)
  )
)

/**
 * Every process: its telemetry beneath everything (logger, tracer, metric reader: Observability.ts),
 * and its /metrics listener (METRICS_PORT) beside its work; the all-in-one process has one for both parts.
 * Its stop is logged step by step, and a listener that cannot bind ends its start in one line
 * (Lifecycle.ts): the steps sit between the layers whose release they announce (released in the
 * reverse order of this list: the work, the cluster, the database).
 */
const allInOne = Lifecycle.steps("all-in-one")
const apiOnly = Lifecycle.steps("api")
const runnerOnly = Lifecycle.steps("runner")

/** `npm start`: the HTTP API and a runner in one process (embedded PostgreSQL unless DATABASE_URL). */
export const layerAllInOne = allInOne.outermost.pipe(
  Layer.provideMerge(Layer.mergeAll(layerHttp, Observability.layerMetricsServer)),
  Layer.provideMerge(layerEntities),
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(allInOne.beforeCluster),
  Layer.provideMerge(Sharding.layerRunner),
  Layer.provideMerge(allInOne.beforeDatabase),
  Layer.provideMerge(layerInfra),
  Layer.provideMerge(allInOne.afterDatabase),
  Lifecycle.reportingListenFailures("all-in-one"),
  Layer.provide(Observability.layerTelemetry("all-in-one"))
)

/** `npm run api`: HTTP only, a client of the cluster; renders run on the runners. */
export const layerApiOnly = apiOnly.outermost.pipe(
  Layer.provideMerge(Layer.mergeAll(layerHttp, Observability.layerMetricsServer)),
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(apiOnly.beforeCluster),
  Layer.provideMerge(Sharding.layerClientOnly),
  Layer.provideMerge(apiOnly.beforeDatabase),
  Layer.provideMerge(layerInfra),
  Layer.provideMerge(apiOnly.afterDatabase),
  Lifecycle.reportingListenFailures("api"),
  Layer.provide(Observability.layerTelemetry("api"))
)

/** `npm run runner`: hosts entities and renders, serves no HTTP. */
export const layerRunnerOnly = runnerOnly.outermost.pipe(
  Layer.provideMerge(Layer.mergeAll(layerEntities, Observability.layerMetricsServer)),
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(runnerOnly.beforeCluster),
  Layer.provideMerge(Sharding.layerRunner),
  Layer.provideMerge(runnerOnly.beforeDatabase),
  Layer.provideMerge(layerInfra),
  Layer.provideMerge(runnerOnly.afterDatabase),
  Lifecycle.reportingListenFailures("runner"),
  Layer.provide(Observability.layerTelemetry("runner"))
)
