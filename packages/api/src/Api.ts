import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, Multipart, OpenApi } from "@effect/platform"
import { Errors, Requests, Resources } from "@pic2video/domain"
import { Option, Schema } from "effect"
import { Authenticated, PublicEndpoint, RequiredScope } from "./Principal.ts"

/**
 * The one definition of the v1 HTTP API: the server, the OpenAPI document, the /docs page and the
 * typed client are all derived from it. Each endpoint names the scope it requires and the error
 * codes it can answer with (grouped by status for the docs); every error body has the same shape.
 */
const ErrorBody = (status: number) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(...Errors.codesWithStatus(status)),
      message: Schema.String
    }),
    request_id: Schema.String
  }).annotations({ identifier: `Error${status}` })

/** Every authenticated endpoint can answer these (decisions §4 steps 1–5, and faults). */
const common: ReadonlyArray<Errors.ErrorCode> = [
  "invalid_request", "missing_api_key", "invalid_api_key", "api_key_revoked", "api_key_expired",
  "tenant_inactive", "api_disabled", "tier_not_eligible", "insufficient_scope", "rate_limit_exceeded",
  "internal_error", "service_unavailable"
]

const withErrors = <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E, codes: ReadonlyArray<Errors.ErrorCode>): E => {
  const statuses = [...new Set([...common, ...codes].map(Errors.statusOf))].sort()
  return statuses.reduce((e, status) => (e as any).addError(ErrorBody(status), { status }), endpoint) as E
}

const IdPath = Schema.Struct({ id: Schema.String })

const StringOrStrings = Schema.Union(
  Schema.Array(Schema.String),
  Schema.transform(Schema.String, Schema.Array(Schema.String), { strict: true, decode: (s) => [s], encode: (a) => a[0] ?? "" })
)

/** Slack above 15 MiB: the multipart parser stops a little early; the exact limit is checked on the file. */
export const UploadPayload = HttpApiSchema.Multipart(
  Schema.Struct({
    // a `file` sent as a plain text field is no file; say so rather than name the schema's type
    file: Multipart.SingleFileSchema.annotations({
      message: () => ({ message: "send the photo as one file part named `file`", override: true })
    }),
    label: Schema.optional(Schema.String),
    tags: Schema.optional(StringOrStrings)
  }).annotations({ parseOptions: { onExcessProperty: "error" } }),
  { maxFileSize: Option.some(Requests.maxUploadBytes + 64 * 1024), maxParts: Option.some(64) }
)

export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .addError(ErrorBody(503), { status: 503 })
  )
  .annotate(PublicEndpoint, true)
  .annotate(OpenApi.Exclude, true)
{}

export class MediaGroup extends HttpApiGroup.make("media")
  .add(
    withErrors(
      HttpApiEndpoint.get("listMedia", "/api/v1/media")
        .setUrlParams(Schema.Struct({ limit: Schema.optional(Schema.String), cursor: Schema.optional(Schema.String) }))
        .addSuccess(Resources.MediaList)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Description, "Photos of the workspace, newest first; keyset pages (`limit` 1–100, default 25)."),
      ["validation_failed"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.post("uploadMedia", "/api/v1/media")
        .setPayload(UploadPayload)
        .addSuccess(Resources.Media, { status: 201 })
        .annotate(RequiredScope, "media:write")
        .annotate(OpenApi.Description, "Multipart upload: `file` (JPEG, PNG, WebP or GIF, up to 15 MiB), `label`, repeated `tags`."),
      ["validation_failed", "unsupported_media_type", "payload_too_large", "quota_exceeded"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("previewMedia", "/api/v1/media/:id/preview")
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.Uint8Array({ contentType: "image/jpeg" }))
        .annotate(RequiredScope, "media:read"),
      ["unknown_media"]
    )
  )
  .middleware(Authenticated)
{}

export class ImportsGroup extends HttpApiGroup.make("imports")
  .add(
    withErrors(
      HttpApiEndpoint.post("createImport", "/api/v1/media/import")
        .setPayload(Requests.CreateImportBody)
        .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(Schema.String) }))
        .addSuccess(Resources.MediaImportCreated, { status: 202 })
        .annotate(RequiredScope, "media:write"),
      ["validation_failed", "integration_not_connected", "unknown_folder", "idempotency_conflict", "idempotency_in_progress"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getImport", "/api/v1/media/imports/:id")
        .setPath(IdPath)
        .addSuccess(Resources.MediaImport)
        .annotate(RequiredScope, "media:read"),
      ["import_not_found"]
    )
  )
  .middleware(Authenticated)
{}

export class IntegrationsGroup extends HttpApiGroup.make("integrations")
  .add(
    withErrors(
      HttpApiEndpoint.get("connect", "/api/v1/integrations/cloud/connect")
        .addSuccess(Resources.OAuthConnect)
        .annotate(RequiredScope, "media:write"),
      []
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("status", "/api/v1/integrations/cloud")
        .addSuccess(Resources.Integration)
        .annotate(RequiredScope, "media:read"),
      []
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.del("disconnect", "/api/v1/integrations/cloud")
        .addSuccess(Resources.Integration)
        .annotate(RequiredScope, "media:write"),
      ["integration_not_connected"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("folders", "/api/v1/integrations/cloud/folders")
        .setUrlParams(Schema.Struct({ parent: Schema.optional(Schema.String), cursor: Schema.optional(Schema.String) }))
        .addSuccess(Resources.FolderList)
        .annotate(RequiredScope, "media:read"),
      ["validation_failed", "integration_not_connected", "unknown_folder"]
    )
  )
  .middleware(Authenticated)
{}

export class OAuthGroup extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.get("callback", "/oauth/cloud_drive/callback")
      // a repeated parameter is not refused here: the handler answers it with the HTML 400 page
      .setUrlParams(Schema.Struct({
        code: Schema.optional(StringOrStrings),
        state: Schema.optional(StringOrStrings),
        error: Schema.optional(StringOrStrings)
      }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .addError(HttpApiSchema.Text({ contentType: "text/html" }), { status: 400 })
  )
  .annotate(PublicEndpoint, true)
  .annotate(OpenApi.Exclude, true)
{}

export class RendersGroup extends HttpApiGroup.make("renders")
  .add(
    withErrors(
      HttpApiEndpoint.post("createRender", "/api/v1/renders")
        .setPayload(Requests.CreateRenderBody)
        .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(Schema.String) }))
        .addSuccess(Resources.RenderCreated, { status: 202 })
        .annotate(RequiredScope, "renders:create")
        .annotate(OpenApi.Description, "The only call that costs money. Send `Idempotency-Key` to make retries safe."),
      [
        "validation_failed", "unsupported_render_type", "unknown_media", "spend_cap_reached", "quota_exceeded",
        "caption_prep_failed", "idempotency_conflict", "idempotency_in_progress"
      ]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getRender", "/api/v1/renders/:id")
        .setPath(IdPath)
        .addSuccess(Resources.Render)
        .annotate(RequiredScope, "renders:read"),
      ["render_not_found"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("downloadRender", "/api/v1/renders/:id/download")
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.Uint8Array({ contentType: "video/mp4" }))
        .annotate(RequiredScope, "renders:read"),
      ["render_not_found", "asset_unavailable"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getUsage", "/api/v1/usage").addSuccess(Resources.Usage).annotate(RequiredScope, "renders:read"),
      []
    )
  )
  .middleware(Authenticated)
{}

/**
 * Handlers fail with the domain's ApiFailure; the request pipeline turns it into the error body
 * before HttpApi's own encoder would see it. Declared here so handler types check, and documented
 * with the body every error has.
 */
const ApiFailure = Schema.declare((u): u is Errors.ApiFailure => u instanceof Errors.ApiFailure, {
  identifier: "ApiFailure",
  jsonSchema: {
    type: "object",
    required: ["error", "request_id"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: { code: { type: "string", enum: Errors.errorCodes }, message: { type: "string" } }
      },
      request_id: { type: "string" }
    }
  }
})

/**
 * HttpApi documents its own decode error under 400 on every operation, but the pipeline never
 * sends that shape (a decode failure is 422 `validation_failed` in the one error body), so it is
 * taken out of the document.
 */
const withoutDecodeError = (spec: Record<string, any>): Record<string, any> => {
  const isDecodeError = (s: any) => typeof s?.$ref === "string" && s.$ref.endsWith("/HttpApiDecodeError")
  for (const item of Object.values(spec.paths ?? {}) as Array<Record<string, any>>) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries((operation?.responses ?? {}) as Record<string, any>)) {
        const media = response?.content?.["application/json"]
        if (media?.schema === undefined) continue
        if (isDecodeError(media.schema)) {
          delete operation.responses[status]
        } else if (Array.isArray(media.schema.anyOf)) {
          const rest = media.schema.anyOf.filter((s: any) => !isDecodeError(s))
          media.schema = rest.length === 1 ? rest[0] : { ...media.schema, anyOf: rest }
        }
      }
    }
  }
  if (spec.components?.schemas !== undefined) delete spec.components.schemas.HttpApiDecodeError
  return spec
}

export class Api extends HttpApi.make("pic2video")
  .addError(ApiFailure, { status: 500 })
  .add(SystemGroup)
  .add(MediaGroup)
  .add(RendersGroup)
  .add(ImportsGroup)
  .add(IntegrationsGroup)
  .add(OAuthGroup)
  .annotate(OpenApi.Transform, withoutDecodeError)
  .annotate(OpenApi.Title, "Pic-to-Video Rendering API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, "Turns a photo in the workspace library plus a caption into a vertical 1080x1920 MP4.")
{}
