import { HttpApiBuilder } from "@effect/platform"
import { Integrations, toApiFailure } from "@pic2video/cluster/Integrations"
import { Cursor, Errors } from "@pic2video/domain"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { Principal } from "../Principal.ts"

/** Drive folder ids (and `root`); anything else cannot name a folder, so it is unknown (404). */
const folderIdPattern = /^[A-Za-z0-9_-]{1,200}$/

const folderPageSize = 100

/** The cloud-drive connection of the caller's workspace (decisions §7). */
export const layer = HttpApiBuilder.group(Api, "integrations", (handlers) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    return handlers
      .handle("connect", () =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const started = yield* integrations.startConnect(workspaceId)
          return {
            object: "oauth_connect" as const,
            provider: "cloud_drive" as const,
            authorization_url: started.authorizationUrl,
            expires_at: started.expiresAt.toISOString()
          }
        }))
      .handle("status", () =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const status = yield* integrations.status(workspaceId)
          return {
            object: "integration" as const,
            provider: "cloud_drive" as const,
            connected: status.connected,
            connected_at: status.connectedAt?.toISOString() ?? null,
            scopes: [...status.scopes]
          }
        }))
      .handle("disconnect", () =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          yield* integrations.disconnect(workspaceId)
          return {
            object: "integration" as const,
            provider: "cloud_drive" as const,
            connected: false,
            connected_at: null,
            scopes: [],
            revoked: true
          }
        }))
      .handle("folders", ({ urlParams }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const parent = urlParams.parent ?? "root"
          const pageToken = urlParams.cursor === undefined ? undefined : Cursor.decodePageToken(urlParams.cursor)
          if (urlParams.cursor !== undefined && (pageToken === undefined || pageToken.length === 0)) {
            return yield* Effect.fail(Errors.fail("validation_failed", "cursor: not a cursor this endpoint returned"))
          }
          const connection = yield* integrations.open(workspaceId).pipe(Effect.mapError(toApiFailure))
          if (!folderIdPattern.test(parent)) {
            return yield* Effect.fail(Errors.fail("unknown_folder", "parent: not a drive folder id"))
          }
          const page = yield* connection.listFolders({ parent, pageToken, pageSize: folderPageSize }).pipe(
            Effect.mapError((e) =>
              // the drive refuses a page token that is not its own (or not for this parent)
              e._tag === "ProviderRejected" && e.status === 400 && pageToken !== undefined
                ? Errors.fail("validation_failed", "cursor: not a cursor for this parent")
                : toApiFailure(e)
            )
          )
          return {
            object: "list" as const,
            data: page.folders.map((f) => ({ id: f.id, name: f.name })),
            has_more: page.nextPageToken !== null,
            next_cursor: page.nextPageToken === null ? null : Cursor.encodePageToken(page.nextPageToken)
          }
        }))
  }))
