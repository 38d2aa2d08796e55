import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiSchema,
  type HttpMethod,
  Multipart,
  OpenApi
} from "@effect/platform"
import { Context, Option, Schema } from "effect"
// the modules, not the index: the client imports this file in browsers, and the index brings node:crypto
import * as Errors from "../Errors.ts"
import * as Requests from "../Requests.ts"
import * as Resources from "../Resources.ts"
import {
  Admission,
  BodyRule,
  CurrentImport,
  Idempotent,
  PublicEndpoint,
  RateBucket,
  ReadsRenderWithKey,
  ReplayCurrent,
  RequiredScope
} from "./Annotations.ts"
import { apiFailureJsonSchema, documentOperation, documentSpec } from "./OpenApiDocument.ts"

/**
 * The one definition of the v1 HTTP API: the server, the OpenAPI document, the /docs page and the
 * typed client are all derived from it. Each endpoint names the scope it requires; the error codes
 * it can answer with come from the error catalogue (Errors.ts), grouped by status for the docs;
 * every error body has the same shape.
 */
const ErrorBody = <C extends Errors.ErrorCode>(status: number, codes: ReadonlyArray<C>) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(...codes),
      message: Schema.String
    }),
    request_id: Schema.String
  }).annotations({
    description: `Error: ${codes.map((c) => `\`${c}\``).join(", ")}`,
    ...HttpApiSchema.annotations({ status })
  })

/** An operation's error bodies, one per status, each listing exactly the codes it can answer with that status. */
const errorsOf = <Name extends string>(name: Name) => {
  const codes = Errors.codesOf(name)
  const statuses = [...new Set(codes.map(Errors.statusOf))].sort()
  return Schema.Union(
    ...statuses.map((status) => ErrorBody(status, codes.filter((c) => Errors.statusOf(c) === status)))
  )
}

/**
 * The endpoint with its error bodies (from the catalogue) in its type, so the derived client knows
 * each operation's codes, and its document with its scope and response headers.
 */
const withErrors = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) => {
  const scope = Option.getOrUndefined(Context.getOption(endpoint.annotations, RequiredScope))
  const own = Option.getOrElse(
    Context.getOption(endpoint.annotations, OpenApi.Transform),
    () => (op: Record<string, unknown>) => op
  )
  const codes = Errors.codesOf(endpoint.name)
  return endpoint
    .addError(errorsOf(endpoint.name))
    .annotate(OpenApi.Transform, (op) => documentOperation(own(op), scope, codes))
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
    object: "media",
    id: exampleMediaId,
    created_at: exampleTime,
    label: "beach.jpg",
    tags: ["summer"],
    width: 3024,
    height: 4032,
    mime_type: "image/jpeg",
    file_size_bytes: 2480211,
    preview_url: `https://p2v.example.com/api/v1/media/${exampleMediaId}/preview`,
    preview_expires_at: null
  }]
})
/** contract §4.8: a render type the service does not offer is named, before the schema reports fields. */
const offeredRenderType = (body: unknown): Errors.ApiFailure | undefined => {
  const type = typeof body === "object" && body !== null && !Array.isArray(body) && "render_type" in body
    ? body.render_type
    : undefined
  return typeof type === "string" && type !== "aesthetic_quote"
    ? Errors.fail("unsupported_render_type", "only render_type `aesthetic_quote` is available")
    : undefined
}

const RenderCreated = Resources.RenderCreated.annotations({
  identifier: "RenderCreated",
  examples: [{ object: "render", id: exampleRenderId, status: "queued" }]
})
const Render = Resources.Render.annotations({
  identifier: "Render",
  examples: [{
    object: "render",
    id: exampleRenderId,
    type: "aesthetic_quote",
    status: "completed",
    progress: 100,
    created_at: exampleTime,
    updated_at: "2026-11-25T10:00:41.000Z",
    completed_at: "2026-11-25T10:00:41.000Z",
    asset: {
      url: `https://p2v.example.com/api/v1/renders/${exampleRenderId}/download`,
      expires_at: null,
      content_type: "video/mp4",
      width: 1080,
      height: 1920,
      byte_size: 3145728,
      duration_sec: 8
    },
    error: null,
    idempotency_key: "order-1234",
    metadata: { order: "1234" }
  }]
})
const Usage = Resources.Usage.annotations({
  identifier: "Usage",
  examples: [{
    object: "usage",
    cycle_start: "2026-11-01T00:00:00.000Z",
    aesthetic_quotes: { used: 12, included: 100 }
  }]
})

const StringOrStrings = Schema.Union(
  Schema.Array(Schema.String),
  Schema.transform(Schema.String, Schema.Array(Schema.String), {
    strict: true,
    decode: (s) => [s],
    encode: (a) => a[0] ?? ""
  })
)

/** Slack above the upload limit: the multipart parser stops a little early; the exact limit is checked on the file. */
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
      .addError(ErrorBody(503, Errors.codesWithStatus(503)))
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
            jsonSchema: {
              type: "integer",
              minimum: 1,
              maximum: 100,
              default: Requests.defaultListLimit,
              description: "Page size, 1–100 (default 25)."
            }
          })),
          cursor: Schema.optional(Schema.String.annotations({ description: "`next_cursor` of the previous page." }))
        }))
        .addSuccess(Resources.MediaList)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "List photos")
        .annotate(
          OpenApi.Description,
          "Photos of the workspace, newest first; keyset pages (`limit` 1–100, default 25)."
        )
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
        .annotate(
          OpenApi.Description,
          `Multipart upload: \`file\` (${Requests.photoTypesText}, up to ${Requests.maxUploadMiB} MiB), \`label\`, repeated \`tags\`. The type is read from the bytes, not from the part's label.`
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("previewMedia", "/api/v1/media/:id/preview")
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.Uint8Array({ contentType: "image/jpeg" }))
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get a photo's preview")
        .annotate(
          OpenApi.Description,
          "The photo at most 1080 px on its long side, oriented, without metadata: JPEG for a JPEG, WebP for a WebP, PNG otherwise (a GIF's first frame)."
        )
        // one success schema per status in HttpApi: the other image types are added to the document here
        .annotate(OpenApi.Transform, (op: Record<string, any>) => {
          const image = op.responses["200"].content["image/jpeg"]
          op.responses["200"].content = { "image/jpeg": image, "image/png": image, "image/webp": image }
          return op
        })
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
        .annotate(
          OpenApi.Description,
          "Starts importing the photos of one folder of the connected cloud drive (not its subfolders; at most 500 files). Poll the import until its status is no longer `pending`. Send `Idempotency-Key` to make retries safe."
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getImport", "/api/v1/media/imports/:id")
        .setPath(IdPath)
        .addSuccess(Resources.MediaImport)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get an import")
        .annotate(
          OpenApi.Description,
          "An import's status, counts and items; `pending` until it ends as `completed`, `partial` or `failed`."
        )
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
        .annotate(
          OpenApi.Description,
          "An authorization URL to open in a browser; the drive sends the user back to the service's OAuth callback."
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("status", "/api/v1/integrations/cloud")
        .addSuccess(Resources.Integration)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get the drive connection")
        .annotate(
          OpenApi.Description,
          "Whether the workspace's cloud drive is connected, since when, and with which scopes."
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.del("disconnect", "/api/v1/integrations/cloud")
        .addSuccess(Resources.Integration)
        .annotate(RequiredScope, "media:write")
        .annotate(RateBucket, "uploads")
        .annotate(OpenApi.Summary, "Disconnect the drive")
        .annotate(
          OpenApi.Description,
          "Forgets the drive's tokens (revoking them at the provider when it can); imports under way stop."
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("folders", "/api/v1/integrations/cloud/folders")
        .setUrlParams(Schema.Struct({ parent: Schema.optional(Schema.String), cursor: Schema.optional(Schema.String) }))
        .addSuccess(Resources.FolderList)
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "List drive folders")
        .annotate(
          OpenApi.Description,
          "Folders of the connected drive under `parent` (the root when absent), by name, in pages."
        )
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
        .annotate(
          OpenApi.Description,
          "Queues a render of a library photo with a caption. The only call that costs money. Send `Idempotency-Key` to make retries safe. Poll the render until it is `completed`, `failed` or `canceled`."
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getRender", "/api/v1/renders/:id")
        .setPath(IdPath)
        .addSuccess(Render)
        .annotate(RequiredScope, "renders:read")
        // the poll: one round trip (the key and the render in one statement)
        .annotate(ReadsRenderWithKey, true)
        .annotate(OpenApi.Summary, "Get a render")
        .annotate(
          OpenApi.Description,
          "The render's status and progress; once `completed`, its `asset`; once `failed` or `canceled`, its `error`. Treat a status you do not know as not finished."
        )
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("downloadRender", "/api/v1/renders/:id/download")
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.Uint8Array({ contentType: "video/mp4" }))
        .annotate(RequiredScope, "renders:read")
        .annotate(OpenApi.Summary, "Download a render's video")
        .annotate(OpenApi.Description, "The finished MP4 (1080x1920, H.264) of a `completed` render.")
    )
  )
  .add(
    withErrors(
      HttpApiEndpoint.get("getUsage", "/api/v1/usage").addSuccess(Usage).annotate(RequiredScope, "renders:read")
        .annotate(OpenApi.Summary, "Get usage")
        .annotate(
          OpenApi.Description,
          "Renders charged in the current billing cycle and the plan's allowance (`null`: no fixed allowance)."
        )
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
const ApiFailure = Schema.declare((u): u is Errors.ApiFailure => u instanceof Errors.ApiFailure, {
  identifier: "ApiFailure",
  jsonSchema: apiFailureJsonSchema
})

export class Api extends HttpApi.make("pic2video")
  .addError(ApiFailure, { status: 500 })
  .add(SystemGroup)
  .add(MediaGroup)
  .add(RendersGroup)
  .add(ImportsGroup)
  .add(IntegrationsGroup)
  .add(OAuthGroup)
  .annotate(OpenApi.Transform, documentSpec)
  .annotate(OpenApi.Title, "Pic-to-Video Rendering API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, "Turns a photo in the workspace library plus a caption into a vertical 1080x1920 MP4.")
{}
