import { Cursor, Errors, ImportState, Requests } from "@pic2video/domain"
import { Context, Effect, Layer } from "effect"
import { Integrations, toApiFailure } from "../drive/Integrations.ts"

const folderPageSize = 100

/** The cloud-drive connection of a workspace (contract §7), as documents. */
export class IntegrationService extends Context.Service<IntegrationService>()("pic2video/IntegrationService", {
  make: Effect.gen(function*() {
    const integrations = yield* Integrations

    const connect = (workspaceId: string) =>
      Effect.map(integrations.startConnect(workspaceId), (started) => ({
        object: "oauth_connect" as const,
        provider: "cloud_drive" as const,
        authorization_url: started.authorizationUrl,
        expires_at: started.expiresAt.toISOString()
      }))

    const status = (workspaceId: string) =>
      Effect.map(integrations.status(workspaceId), (s) => ({
        object: "integration" as const,
        provider: "cloud_drive" as const,
        connected: s.connected,
        connected_at: s.connectedAt?.toISOString() ?? null,
        scopes: [...s.scopes]
      }))

    const disconnect = (workspaceId: string) =>
      Effect.as(integrations.disconnect(workspaceId), {
        object: "integration" as const,
        provider: "cloud_drive" as const,
        connected: false,
        connected_at: null,
        scopes: [],
        revoked: true
      })

    /** One page of sub-folders of `parent` (default the drive's root), by name. */
    const folders = (workspaceId: string, query: { readonly parent?: string; readonly cursor?: string }) =>
      Effect.gen(function*() {
        const parent = query.parent ?? "root"
        const cursor = query.cursor === undefined ? undefined : Cursor.decodePageToken(query.cursor)
        if (query.cursor !== undefined && cursor === undefined) {
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
        const sorted = [...page.folders].sort(ImportState.compareFolderNames)
        return {
          object: "list" as const,
          data: sorted.map((f) => ({ id: f.id, name: f.name })),
          has_more: page.nextPageToken !== null,
          next_cursor: page.nextPageToken === null
            ? null
            : Cursor.encodePageToken({ token: page.nextPageToken, parent })
        }
      })

    return { connect, status, disconnect, folders } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
