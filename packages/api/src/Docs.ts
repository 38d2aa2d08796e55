import { Effect, Predicate } from "effect"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type * as HttpApiScalar from "effect/http-api/HttpApiScalar"
import * as OpenApi from "effect/http-api/OpenApi"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

/**
 * /docs: Scalar's page, with its script inlined (the bundle the platform ships), nothing loaded from
 * elsewhere. The page is the one the service has always served (@effect/platform 0.x's layout: the
 * document in a `#api-reference` JSON script, the configuration in its `data-configuration`), which
 * Scalar's bundle still mounts; Effect 4's own HttpApiScalar writes another layout.
 */

// Regex to find script data delimiters in JSON to prevent breaking out of script context
const escapeScriptData = /</g
// Unicode line terminators are valid JSON but break JS string literals
const escapeLineTerms = /[\u2028\u2029]/g

/** JSON that cannot close the <script> it is written in. */
const escapeJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(escapeScriptData, "\\u003c")
    .replace(escapeLineTerms, (c) => c === "\u2028" ? "\\u2028" : "\\u2029")

const escape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const escapeAttribute = (text: string): string => escape(text).replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * Scalar's standalone bundle as the platform ships it: an internal module of `effect` (no types, not
 * in its package exports), found beside its entry point and loaded at start.
 */
const scalarModule = new URL("./http-api/internal/httpApiScalar.js", import.meta.resolve("effect")).href
const scalarSource = Effect.promise((): Promise<unknown> => import(scalarModule)).pipe(
  Effect.flatMap((module) =>
    Predicate.hasProperty(module, "javascript") && typeof module.javascript === "string"
      ? Effect.succeed(module.javascript)
      : Effect.die(new Error(`${scalarModule} has no Scalar bundle`))
  )
)

const page = (spec: OpenApi.OpenAPISpec, config: HttpApiScalar.ScalarConfig, source: string) =>
  HttpServerResponse.html(`<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escape(spec.info.title)}</title>
    ${!spec.info.description ? "" : `<meta name="description" content="${escapeAttribute(spec.info.description)}"/>`}
    ${!spec.info.description ? "" : `<meta name="og:description" content="${escapeAttribute(spec.info.description)}"/>`}
    <meta
      name="viewport"
      content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${escapeJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${
    escapeJson({ _integration: "html", ...config })
  })
    </script>
    <script>${source}</script>
  </body>
</html>`)

/** The route serving the page for `api` at `path`. */
export const layer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  options: { readonly path: `/${string}`; readonly scalar: HttpApiScalar.ScalarConfig }
) =>
  HttpRouter.use((router) =>
    Effect.flatMap(scalarSource, (source) => {
      const response = page(OpenApi.fromApi(api), options.scalar, source)
      return router.add("GET", options.path, Effect.succeed(response))
    })
  )
