import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The whole v1 schema. PostgreSQL is the final arbiter of money: the constraints and conditional
 * updates here (allowance never below zero, storage never over budget, one render per idempotency
 * record, one media per drive file) hold whatever the processes in front of them do.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE workspaces (
      id text PRIMARY KEY,
      name text NOT NULL,
      plan text NOT NULL CHECK (plan IN ('free', 'starter', 'studio', 'agency', 'custom')),
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
      api_enabled boolean NOT NULL DEFAULT true,
      included integer CHECK (included IS NULL OR included >= 0),
      storage_budget_bytes bigint NOT NULL CHECK (storage_budget_bytes >= 0),
      storage_used_bytes bigint NOT NULL DEFAULT 0 CHECK (storage_used_bytes >= 0),
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      name text NOT NULL,
      secret_hash bytea NOT NULL,
      scopes text[] NOT NULL,
      spend_cap_24h integer CHECK (spend_cap_24h IS NULL OR spend_cap_24h >= 0),
      creates_per_minute integer NOT NULL CHECK (creates_per_minute >= 0),
      reads_per_minute integer NOT NULL CHECK (reads_per_minute >= 0),
      uploads_per_minute integer NOT NULL CHECK (uploads_per_minute >= 0),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at)`
  yield* sql`
    CREATE TABLE media (
      id uuid PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      created_at timestamptz NOT NULL,
      label text NOT NULL,
      tags text[] NOT NULL,
      width integer,
      height integer,
      mime_type text NOT NULL,
      file_size_bytes bigint NOT NULL CHECK (file_size_bytes > 0),
      blob_key text NOT NULL,
      source_ref text,
      archived_at timestamptz
    )`
  yield* sql`CREATE INDEX media_list ON media (workspace_id, created_at DESC, id DESC) WHERE archived_at IS NULL`
  // a drive file is imported into a workspace at most once, archived or not
  yield* sql`CREATE UNIQUE INDEX media_source ON media (workspace_id, source_ref) WHERE source_ref IS NOT NULL`
  yield* sql`
    CREATE TABLE allowance_usage (
      workspace_id text NOT NULL REFERENCES workspaces (id),
      cycle_start timestamptz NOT NULL,
      used integer NOT NULL DEFAULT 0 CHECK (used >= 0),
      PRIMARY KEY (workspace_id, cycle_start)
    )`
  yield* sql`
    CREATE TABLE idempotency_records (
      id bigserial PRIMARY KEY,
      api_key_id text NOT NULL REFERENCES api_keys (id),
      endpoint text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      status_code integer,
      response jsonb,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      locked_until timestamptz NOT NULL,
      UNIQUE (api_key_id, endpoint, key)
    )`
  yield* sql`CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at)`
  yield* sql`
    CREATE TABLE renders (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      api_key_id text REFERENCES api_keys (id),
      media_id uuid NOT NULL REFERENCES media (id),
      status text NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed', 'canceled')),
      progress integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
      request jsonb NOT NULL,
      metadata jsonb NOT NULL,
      idempotency_key text,
      -- one render per idempotency record: a retried create can never charge twice
      idempotency_record_id bigint UNIQUE REFERENCES idempotency_records (id) ON DELETE SET NULL,
      caption_blob_key text,
      cycle_start timestamptz NOT NULL,
      refunded_at timestamptz,
      error_code text CHECK (error_code IN ('render_failed', 'render_timeout', 'render_rejected', 'render_canceled')),
      error_message text,
      asset_blob_key text,
      asset_content_type text,
      asset_width integer,
      asset_height integer,
      asset_byte_size bigint,
      asset_duration_sec double precision,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      completed_at timestamptz,
      CHECK ((status = 'completed') = (asset_blob_key IS NOT NULL)),
      CHECK ((status IN ('failed', 'canceled')) = (error_code IS NOT NULL)),
      CHECK ((status IN ('completed', 'failed', 'canceled')) = (completed_at IS NOT NULL)),
      CHECK ((status IN ('failed', 'canceled')) = (refunded_at IS NOT NULL))
    )`
  yield* sql`CREATE INDEX renders_spend ON renders (api_key_id, created_at) WHERE refunded_at IS NULL`
  yield* sql`CREATE INDEX renders_active ON renders (created_at) WHERE status IN ('queued', 'processing')`
  yield* sql`
    CREATE TABLE integrations (
      workspace_id text PRIMARY KEY REFERENCES workspaces (id),
      provider text NOT NULL DEFAULT 'cloud_drive',
      tokens_ciphertext text NOT NULL,
      scopes text[] NOT NULL,
      connected_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE oauth_states (
      state_hash text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      verifier_ciphertext text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`
    CREATE TABLE imports (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      api_key_id text REFERENCES api_keys (id),
      provider text NOT NULL DEFAULT 'cloud_drive',
      folder_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'completed', 'partial', 'failed')),
      discovered integer NOT NULL DEFAULT 0,
      stopped_reason text,
      idempotency_record_id bigint UNIQUE REFERENCES idempotency_records (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      completed_at timestamptz,
      CHECK ((status = 'pending') = (completed_at IS NULL))
    )`
  yield* sql`
    CREATE TABLE import_items (
      import_id text NOT NULL REFERENCES imports (id),
      position integer NOT NULL,
      source_ref text NOT NULL,
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('imported', 'skipped', 'failed')),
      media_id uuid REFERENCES media (id),
      reason text,
      PRIMARY KEY (import_id, position),
      UNIQUE (import_id, source_ref)
    )`
})
