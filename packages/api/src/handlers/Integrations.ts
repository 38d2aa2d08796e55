import { HttpApiBuilder } from "@effect/platform"
import { Integrations, toApiFailure } from "@pic2video/cluster/Integrations"
import { Cursor, Errors, ImportState, Requests } from "@pic2video/domain"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { Principal } from "../Principal.ts"

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
          const cursor = urlParams.cursor === undefined ? undefined : Cursor.decodePageToken(urlParams.cursor)
          if (urlParams.cursor !== undefined && cursor === undefined) {
            return yield* Effect.fail(Errors.fail("validation_failed", "cursor: not a cursor this endpoint returned"))
          }
          if (cursor !== undefined && cursor.parent !== parent) {
            return yield* Effect.fail(Errors.fail("validation_failed", "cursor: not a cursor for this parent"))
          }
          const connection = yield* integrations.open(workspaceId).pipe(Effect.mapError(toApiFailure))
          // what cannot be a folder id names no folder (the same shape rule as an import's folder_id)
          if (!Requests.isFolderIdShape(parent)) {
            return yield* Effect.fail(Errors.fail("unknown_folder", "parent: not a drive folder id"))
          }
          const pageToken = cursor?.token
          const page = yield* connection.listFolders({ parent, pageToken, pageSize: folderPageSize }).pipe(
            Effect.mapError((e) =>
              // the drive refuses a page token that is not its own
              e._tag === "ProviderRejected" && e.status === 400 && pageToken !== undefined
                ? Errors.fail("validation_failed", "cursor: not a cursor for this parent")
                : toApiFailure(e)
            )
          )
          // by name within the page too, whatever order the drive kept
          const folders = [...page.folders].sort(ImportState.compareFolderNames)
          return {
            object: "list" as const,
            data: folders.map((f) => ({ id: f.id, name: f.name })),
            has_more: page.nextPageToken !== null,
            next_cursor: page.nextPageToken === null ? null : Cursor.encodePageToken({ token: page.nextPageToken, parent })
          }
        }))
  }))
