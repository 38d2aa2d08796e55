import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, Multipart, OpenApi } from "@effect/platform"
// the modules, not the index: the client imports this file in browsers, and the index brings node:crypto
import * as Errors from "@pic2video/domain/Errors"
import * as Requests from "@pic2video/domain/Requests"
import * as Resources from "@pic2video/domain/Resources"
import { Context, Option, Schema } from "effect"
import { Admission, BodyRule, CurrentImport, Idempotent, PublicEndpoint, RateBucket, ReplayCurrent, RequiredScope } from "./Principal.ts"

/**
 * The one definition of the v1 HTTP API: the server, the OpenAPI document, the /docs page and the
 * typed client are all derived from it. Each endpoint names the scope it requires and the error
 * codes it can answer with (grouped by status for the docs); every error body has the same shape.
 */
const ErrorBody = (status: number, codes: ReadonlyArray<Errors.ErrorCode> = Errors.codesWithStatus(status)) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(...codes),
      message: Schema.String
    }),
    request_id: Schema.String
  }).annotations({ description: `Error: ${codes.map((c) => `\`${c}\``).join(", ")}` })

/** Every authenticated endpoint can answer these (contract §4 steps 1–5, and faults). */
const common = [
  "invalid_request", "missing_api_key", "invalid_api_key", "api_key_revoked", "api_key_expired",
  "tenant_inactive", "api_disabled", "tier_not_eligible", "insufficient_scope", "rate_limit_exceeded",
  "internal_error", "service_unavailable"
] as const satisfies ReadonlyArray<Errors.ErrorCode>

/**
 * Each status lists exactly the codes this endpoint can answer with it, so a generated client's
 * error type is the endpoint's own; the operation also documents its scope and response headers.
 */
type ErrorBodyOf<C extends Errors.ErrorCode> = {
  readonly error: { readonly code: C; readonly message: string }
  readonly request_id: string
}
/** The endpoint with its error bodies in its type, so the derived client knows each operation's codes. */
type WithErrors<E, C extends Errors.ErrorCode> = E extends HttpApiEndpoint.HttpApiEndpoint<
  infer Name, infer Method, infer Path, infer UrlParams, infer Payload, infer Headers, infer Success, infer Error, infer R, infer RE
> ? HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error | ErrorBodyOf<C | (typeof common)[number]>, R, RE>
  : never

const withErrors = <E extends HttpApiEndpoint.HttpApiEndpoint.Any, const C extends Errors.ErrorCode = never>(
  endpoint: E,
  codes: ReadonlyArray<C>
): WithErrors<E, C> => {
  const all = [...new Set([...common, ...codes])]
  const statuses = [...new Set(all.map(Errors.statusOf))].sort()
  const annotations = (endpoint as any).annotations as Context.Context<never>
  const scope = Option.getOrUndefined(Context.getOption(annotations, RequiredScope))
  const own = Option.getOrElse(Context.getOption(annotations, OpenApi.Transform), () => (op: any) => op)
  return statuses.reduce(
    (e, status) => (e as any).addError(ErrorBody(status, all.filter((c) => Errors.statusOf(c) === status)), { status }),
    (endpoint as any).annotate(OpenApi.Transform, (op: Record<string, any>) => documentOperation(own(op) as Record<string, any>, scope, all))
  ) as WithErrors<E, C>
}

const header = (description: string, schema: Record<string, unknown> = { type: "string" }) => ({ description, schema })

/** Response headers, declared once and referenced from each response that carries them. */
const responseHeaders = {
  "X-Request-Id": header("The request's id, also in every error body as `request_id`; quote it when reporting a problem."),
  "RateLimit-Limit": header("Requests this key may make per minute in this endpoint's bucket.", { type: "integer" }),
  "RateLimit-Remaining": header("Requests left in the current window.", { type: "integer" }),
  "RateLimit-Reset": header("Seconds until the window resets.", { type: "integer" }),
  "Retry-After": header("Seconds to wait before retrying.", { type: "integer" }),
  "Idempotency-Replayed": header("`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`.", {
    type: "string",
    enum: ["true"]
  }),
  "WWW-Authenticate": header("`Bearer`: the key is sent as a bearer token."),
  "Content-Disposition": header("`attachment; filename=\"<render id>.mp4\"`.")
}

const ref = (name: keyof typeof responseHeaders) => ({ $ref: `#/components/headers/${name}` })

/**
 * The operation's scope, and the headers each of its responses carries. The scope is stated in the
 * description and in `x-required-scopes`, not as bearer "roles" in `security`: OpenAPI 3.1 allows
 * roles there, but linters and generators read scopes only on OAuth2 schemes and flag them.
 */
const documentOperation = (op: Record<string, any>, scope: string | undefined, codes: ReadonlyArray<Errors.ErrorCode>) => {
  if (scope !== undefined) {
    op["x-required-scopes"] = [scope]
    op.description = `${op.description ?? ""}\n\nRequires an API key with the \`${scope}\` scope.`.trim()
  }
  const replayable = (op.parameters ?? []).some((p: any) => p.in === "header" && p.name === "idempotency-key")
  for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, any>)) {
    const headers: Record<string, unknown> = { "X-Request-Id": ref("X-Request-Id") }
    // RateLimit-* are set once the key is admitted: on every success and on the 429 itself
    if (status.startsWith("2") || status === "429") {
      for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] as const) headers[h] = ref(h)
    }
    if (status === "429" || status === "503" || (status === "409" && codes.includes("idempotency_in_progress"))) {
      headers["Retry-After"] = ref("Retry-After")
    }
    if (status === "401") headers["WWW-Authenticate"] = ref("WWW-Authenticate")
    if (replayable && status.startsWith("2")) headers["Idempotency-Replayed"] = ref("Idempotency-Replayed")
    if (response?.content?.["video/mp4"] !== undefined) headers["Content-Disposition"] = ref("Content-Disposition")
    response.headers = headers
  }
  return op
}

const IdPath = Schema.Struct({ id: Schema.String })

/** Examples for the document (checked against the schemas by the type checker and by the linters). */
const exampleRenderId = "rnd_4kq2VtXcZ8bN1mR7sYwP3dLh"
const exampleMediaId = "3f2b8c1e-9a4d-4e7b-8c2f-5d6a7b8c9d0e"
const exampleTime = "2026-11-25T10:00:00.000Z"
const CreateRenderBody = Requests.CreateRenderBody.annotations({
  identifier: "CreateRenderBody",
  examples: [{
    media_id: exampleMediaId,
    quote: "Stay curious",
    caption_style: "quote",
    text_color: "white",
    text_size: "default",
    metadata: { order: "1234" }
  }]
})
const Media = Resources.Media.annotations({
  identifier: "Media",
  examples: [{
    object: "media", id: exampleMediaId, created_at: exampleTime, label: "beach.jpg", tags: ["summer"], width: 3024, height: 4032,
    mime_type: "image/jpeg", file_size_bytes: 2480211, preview_url: `https://p2v.example.com/api/v1/media/${exampleMediaId}/preview`,
    preview_expires_at: null
  }]
})
/** contract §4.8: a render type the service does not offer is named, before the schema reports fields. */
const offeredRenderType = (body: unknown): Errors.ApiFailure | undefined => {
  const type = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).render_type : undefined
  return typeof type === "string" && type !== "aesthetic_quote"
    ? Errors.fail("unsupported_render_type", "only render_type `aesthetic_quote` is available")
    : undefined
}

const RenderCreated = Resources.RenderCreated.annotations({ identifier: "RenderCreated", examples: [{ object: "render", id: exampleRenderId, status: "queued" }] })
const Render = Resources.Render.annotations({
  identifier: "Render",
  examples: [{
    object: "render", id: exampleRenderId, type: "aesthetic_quote", status: "completed", progress: 100,
    created_at: exampleTime, updated_at: "2026-11-25T10:00:41.000Z", completed_at: "2026-11-25T10:00:41.000Z",
    asset: {
      url: `https://p2v.example.com/api/v1/renders/${exampleRenderId}/download`, expires_at: null, content_type: "video/mp4",
      width: 1080, height: 1920, byte_size: 3145728, duration_sec: 8
    },
    error: null, idempotency_key: "order-1234", metadata: { order: "1234" }
  }]
})
const Usage = Resources.Usage.annotations({
  identifier: "Usage",
  examples: [{ object: "usage", cycle_start: "2026-11-01T00:00:00.000Z", aesthetic_quotes: { used: 12, included: 100 } }]
})

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
  .middleware(Admission)
  .annotate(PublicEndpoint, true)
  .annotate(OpenApi.Exclude, true)
{}

export class MediaGroup extends HttpApiGroup.make("media")
  .add(
    withErrors(
      HttpApiEndpoint.get("listMedia", "/api/v1/media")
        .setUrlParams(Schema.Struct({
          // checked as digits by the handler (a wrong one is 422), documented as the integer it is
          limit: Schema.optional(Schema.String.annotations({
            description: "Page size, 1–100 (default 25).",
            jsonSchema: { type: "integer", minimum: 1, maximum: 100, default: Requests.defaultListLimit, description: "Page size, 1–100 (default 25)." }
          })),
          cursor: Schema.optional(Schema.String.annotations({ description: "`next_cursor` of the previous page." }))
        }))
        .addSuccess(Resources.MediaList)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "List photos")
        .annotate(OpenApi.Description, "Photos of the workspace, newest first; keyset pages (`limit` 1–100, default 25)."),
      ["validation_failed"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.post("uploadMedia", "/api/v1/media")
        .setPayload(UploadPayload)
        .addSuccess(Media, { status: 201 })
        .annotate(RequiredScope, "media:write")
        .annotate(RateBucket, "uploads")
        .annotate(OpenApi.Summary, "Upload a photo")
        .annotate(OpenApi.Description, "Multipart upload: `file` (JPEG, PNG, WebP or GIF, up to 15 MiB), `label`, repeated `tags`. The type is read from the bytes, not from the part's label."),
      ["validation_failed", "unsupported_media_type", "payload_too_large", "quota_exceeded"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("previewMedia", "/api/v1/media/:id/preview")
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.Uint8Array({ contentType: "image/jpeg" }))
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get a photo's preview")
        .annotate(OpenApi.Description, "The photo at most 1080 px on its long side, oriented, without metadata: JPEG for a JPEG, WebP for a WebP, PNG otherwise (a GIF's first frame).")
        // one success schema per status in HttpApi: the other image types are added to the document here
        .annotate(OpenApi.Transform, (op: Record<string, any>) => {
          const image = op.responses["200"].content["image/jpeg"]
          op.responses["200"].content = { "image/jpeg": image, "image/png": image, "image/webp": image }
          return op
        }),
      ["unknown_media"]
    )
  )
  .middleware(Admission)
  .annotate(RateBucket, "reads")
  .annotate(OpenApi.Description, "The workspace's photo library: upload, list, preview.")
{}

export class ImportsGroup extends HttpApiGroup.make("imports")
  .add(
    withErrors(
      HttpApiEndpoint.post("createImport", "/api/v1/media/import")
        .setPayload(Requests.CreateImportBody)
        .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(Schema.String) }))
        .addSuccess(Resources.MediaImportCreated, { status: 202 })
        .annotate(RequiredScope, "media:write")
        .annotate(RateBucket, "uploads")
        .annotate(Idempotent, true)
        .annotate(ReplayCurrent, CurrentImport)
        .annotate(OpenApi.Summary, "Import a drive folder")
        .annotate(OpenApi.Description, "Starts importing the photos of one folder of the connected cloud drive (not its subfolders; at most 500 files). Poll the import until its status is no longer `pending`. Send `Idempotency-Key` to make retries safe."),
      ["validation_failed", "payload_too_large", "integration_not_connected", "unknown_folder", "idempotency_conflict", "idempotency_in_progress"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getImport", "/api/v1/media/imports/:id")
        .setPath(IdPath)
        .addSuccess(Resources.MediaImport)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get an import")
        .annotate(OpenApi.Description, "An import's status, counts and items; `pending` until it ends as `completed`, `partial` or `failed`."),
      ["import_not_found"]
    )
  )
  .middleware(Admission)
  .annotate(RateBucket, "reads")
  .annotate(OpenApi.Description, "Imports of photos from a folder of the connected cloud drive.")
{}

export class IntegrationsGroup extends HttpApiGroup.make("integrations")
  .add(
    withErrors(
      HttpApiEndpoint.get("connect", "/api/v1/integrations/cloud/connect")
        .addSuccess(Resources.OAuthConnect)
        .annotate(RequiredScope, "media:write")
        .annotate(OpenApi.Summary, "Start connecting the cloud drive")
        .annotate(OpenApi.Description, "An authorization URL to open in a browser; the drive sends the user back to the service's OAuth callback."),
      []
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("status", "/api/v1/integrations/cloud")
        .addSuccess(Resources.Integration)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get the drive connection")
        .annotate(OpenApi.Description, "Whether the workspace's cloud drive is connected, since when, and with which scopes."),
      []
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.del("disconnect", "/api/v1/integrations/cloud")
        .addSuccess(Resources.Integration)
        .annotate(RequiredScope, "media:write")
        .annotate(RateBucket, "uploads")
        .annotate(OpenApi.Summary, "Disconnect the drive")
        .annotate(OpenApi.Description, "Forgets the drive's tokens (revoking them at the provider when it can); imports under way stop."),
      ["integration_not_connected"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("folders", "/api/v1/integrations/cloud/folders")
        .setUrlParams(Schema.Struct({ parent: Schema.optional(Schema.String), cursor: Schema.optional(Schema.String) }))
        .addSuccess(Resources.FolderList)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "List drive folders")
        .annotate(OpenApi.Description, "Folders of the connected drive under `parent` (the root when absent), by name, in pages."),
      ["validation_failed", "integration_not_connected", "unknown_folder"]
    )
  )
  .middleware(Admission)
  .annotate(RateBucket, "reads")
  .annotate(OpenApi.Description, "The workspace's cloud drive connection and its folders.")
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
  .middleware(Admission)
  .annotate(PublicEndpoint, true)
  .annotate(OpenApi.Exclude, true)
{}

export class RendersGroup extends HttpApiGroup.make("renders")
  .add(
    withErrors(
      HttpApiEndpoint.post("createRender", "/api/v1/renders")
        .setPayload(CreateRenderBody)
        .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(Schema.String) }))
        .addSuccess(RenderCreated, { status: 202 })
        .annotate(RequiredScope, "renders:create")
        .annotate(RateBucket, "creates")
        .annotate(Idempotent, true)
        .annotate(BodyRule, offeredRenderType)
        .annotate(OpenApi.Summary, "Create a render")
        .annotate(OpenApi.Description, "Queues a render of a library photo with a caption. The only call that costs money. Send `Idempotency-Key` to make retries safe. Poll the render until it is `completed`, `failed` or `canceled`."),
      [
        "validation_failed", "payload_too_large", "unsupported_render_type", "unknown_media", "spend_cap_reached", "quota_exceeded",
        "caption_prep_failed", "idempotency_conflict", "idempotency_in_progress"
      ]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getRender", "/api/v1/renders/:id")
        .setPath(IdPath)
        .addSuccess(Render)
        .annotate(RequiredScope, "renders:read")
        .annotate(OpenApi.Summary, "Get a render")
        .annotate(OpenApi.Description, "The render's status and progress; once `completed`, its `asset`; once `failed` or `canceled`, its `error`. Treat a status you do not know as not finished."),
      ["render_not_found"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("downloadRender", "/api/v1/renders/:id/download")
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.Uint8Array({ contentType: "video/mp4" }))
        .annotate(RequiredScope, "renders:read")
        .annotate(OpenApi.Summary, "Download a render's video")
        .annotate(OpenApi.Description, "The finished MP4 (1080x1920, H.264) of a `completed` render."),
      ["render_not_found", "asset_unavailable"]
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getUsage", "/api/v1/usage").addSuccess(Usage).annotate(RequiredScope, "renders:read")
        .annotate(OpenApi.Summary, "Get usage")
        .annotate(OpenApi.Description, "Renders charged in the current billing cycle and the plan's allowance (`null`: no fixed allowance)."),
      []
    )
  )
  .middleware(Admission)
  .annotate(RateBucket, "reads")
  .annotate(OpenApi.Description, "Renders (the only calls that cost money), their videos, and the cycle's usage.")
{}

/**
 * Handlers fail with the domain's ApiFailure; the request pipeline turns it into the error body
 * before HttpApi's own encoder would see it. Declared here so handler types check, and documented
 * with the body every error has.
 */
const apiFailureJsonSchema = {
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
const ApiFailure = Schema.declare((u): u is Errors.ApiFailure => u instanceof Errors.ApiFailure, {
  identifier: "ApiFailure",
  jsonSchema: apiFailureJsonSchema
})

/**
 * HttpApi documents its own decode error under 400 on every operation, but the pipeline never
 * sends that shape (a decode failure is 422 `validation_failed` in the one error body), so it is
 * taken out of the document.
 */
const withoutDecodeError = (spec: Record<string, any>): Record<string, any> => {
  // ApiFailure (any code, under 500) is there for the handlers' types; each endpoint lists its own codes
  const apiFailure = JSON.stringify(apiFailureJsonSchema)
  const isDecodeError = (s: any) =>
    (typeof s?.$ref === "string" && s.$ref.endsWith("/HttpApiDecodeError")) || JSON.stringify(s) === apiFailure
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
          // the framework's description went with its error ("The request did not match …")
          if (typeof media.schema.description === "string") response.description = media.schema.description
        }
      }
    }
  }
  if (spec.components?.schemas !== undefined) delete spec.components.schemas.HttpApiDecodeError
  return spec
}

/** What generators and portals read beyond the endpoints: the key, the headers, the upload's parts. */
const documentApi = (spec: Record<string, any>): Record<string, any> => {
  spec.info.contact = { name: "The operator of this service" }
  spec.components.securitySchemes.bearer = {
    type: "http",
    scheme: "bearer",
    bearerFormat: "API key",
    description: "An API key as a bearer token: `Authorization: Bearer <key>`. Each operation lists the scope its key must hold."
  }
  spec.components.headers = Object.fromEntries(
    Object.entries(responseHeaders).map(([name, h]) => [name, { ...h, ...(name === "X-Request-Id" ? { required: true } : {}) }])
  )
  // the file part is bytes (a Blob for a generated client), the tags repeated text parts
  const upload = spec.paths["/api/v1/media"]?.post?.requestBody?.content?.["multipart/form-data"]
  if (upload !== undefined) {
    upload.schema.properties.file = { type: "string", format: "binary", contentMediaType: "application/octet-stream", description: "The photo: JPEG, PNG, WebP or GIF, up to 15 MiB." }
    upload.schema.properties.label = { type: "string", maxLength: 200, description: "A label for the photo, 0 to 200 characters (default: the empty string)." }
    upload.schema.properties.tags = { type: "array", items: { type: "string", minLength: 1, maxLength: 50 }, maxItems: Requests.maxTags, description: "Tags; repeat the part for each tag." }
  }
  // schemas only the framework's own error or the file part referred to
  for (let removed = true; removed;) {
    removed = false
    const text = JSON.stringify({ ...spec, components: { ...spec.components, schemas: undefined } }) +
      Object.entries(spec.components.schemas).map(([name, schema]) => JSON.stringify(schema).replaceAll(`"#/components/schemas/${name}"`, "")).join()
    for (const name of Object.keys(spec.components.schemas)) {
      if (!text.includes(`"#/components/schemas/${name}"`)) {
        delete spec.components.schemas[name]
        removed = true
      }
    }
  }
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
  .annotate(OpenApi.Transform, (spec) => documentApi(withoutDecodeError(spec)))
  // the repository grants no licence (yet): the document says so rather than invent one
  .annotate(OpenApi.License, { name: "Proprietary", identifier: "LicenseRef-Proprietary" } as any)
  .annotate(OpenApi.Title, "Pic-to-Video Rendering API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, "Turns a photo in the workspace library plus a caption into a vertical 1080x1920 MP4.")
{}
