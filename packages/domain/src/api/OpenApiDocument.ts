import * as Errors from "../Errors.ts"
import * as Requests from "../Requests.ts"

/**
 * What the OpenAPI document says beyond what HttpApi derives from the definition (Api.ts): the
 * scope and response headers of each operation, the bearer scheme, the upload's parts, and the
 * removal of the framework's own decode error, which the service never sends. Applied as
 * `OpenApi.Transform` annotations; the document is generated, never written by hand.
 */

/** The document is JSON as HttpApi built it: the transforms here and in Api.ts walk it as plain objects. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OpenApi.Transform's own type; the JSON is walked untyped
export type Json = Record<string, any>

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema })

/** Response headers, declared once and referenced from each response that carries them. */
const responseHeaders = {
  "X-Request-Id": header(
    "The request's id, also in every error body as `request_id`; quote it when reporting a problem."
  ),
  "RateLimit-Limit": header("Requests this key may make per minute in this endpoint's bucket.", { type: "integer" }),
  "RateLimit-Remaining": header("Requests left in the current window.", { type: "integer" }),
  "RateLimit-Reset": header("Seconds until the window resets.", { type: "integer" }),
  "Retry-After": header("Seconds to wait before retrying.", { type: "integer" }),
  "Idempotency-Replayed": header(
    "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`.",
    {
      type: "string",
      enum: ["true"]
    }
  ),
  "WWW-Authenticate": header("`Bearer`: the key is sent as a bearer token."),
  "Content-Disposition": header("`attachment; filename=\"<render id>.mp4\"`.")
}

const ref = (name: keyof typeof responseHeaders) => ({ $ref: `#/components/headers/${name}` })

/**
 * The operation's scope, and the headers each of its responses carries. The scope is stated in the
 * description and in `x-required-scopes`, not as bearer "roles" in `security`: OpenAPI 3.1 allows
 * roles there, but linters and generators read scopes only on OAuth2 schemes and flag them.
 */
export const documentOperation = (
  op: Json,
  scope: string | undefined,
  codes: ReadonlyArray<Errors.ErrorCode>
): Json => {
  if (scope !== undefined) {
    op["x-required-scopes"] = [scope]
    op.description = `${op.description ?? ""}\n\nRequires an API key with the \`${scope}\` scope.`.trim()
  }
  // a parameter is described by its schema's description, as Effect 3 wrote it (Effect 4 leaves it in the schema)
  for (const p of (op.parameters ?? []) as Array<Json>) {
    if (p.description === undefined && typeof p.schema?.description === "string") p.description = p.schema.description
  }
  const replayable = (op.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "idempotency-key")
  for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
    const headers: Json = { "X-Request-Id": ref("X-Request-Id") }
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

/** The error body every failure has, as the JSON schema the handlers' failure type is documented with. */
export const apiFailureJsonSchema = {
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

/**
 * HttpApi documents its own decode error under 400 on every operation, but the pipeline never
 * sends that shape (a decode failure is 422 `validation_failed` in the one error body), so it is
 * taken out of the document.
 */
const withoutDecodeError = (spec: Json): Json => {
  // ApiFailure (any code, under 500) is there for the handlers' types; each endpoint lists its own codes
  const apiFailure = JSON.stringify(apiFailureJsonSchema)
  // Effect 4 documents the middleware's error (ApiFailure, a declaration) as `ApiFailureEncoded`
  const isDecodeError = (s: Json | undefined) =>
    (typeof s?.$ref === "string" && /\/(HttpApiDecodeError|ApiFailure|ApiFailureEncoded)$/.test(s.$ref)) ||
    JSON.stringify(s) === apiFailure
  for (const item of Object.values(spec.paths ?? {}) as Array<Json>) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries((operation?.responses ?? {}) as Json)) {
        const media = response?.content?.["application/json"]
        if (media?.schema === undefined) continue
        if (isDecodeError(media.schema)) {
          delete operation.responses[status]
        } else if (Array.isArray(media.schema.anyOf)) {
          const rest = media.schema.anyOf.filter((s: Json) => !isDecodeError(s))
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
const documentApi = (spec: Json): Json => {
  // the repository grants no licence (yet): the document says so rather than invent one
  spec.info.license = { name: "Proprietary", identifier: "LicenseRef-Proprietary" }
  spec.info.contact = { name: "The operator of this service" }
  spec.components.securitySchemes.bearer = {
    type: "http",
    scheme: "bearer",
    bearerFormat: "API key",
    description:
      "An API key as a bearer token: `Authorization: Bearer <key>`. Each operation lists the scope its key must hold."
  }
  spec.components.headers = Object.fromEntries(
    Object.entries(responseHeaders).map((
      [name, h]
    ) => [name, { ...h, ...(name === "X-Request-Id" ? { required: true } : {}) }])
  )
  // the file part is bytes (a Blob for a generated client), the tags repeated text parts
  const upload = spec.paths["/api/v1/media"]?.post?.requestBody?.content?.["multipart/form-data"]
  if (upload !== undefined) {
    upload.schema.properties.file = {
      type: "string",
      format: "binary",
      contentMediaType: "application/octet-stream",
      description: `The photo: ${Requests.photoTypesText}, up to ${Requests.maxUploadMiB} MiB.`
    }
    upload.schema.properties.label = {
      type: "string",
      maxLength: Requests.maxLabelLength,
      description: `A label for the photo, 0 to ${Requests.maxLabelLength} characters (default: the empty string).`
    }
    upload.schema.properties.tags = {
      type: "array",
      items: { type: "string", minLength: 1, maxLength: Requests.maxTagLength },
      maxItems: Requests.maxTags,
      description: "Tags; repeat the part for each tag."
    }
  }
  // schemas only the framework's own error or the file part referred to
  for (let removed = true; removed;) {
    removed = false
    const text = JSON.stringify({ ...spec, components: { ...spec.components, schemas: undefined } }) +
      Object.entries(spec.components.schemas).map(([name, schema]) =>
        JSON.stringify(schema).replaceAll(`"#/components/schemas/${name}"`, "")
      ).join()
    for (const name of Object.keys(spec.components.schemas)) {
      if (!text.includes(`"#/components/schemas/${name}"`)) {
        delete spec.components.schemas[name]
        removed = true
      }
    }
  }
  return spec
}

/**
 * Effect 3 wrote an object schema's `required` before its `properties`, Effect 4 after: the same
 * document, but the served bytes (and their diffs) stay as they were by writing them in the old order.
 */
const inV3Order = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(inV3Order)
  if (value === null || typeof value !== "object") return value
  const o = value as Json
  // and a record's empty `required` and `properties`
  if (
    o.type === "object" && o.additionalProperties !== undefined && o.properties === undefined &&
    o.required === undefined
  ) {
    const { type, ...rest } = o
    return inV3Order({ type, required: [], properties: {}, ...rest })
  }
  const keys = Object.keys(o)
  // and a refinement's `description` and `title` right after its `type`
  const refinement = typeof o.type === "string" && ["pattern", "title"].some((k) => keys.includes(k))
  const ordered = Array.isArray(o.required) && keys.includes("properties")
    ? keys.filter((k) => k !== "required").flatMap((k) => k === "properties" ? ["required", k] : [k])
    : refinement
    ? [
      "type",
      ...["description", "title"].filter((k) => keys.includes(k)),
      ...keys.filter((k) => !["type", "description", "title"].includes(k))
    ]
    : keys
  const out: Json = {}
  // defineProperty: a key named `__proto__` (a schema's property) stays a key
  for (const k of ordered) {
    Object.defineProperty(out, k, { value: inV3Order(o[k]), enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** Components in the order the document first refers to them (depth first), as Effect 3 listed them. */
const componentsInReferenceOrder = (spec: Json): Json => {
  const schemas: Json | undefined = spec.components?.schemas
  if (schemas === undefined) return spec
  const order: Array<string> = []
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit)
    if (value === null || typeof value !== "object") return
    for (const [k, v] of Object.entries(value)) {
      const name = k === "$ref" && typeof v === "string" && v.startsWith("#/components/schemas/")
        ? v.slice("#/components/schemas/".length)
        : undefined
      if (name !== undefined && Object.hasOwn(schemas, name) && !order.includes(name)) {
        order.push(name)
        visit(schemas[name])
      } else visit(v)
    }
  }
  visit(spec.paths)
  for (const name of Object.keys(schemas)) if (!order.includes(name)) order.push(name)
  spec.components.schemas = Object.fromEntries(order.map((name) => [name, schemas[name]]))
  return spec
}

/** The whole document's transform (the API's `OpenApi.Transform`). */
export const documentSpec = (spec: Json): Json =>
  inV3Order(componentsInReferenceOrder(documentApi(withoutDecodeError(spec)))) as Json
