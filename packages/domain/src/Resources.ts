import { Schema } from "effect"
import { Optional } from "./Optional.ts"

/** Response shapes, field for field as the spec's "Resources and their fields". */

/**
 * An integer, documented as Effect 3 did (the `Int` component, `type: integer`; Effect 4's own adds the
 * safe-integer bounds and is inlined). Accepts what `Schema.Int` accepts: safe integers.
 */
export const Int = Schema.Number.check(Schema.isInt({ toJsonSchema: () => ({ type: "integer" }) })).annotate({
  identifier: "Int",
  description: "an integer",
  title: "int"
})

export const Timestamp = Schema.String.annotate({ description: "ISO 8601 UTC timestamp" })

const ListOf = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    object: Schema.Literal("list"),
    data: Schema.Array(item),
    has_more: Schema.Boolean,
    next_cursor: Schema.NullOr(Schema.String)
  })

export const Media = Schema.Struct({
  object: Schema.Literal("media"),
  id: Schema.String,
  created_at: Timestamp,
  label: Schema.String,
  tags: Schema.Array(Schema.String),
  width: Schema.NullOr(Int),
  height: Schema.NullOr(Int),
  mime_type: Schema.String,
  file_size_bytes: Int,
  preview_url: Schema.String,
  // null in v1 (preview URLs do not expire); typed as the timestamp it would be, so generated clients keep the field
  preview_expires_at: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Media" })
export type Media = typeof Media.Type

export const MediaList = ListOf(Media).annotate({ identifier: "MediaList" })

export const RenderStatus = Schema.Literals(["queued", "processing", "completed", "failed", "canceled"])
export type RenderStatus = typeof RenderStatus.Type

const RenderAsset = Schema.Struct({
  url: Schema.String,
  expires_at: Schema.NullOr(Timestamp), // null in v1, as preview_expires_at
  content_type: Schema.NullOr(Schema.String),
  width: Schema.NullOr(Int),
  height: Schema.NullOr(Int),
  byte_size: Schema.NullOr(Int),
  duration_sec: Schema.Finite
}).annotate({ identifier: "RenderAsset" })

const RenderError = Schema.Struct({
  code: Schema.Literals(["render_failed", "render_timeout", "render_rejected", "render_canceled"]),
  message: Schema.String
}).annotate({ identifier: "RenderError" })

// Finite: Effect 4's JSON form of Number writes NaN and ±Infinity as strings (and documents them); JSON has no such numbers
export const MetadataValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean, Schema.Null])
export const Metadata = Schema.Record(Schema.String, MetadataValue)

export const Render = Schema.Struct({
  object: Schema.Literal("render"),
  id: Schema.String,
  type: Schema.Literal("aesthetic_quote"),
  status: RenderStatus,
  progress: Int,
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp),
  asset: Schema.NullOr(RenderAsset),
  error: Schema.NullOr(RenderError),
  idempotency_key: Schema.NullOr(Schema.String),
  metadata: Metadata
}).annotate({ identifier: "Render" })
export type Render = typeof Render.Type

export const RenderCreated = Schema.Struct({
  object: Schema.Literal("render"),
  id: Schema.String,
  status: Schema.Literal("queued")
}).annotate({ identifier: "RenderCreated" })

export const Usage = Schema.Struct({
  object: Schema.Literal("usage"),
  cycle_start: Timestamp,
  aesthetic_quotes: Schema.Struct({ used: Int, included: Schema.NullOr(Int) })
}).annotate({ identifier: "Usage" })

export const ImportStatus = Schema.Literals(["pending", "completed", "partial", "failed"])
export type ImportStatus = typeof ImportStatus.Type

const ImportCounts = Schema.Struct({
  discovered: Int,
  imported: Int,
  skipped: Int,
  failed: Int
})

export const ImportItem = Schema.Struct({
  source_ref: Schema.String,
  name: Schema.String,
  status: Schema.Literals(["imported", "skipped", "failed"]),
  media_id: Optional(Schema.String),
  reason: Optional(Schema.String)
}).annotate({ identifier: "ImportItem" })

export const MediaImportCreated = Schema.Struct({
  object: Schema.Literal("media_import"),
  id: Schema.String,
  status: ImportStatus,
  provider: Schema.Literal("cloud_drive"),
  folder_id: Schema.String,
  counts: ImportCounts,
  created_at: Timestamp
}).annotate({ identifier: "MediaImportCreated" })

export const MediaImport = Schema.Struct({
  ...MediaImportCreated.fields,
  stopped_reason: Schema.NullOr(Schema.String),
  items: Schema.Array(ImportItem),
  completed_at: Schema.NullOr(Timestamp)
}).annotate({ identifier: "MediaImport" })

export const Integration = Schema.Struct({
  object: Schema.Literal("integration"),
  provider: Schema.Literal("cloud_drive"),
  connected: Schema.Boolean,
  connected_at: Optional(Schema.NullOr(Timestamp)),
  scopes: Schema.Array(Schema.String),
  revoked: Optional(Schema.Boolean)
}).annotate({ identifier: "Integration" })

export const OAuthConnect = Schema.Struct({
  object: Schema.Literal("oauth_connect"),
  provider: Schema.Literal("cloud_drive"),
  authorization_url: Schema.String,
  expires_at: Timestamp
}).annotate({ identifier: "OAuthConnect" })

export const Folder = Schema.Struct({ id: Schema.String, name: Schema.String }).annotate({ identifier: "Folder" })
export const FolderList = ListOf(Folder).annotate({ identifier: "FolderList" })

/** Operator CLI documents (contract §2). */
export const Workspace = Schema.Struct({
  object: Schema.Literal("workspace"),
  id: Schema.String,
  name: Schema.String,
  plan: Schema.String,
  status: Schema.Literals(["active", "inactive"]),
  api_enabled: Schema.Boolean,
  included: Schema.NullOr(Int),
  storage_budget_bytes: Schema.Number,
  cycle_start: Timestamp,
  created_at: Timestamp
})

export const ApiKey = Schema.Struct({
  object: Schema.Literal("api_key"),
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  scopes: Schema.Array(Schema.String),
  spend_cap_24h: Schema.NullOr(Int),
  creates_per_minute: Int,
  reads_per_minute: Int,
  uploads_per_minute: Int,
  expires_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp),
  last_used_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
