import { Context, Option, Schema, SchemaTransformation } from "effect"
import { Multipart } from "effect/http"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
// the modules, not the index: the client imports this file in browsers, and the index brings node:crypto
import * as Errors from "../Errors.ts"
import { Optional } from "../Optional.ts"
import * as Requests from "../Requests.ts"
import * as Resources from "../Resources.ts"
import {
  Admission,
  BodyRule,
  CurrentImport,
  Idempotent,
  RateBucket,
  ReadsRenderWithKey,
  ReplayCurrent,
  RequiredScope,
  Unauthenticated
} from "./Annotations.ts"
import { documentOperation, documentSpec, type Json } from "./OpenApiDocument.ts"

/**
 * The one definition of the v1 HTTP API: the server, the OpenAPI document, the /docs page and the
 * typed client are all derived from it. Each endpoint names the scope it requires; the error codes
 * it can answer with come from the error catalogue (Errors.ts), grouped by status for the docs;
 * every error body has the same shape.
 */
const ErrorBody = <C extends Errors.ErrorCode>(status: number, codes: ReadonlyArray<C>) =>
  Schema.Struct({
    error: Schema.Struct({
      // one code is a Literal: Effect 4 documents a one-member Literals as an `anyOf` of one
      code: codes.length === 1 ? Schema.Literal(codes[0]) : Schema.Literals(codes),
      message: Schema.String
    }),
    request_id: Schema.String
  }).annotate({
    description: `Error: ${codes.map((c) => `\`${c}\``).join(", ")}`,
    httpApiStatus: status
  })

/**
 * An operation's error bodies, one per status, each listing exactly the codes it can answer with that
 * status. Effect 4 declares an endpoint's errors when it is made (`error:`), so each endpoint below
 * passes `errorsOf` its own name; `documented` checks that it did.
 */
const errorsOf = <Name extends string>(name: Name) => {
  const codes = Errors.codesOf(name)
  const statuses = [...new Set(codes.map(Errors.statusOf))].sort()
  declaredErrors.add(name)
  return statuses.map((status) => ErrorBody(status, codes.filter((c) => Errors.statusOf(c) === status)))
}
const declaredErrors = new Set<string>()

/** The endpoint's document with its scope and response headers (its errors come from `errorsOf`). */
interface Documentable {
  readonly identifier: string
  readonly annotations: Context.Context<never>
  annotate<I, S>(key: Context.Key<I, S>, value: S): unknown
}
const documented = <E extends Documentable>(endpoint: E): E => {
  if (!declaredErrors.has(endpoint.identifier)) {
    throw new Error(`endpoint ${endpoint.identifier} does not declare its errors from the catalogue`)
  }
  const scope = Option.getOrUndefined(Context.getOption(endpoint.annotations, RequiredScope))
  const own = Option.getOrElse(
    Context.getOption(endpoint.annotations, OpenApi.Transform),
    () => (op: Json) => op
  )
  const codes = Errors.codesOf(endpoint.identifier)
  return endpoint.annotate(OpenApi.Transform, (op) => documentOperation(own(op), scope, codes)) as E
}

/**
 * A success with its own status is written in place, as Effect 3 did, not as a component (its
 * response is described as "Success", not by the schema's name).
 */
const inline = <S extends Schema.Top>(schema: S) => schema.annotate({ identifier: undefined })

const IdPath = { id: Schema.String }
const IdempotencyHeaders = { "idempotency-key": Optional(Schema.String) }

/** Examples for the document (checked against the schemas by the type checker and by the linters). */
const exampleRenderId = "rnd_4kq2VtXcZ8bN1mR7sYwP3dLh"
const exampleMediaId = "3f2b8c1e-9a4d-4e7b-8c2f-5d6a7b8c9d0e"
const exampleTime = "2026-11-25T10:00:00.000Z"
const CreateRenderBody = Requests.CreateRenderBody.annotate({
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
const Media = Resources.Media.annotate({
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

const RenderCreated = Resources.RenderCreated.annotate({
  identifier: "RenderCreated",
  examples: [{ object: "render", id: exampleRenderId, status: "queued" }]
})
const Render = Resources.Render.annotate({
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
const Usage = Resources.Usage.annotate({
  identifier: "Usage",
  examples: [{
    object: "usage",
    cycle_start: "2026-11-01T00:00:00.000Z",
    aesthetic_quotes: { used: 12, included: 100 }
  }]
})

const StringOrStrings = Schema.Union([
  Schema.Array(Schema.String),
  Schema.String.pipe(
    Schema.decodeTo(
      Schema.Array(Schema.String),
      SchemaTransformation.transform<ReadonlyArray<string>, string>({ decode: (s) => [s], encode: (a) => a[0] ?? "" })
    )
  )
])

/** Slack above the upload limit: the multipart parser stops a little early; the exact limit is checked on the file. */
/**
 * `Multipart.SingleFileSchema` with one message for every way it can be wrong: a `file` sent as a plain
 * text field is no file; say so rather than name the schema's type (Effect 3's message override; in
 * Effect 4 a message names the node it is on, so each node carries it).
 */
const photoMessage = "send the photo as one file part named `file`"
const PhotoFile = Schema.Array(Multipart.PersistedFileSchema.annotate({ message: photoMessage }))
  .annotate({ message: photoMessage })
  .check(Schema.isBetweenLength(1, 1, { message: photoMessage }))
  .pipe(
    Schema.decodeTo(
      Multipart.PersistedFileSchema,
      SchemaTransformation.transform<Multipart.PersistedFile, ReadonlyArray<Multipart.PersistedFile>>({
        decode: ([file]) => file,
        encode: (file) => [file]
      })
    )
  )

export const UploadPayload = Schema.Struct({
  file: PhotoFile,
  label: Optional(Schema.String),
  tags: Optional(StringOrStrings)
}).pipe(HttpApiSchema.asMultipart({ maxFileSize: Requests.maxUploadBytes + 64 * 1024, maxParts: 64 }))

export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("healthz", "/healthz", { success: Schema.Struct({ status: Schema.Literal("ok") }) }))
  .add(
    HttpApiEndpoint.get("readyz", "/readyz", {
      success: Schema.Struct({ status: Schema.Literal("ready") }),
      error: ErrorBody(503, Errors.codesWithStatus(503))
    })
  )
  .middleware(Unauthenticated)
  .annotate(OpenApi.Exclude, true)
{}

export class MediaGroup extends HttpApiGroup.make("media")
  .add(
    documented(
      HttpApiEndpoint.get("listMedia", "/api/v1/media", {
        query: {
          // checked as digits by the handler (a wrong one is 422), documented as the integer it is (below)
          limit: Optional(Schema.String.annotate({ description: "Page size, 1–100 (default 25)." })),
          cursor: Optional(Schema.String.annotate({ description: "`next_cursor` of the previous page." }))
        },
        success: Resources.MediaList,
        error: errorsOf("listMedia")
      })
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "List photos")
        .annotate(
          OpenApi.Description,
          "Photos of the workspace, newest first; keyset pages (`limit` 1–100, default 25)."
        )
        .annotate(OpenApi.Transform, (op: Json) => {
          for (const p of op.parameters ?? []) {
            if (p.in === "query" && p.name === "limit") {
              p.schema = {
                type: "integer",
                minimum: 1,
                maximum: 100,
                default: Requests.defaultListLimit,
                description: "Page size, 1–100 (default 25)."
              }
            }
          }
          return op
        })
    )
  )
  .add(
    documented(
      HttpApiEndpoint.post("uploadMedia", "/api/v1/media", {
        payload: UploadPayload,
        success: inline(Media).pipe(HttpApiSchema.status(201)),
        error: errorsOf("uploadMedia")
      })
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
    documented(
      HttpApiEndpoint.get("previewMedia", "/api/v1/media/:id/preview", {
        params: IdPath,
        success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "image/jpeg" })),
        error: errorsOf("previewMedia")
      })
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get a photo's preview")
        .annotate(
          OpenApi.Description,
          "The photo at most 1080 px on its long side, oriented, without metadata: JPEG for a JPEG, WebP for a WebP, PNG otherwise (a GIF's first frame)."
        )
        // one success schema per status in HttpApi: the other image types are added to the document here
        .annotate(OpenApi.Transform, (op: Json) => {
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
    documented(
      HttpApiEndpoint.post("createImport", "/api/v1/media/import", {
        payload: Requests.CreateImportBody,
        headers: IdempotencyHeaders,
        success: inline(Resources.MediaImportCreated).pipe(HttpApiSchema.status(202)),
        error: errorsOf("createImport")
      })
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
    documented(
      HttpApiEndpoint.get("getImport", "/api/v1/media/imports/:id", {
        params: IdPath,
        success: Resources.MediaImport,
        error: errorsOf("getImport")
      })
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
    documented(
      HttpApiEndpoint.get("connect", "/api/v1/integrations/cloud/connect", {
        success: Resources.OAuthConnect,
        error: errorsOf("connect")
      })
        .annotate(RequiredScope, "media:write")
        .annotate(OpenApi.Summary, "Start connecting the cloud drive")
        .annotate(
          OpenApi.Description,
          "An authorization URL to open in a browser; the drive sends the user back to the service's OAuth callback."
        )
    )
  )
  .add(
    documented(
      HttpApiEndpoint.get("status", "/api/v1/integrations/cloud", {
        success: Resources.Integration,
        error: errorsOf("status")
      })
        .annotate(RequiredScope, "media:read")
        .annotate(OpenApi.Summary, "Get the drive connection")
        .annotate(
          OpenApi.Description,
          "Whether the workspace's cloud drive is connected, since when, and with which scopes."
        )
    )
  )
  .add(
    documented(
      HttpApiEndpoint.delete("disconnect", "/api/v1/integrations/cloud", {
        success: Resources.Integration,
        error: errorsOf("disconnect")
      })
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
    documented(
      HttpApiEndpoint.get("folders", "/api/v1/integrations/cloud/folders", {
        query: { parent: Optional(Schema.String), cursor: Optional(Schema.String) },
        success: Resources.FolderList,
        error: errorsOf("folders")
      })
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
    HttpApiEndpoint.get("callback", "/oauth/cloud_drive/callback", {
      // a repeated parameter is not refused here: the handler answers it with the HTML 400 page
      query: {
        code: Optional(StringOrStrings),
        state: Optional(StringOrStrings),
        error: Optional(StringOrStrings)
      },
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" })),
      error: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }), HttpApiSchema.status(400))
    })
  )
  .middleware(Unauthenticated)
  .annotate(OpenApi.Exclude, true)
{}

export class RendersGroup extends HttpApiGroup.make("renders")
  .add(
    documented(
      HttpApiEndpoint.post("createRender", "/api/v1/renders", {
        payload: CreateRenderBody,
        headers: IdempotencyHeaders,
        success: inline(RenderCreated).pipe(HttpApiSchema.status(202)),
        error: errorsOf("createRender")
      })
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
    documented(
      HttpApiEndpoint.get("getRender", "/api/v1/renders/:id", {
        params: IdPath,
        success: Render,
        error: errorsOf("getRender")
      })
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
    documented(
      HttpApiEndpoint.get("downloadRender", "/api/v1/renders/:id/download", {
        params: IdPath,
        success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "video/mp4" })),
        error: errorsOf("downloadRender")
      })
        .annotate(RequiredScope, "renders:read")
        .annotate(OpenApi.Summary, "Download a render's video")
        .annotate(OpenApi.Description, "The finished MP4 (1080x1920, H.264) of a `completed` render.")
    )
  )
  .add(
    documented(
      HttpApiEndpoint.get("getUsage", "/api/v1/usage", { success: Usage, error: errorsOf("getUsage") })
        .annotate(RequiredScope, "renders:read")
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
 * Handlers fail with the domain's ApiFailure: it is the error of the Admission middleware every group
 * has (Annotations.ts), as Effect 4 has no API-wide error. Request bodies are strict (Requests.strict).
 */
export class Api extends HttpApi.make("pic2video")
  .add(SystemGroup)
  .add(MediaGroup)
  .add(RendersGroup)
  .add(ImportsGroup)
  .add(IntegrationsGroup)
  .add(OAuthGroup)
  .annotate(HttpApi.PayloadParseOptions, Requests.strict)
  .annotate(OpenApi.Transform, documentSpec)
  .annotate(OpenApi.Title, "Pic-to-Video Rendering API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, "Turns a photo in the workspace library plus a caption into a vertical 1080x1920 MP4.")
{}
