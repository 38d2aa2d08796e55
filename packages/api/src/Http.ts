import * as AppConfig from "@pic2video/cluster/config/AppConfig"
import * as PublicBaseUrl from "@pic2video/cluster/config/PublicBaseUrl"
import { RateLimiter } from "@pic2video/cluster/entities/RateLimiter"
import * as Services from "@pic2video/cluster/services/Services"
import { Api } from "@pic2video/domain/api/Api"
import { Effect, Layer, type Scope } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import type { HttpServerResponse } from "effect/http/HttpServerResponse"
import * as Admission from "./Admission.ts"
import { Authentication } from "./Authentication.ts"
import * as Docs from "./Docs.ts"
import * as ImportsHandlers from "./handlers/Imports.ts"
import * as IntegrationsHandlers from "./handlers/Integrations.ts"
import * as MediaHandlers from "./handlers/Media.ts"
import * as OAuthHandlers from "./handlers/OAuth.ts"
import * as RendersHandlers from "./handlers/Renders.ts"
import * as SystemHandlers from "./handlers/System.ts"
import { InFlight } from "./InFlight.ts"
import * as Pipeline from "./Pipeline.ts"
import { routerConfig } from "./RequestPath.ts"
import * as UploadBody from "./UploadBody.ts"

/**
 * An HTTP app: the answer to the request in context (in the request's scope), every failure already
 * answered.
 */
export type App<R = never> = Effect.Effect<HttpServerResponse, never, R | HttpServerRequest | Scope.Scope>

/** The HttpApi's handlers, with admission (Admission.ts) as their middleware. */
const layerHandlers = Layer.mergeAll(
  SystemHandlers.layer,
  MediaHandlers.layer,
  RendersHandlers.layer,
  ImportsHandlers.layer,
  IntegrationsHandlers.layer,
  OAuthHandlers.layer
).pipe(
  Layer.provide([Admission.layer, Admission.layerUnauthenticated]),
  Layer.provide(ImportsHandlers.layerCurrentImport),
  Layer.provide(Authentication.layer)
)

/**
 * /docs: Scalar's page with its script inlined by the platform, nothing loaded from elsewhere
 * (no vendor fonts, no telemetry, no toolbar linking to the vendor's SDK and sharing services),
 * Bearer preselected, operations headed by their summaries. Options newer than the platform's
 * `ScalarConfig` type are passed through as they are (a variable, so no excess-property check).
 */
const scalar = {
  withDefaultFonts: false,
  showToolbar: "never",
  telemetry: false,
  hideClientButton: false,
  operationTitleSource: "summary",
  authentication: { preferredSecurityScheme: "bearer" },
  customCss: ":root { --scalar-font: system-ui, sans-serif; --scalar-font-code: ui-monospace, monospace; }"
}

const openApiPath = "/openapi.json"
const docsPath = "/docs"

/**
 * The router's routes: the contract's endpoints, /openapi.json and /docs. The documents name the
 * origin this service answers under (PUBLIC_BASE_URL) as their server.
 */
const layerRoutes = Layer.unwrap(
  Effect.map(AppConfig.AppConfig, ({ publicBaseUrl }) => {
    const documented = Api.annotate(OpenApi.Servers, [{ url: publicBaseUrl, description: "This service" }])
    return Layer.mergeAll(
      HttpApiBuilder.layer(documented, { openapiPath: openApiPath }),
      Docs.layer(documented, { path: docsPath, scalar })
    )
  })
).pipe(Layer.provide(layerHandlers))

/** Every route the router holds, for the pipeline's 404/405 probe. */
const routes = (() => {
  const all: Array<{ readonly method: string; readonly path: string }> = []
  HttpApi.reflect(Api, { onGroup() {}, onEndpoint: ({ endpoint }) => all.push(endpoint) })
  return [...all, { method: "GET", path: openApiPath }, { method: "GET", path: docsPath }]
})()

/**
 * The v1 API as an HTTP app: the contract's routes, /openapi.json and /docs. `around` is handed the
 * API's app and serves the request (the composition puts the portal beside it there); the HTTP
 * server itself is provided by the process that runs it.
 */
export const serve = <R>(around: (api: App) => App<R>) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const pipeline = yield* Pipeline.make(routes)
      // The router's own app, wrapped here rather than given to the server as its middleware: the
      // server's middleware sees the answer only once it has been sent. Nothing logs each request
      // (the composition measures and traces them: server/Observability.ts).
      const router = yield* HttpRouter.toHttpEffect(layerRoutes).pipe(
        Effect.provideService(HttpRouter.RouterConfig, routerConfig)
      )
      const api: App = pipeline(router)
      const app = around(api)
      return HttpServer.serve(
        Effect.flatMap(HttpServerRequest, (request) =>
          Effect.map(app, (response) => UploadBody.keepOpen(request, response)))
      )
    })
  ).pipe(
    // admission and the pipeline around the router share what a request in flight leaves
    Layer.provide(InFlight.layer),
    Layer.provide(RateLimiter.layer),
    // the portal's pages call the same services (one instance: layers are shared within a build)
    Layer.provide(Services.layer),
    Layer.provide(Pipeline.layerWithoutPlatformSpan),
    // the operator CLI prints the URLs this process serves under
    Layer.merge(Layer.effectDiscard(Effect.orDie(PublicBaseUrl.record)))
  )

export { ReadsTraced } from "./Pipeline.ts"
