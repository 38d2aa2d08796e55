import { Context, Effect, Layer } from "effect"
import { KeyHasher } from "../config/KeyHasher.ts"
import * as ApiKeys from "../repositories/ApiKeysRepo.ts"
import { WorkspacesRepo } from "../repositories/WorkspacesRepo.ts"

export { defaultLimits } from "../repositories/ApiKeysRepo.ts"

/**
 * A workspace's API keys as the portal manages them: through the operator CLI's own path
 * (`ApiKeys.create`, `ApiKeys.revoke`), with its plan, scope and name rules.
 */
export class ApiKeyService extends Context.Service<ApiKeyService>()("pic2video/ApiKeyService", {
  make: Effect.gen(function*() {
    const repo = yield* ApiKeys.ApiKeysRepo
    const workspaces = yield* WorkspacesRepo
    const hasher = yield* KeyHasher
    const withStore = <A, E>(e: Effect.Effect<A, E, ApiKeys.ApiKeysRepo | WorkspacesRepo | KeyHasher>) =>
      e.pipe(
        Effect.provideService(ApiKeys.ApiKeysRepo, repo),
        Effect.provideService(WorkspacesRepo, workspaces),
        Effect.provideService(KeyHasher, hasher)
      )
    return {
      /** Mints a key; the secret is in this answer only. */
      create: (k: ApiKeys.NewKey) => withStore(ApiKeys.create(k)),
      /** The key's row, or undefined when there is none. */
      find: (id: string) => withStore(ApiKeys.find(id)),
      /** Revokes a key (a revoked key keeps its first revocation time). */
      revoke: (id: string) => withStore(ApiKeys.revoke(id)),
      /** The workspace's keys, newest first (never a secret). */
      list: (workspaceId: string) => withStore(ApiKeys.list(workspaceId))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
