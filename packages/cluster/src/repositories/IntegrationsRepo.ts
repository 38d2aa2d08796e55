import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * The drive connection's rows (drive/Integrations.ts holds the rules): one `integrations` row per
 * connected workspace, its tokens encrypted, and the single-use `oauth_states` of consents under
 * way (only the state's SHA-256 is stored). Instants are the caller's, from `Clock`.
 */
const Timestamp = Schema.Date

const IntegrationRow = Schema.Struct({
  workspace_id: Schema.String,
  tokens_ciphertext: Schema.String,
  scopes: Schema.Array(Schema.String),
  connected_at: Timestamp
})
interface IntegrationRow extends Schema.Schema.Type<typeof IntegrationRow> {}

const NewState = Schema.Struct({
  state_hash: Schema.String,
  workspace_id: Schema.String,
  verifier_ciphertext: Schema.String,
  expires_at: Timestamp,
  return_to: Schema.NullOr(Schema.String)
})

const ClaimedState = NewState.mapFields(Struct.pick(["workspace_id", "verifier_ciphertext", "return_to"]))

const Connection = Schema.Struct({ workspaceId: Schema.String, connectedAt: Timestamp })
const Tokens = Schema.Struct({ ciphertext: Schema.String, scopes: Schema.Array(Schema.String) })

export class IntegrationsRepo extends Context.Service<IntegrationsRepo>()("pic2video/IntegrationsRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: IntegrationRow,
      execute: (workspaceId) =>
        sql`SELECT workspace_id, tokens_ciphertext, scopes, connected_at FROM integrations WHERE workspace_id = ${workspaceId}`
    })
    const deleteLapsedStates = SqlSchema.void({
      Request: Timestamp,
      execute: (now) => sql`DELETE FROM oauth_states WHERE expires_at < ${now}`
    })
    const insertState = SqlSchema.void({
      Request: NewState,
      execute: (state) => sql`INSERT INTO oauth_states ${sql.insert(state)}`
    })
    const claim = SqlSchema.findOneOption({
      Request: Schema.Struct({ stateHash: Schema.String, now: Timestamp }),
      Result: ClaimedState,
      execute: (r) =>
        sql`
          UPDATE oauth_states SET used_at = ${r.now}
          WHERE state_hash = ${r.stateHash} AND used_at IS NULL AND expires_at > ${r.now}
          RETURNING workspace_id, verifier_ciphertext, return_to`
    })
    const upsert = SqlSchema.void({
      Request: Schema.Struct({ ...Connection.fields, ...Tokens.fields }),
      execute: (r) =>
        sql`
          INSERT INTO integrations ${
          sql.insert({
            workspace_id: r.workspaceId,
            provider: "cloud_drive",
            tokens_ciphertext: r.ciphertext,
            scopes: [...r.scopes],
            connected_at: r.connectedAt,
            updated_at: r.connectedAt
          })
        }
          ON CONFLICT (workspace_id) DO UPDATE SET
            tokens_ciphertext = EXCLUDED.tokens_ciphertext, scopes = EXCLUDED.scopes,
            connected_at = EXCLUDED.connected_at, updated_at = EXCLUDED.updated_at`
    })
    const remove = SqlSchema.void({
      Request: Schema.String,
      execute: (workspaceId) => sql`DELETE FROM integrations WHERE workspace_id = ${workspaceId}`
    })
    const updateTokens = SqlSchema.void({
      Request: Schema.Struct({ connection: Connection, tokens: Tokens, now: Timestamp }),
      execute: ({ connection, now, tokens }) =>
        sql`UPDATE integrations SET tokens_ciphertext = ${tokens.ciphertext}, scopes = ${[
          ...tokens.scopes
        ]}, updated_at = ${now}
          WHERE workspace_id = ${connection.workspaceId} AND connected_at = ${connection.connectedAt}`
    })
    const removeConnection = SqlSchema.void({
      Request: Connection,
      execute: (c) =>
        sql`DELETE FROM integrations WHERE workspace_id = ${c.workspaceId} AND connected_at = ${c.connectedAt}`
    })

    const selectAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: IntegrationRow,
      execute: () =>
        sql`SELECT workspace_id, tokens_ciphertext, scopes, connected_at FROM integrations ORDER BY workspace_id`
    })

    const swapCiphertext = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, from: Schema.String, to: Schema.String }),
      Result: Schema.Struct({ workspace_id: Schema.String }),
      execute: (r) =>
        sql`UPDATE integrations SET tokens_ciphertext = ${r.to}
          WHERE workspace_id = ${r.workspaceId} AND tokens_ciphertext = ${r.from} RETURNING workspace_id`
    })

    return {
      /** Every connection (a rotation re-encrypts them all). */
      all: selectAll(undefined).pipe(operation("IntegrationsRepo.all")),
      /** The same tokens under another key; false when the row changed meanwhile (a refresh, a reconnect). */
      reencrypt: (workspaceId: string, from: string, to: string) =>
        swapCiphertext({ workspaceId, from, to }).pipe(
          Effect.map((rows) => rows.length > 0),
          operation("IntegrationsRepo.reencrypt")
        ),
      find: (workspaceId: string) =>
        select(workspaceId).pipe(Effect.map(Option.getOrUndefined), operation("IntegrationsRepo.find")),
      /** Stores a consent's state, forgetting the lapsed ones (their 10 minutes are over). */
      addState: (state: typeof NewState.Type, now: Date) =>
        Effect.andThen(deleteLapsedStates(now), insertState(state)).pipe(operation("IntegrationsRepo.addState")),
      /** Spends a live state: of two callbacks racing with it, one gets it. */
      claimState: (stateHash: string, now: Date) =>
        claim({ stateHash, now }).pipe(Effect.map(Option.getOrUndefined), operation("IntegrationsRepo.claimState")),
      /** Connects the workspace; a new consent replaces the tokens of an existing connection. */
      connect: (workspaceId: string, tokens: typeof Tokens.Type, connectedAt: Date) =>
        upsert({ workspaceId, connectedAt, ...tokens }).pipe(operation("IntegrationsRepo.connect")),
      disconnect: (workspaceId: string) => remove(workspaceId).pipe(operation("IntegrationsRepo.disconnect")),
      /** Refreshed tokens, written only while the connection is the one they belong to (same connected_at). */
      saveTokens: (connection: typeof Connection.Type, tokens: typeof Tokens.Type, now: Date) =>
        updateTokens({ connection, tokens, now }).pipe(operation("IntegrationsRepo.saveTokens")),
      /** Ends this very connection (not one made since). */
      end: (connection: typeof Connection.Type) => removeConnection(connection).pipe(operation("IntegrationsRepo.end"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
