import { HttpApi, HttpApiBuilder, HttpApiScalar, type HttpApp, OpenApi } from "@effect/platform"
import * as AppConfig from "@pic2video/cluster/AppConfig"
import * as PublicBaseUrl from "@pic2video/cluster/PublicBaseUrl"
import * as Services from "@pic2video/cluster/services/Services"
import { Api } from "@pic2video/domain/api/Api"
import { Effect, Layer } from "effect"
import * as ImportsHandlers from "./handlers/Imports.ts"
import * as IntegrationsHandlers from "./handlers/Integrations.ts"
import * as MediaHandlers from "./handlers/Media.ts"
import * as OAuthHandlers from "./handlers/OAuth.ts"
import * as RendersHandlers from "./handlers/Renders.ts"
import * as SystemHandlers from "./handlers/System.ts"
import * as Pipeline from "./Pipeline.ts"

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

/**
 * The v1 API as an HTTP app: the contract's routes, /openapi.json and /docs. `around` is handed the
 * API's app and serves the request (the composition puts the portal beside it there); the HTTP
 * server itself is provided by the process that runs it.
 */
export const serve = <R>(around: (api: HttpApp.Default) => HttpApp.Default<never, R>) =>
  HttpApiBuilder.serve(around).pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }).pipe(Layer.provide(DocumentedApi))),
    Layer.provide(HttpApiScalar.layer({ path: "/docs", scalar }).pipe(Layer.provide(DocumentedApi))),
    Layer.provide(Pipeline.layer),
    Layer.provide(ApiLive),
    Layer.provide(Pipeline.layerRouterConfig),
    // the portal's pages call the same services (one instance: layers are shared within a build)
    Layer.provide(Services.layer),
    Pipeline.layerWithoutPlatformSpan,
    // the operator CLI prints the URLs this process serves under
    Layer.merge(Layer.effectDiscard(Effect.orDie(PublicBaseUrl.record)))
  )

export { ReadsTraced } from "./Pipeline.ts"
