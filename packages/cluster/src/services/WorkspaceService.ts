import { Context, Effect, Layer } from "effect"
import { WorkspacesRepo } from "../repositories/WorkspacesRepo.ts"

export type { WorkspaceRow } from "../repositories/WorkspacesRepo.ts"

/** A workspace as the portal reads it: its row, and the name a person knows it by. */
export class WorkspaceService extends Context.Service<WorkspaceService>()("pic2video/WorkspaceService", {
  make: Effect.gen(function*() {
    const repo = yield* WorkspacesRepo
    return {
      /** The workspace's row, or undefined when there is none. */
      find: (id: string) => repo.find(id),
      /** The workspace's name, or its id when there is no such workspace. */
      nameOf: (id: string) => Effect.map(repo.find(id), (w) => w?.name ?? id)
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
