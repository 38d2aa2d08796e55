import { Data, Effect } from "effect"
import type { HttpServerRequest } from "@effect/platform"
import type { Session } from "@pic2video/cluster/portal/PortalSessions"
import type { WorkspaceRow } from "@pic2video/cluster/Workspaces"
import type { Frame, Section } from "./Layout.ts"

/** What a signed-in page handler is given: the request, its session and workspace, a parsed form. */
export interface Signed {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly url: URL
  readonly session: Session
  readonly workspace: WorkspaceRow
  /** a POST's urlencoded fields (every value of a repeated name), empty for a GET */
  readonly form: Form
  readonly frame: (section: Section | undefined) => NonNullable<Frame["signedIn"]>
}

export class Form {
  readonly entries: ReadonlyArray<readonly [string, string]>
  constructor(entries: ReadonlyArray<readonly [string, string]>) {
    this.entries = entries
  }
  get(name: string): string | undefined {
    return this.entries.find(([k]) => k === name)?.[1]
  }
  /** the value, trimmed; undefined when absent or blank */
  text(name: string): string | undefined {
    const v = this.get(name)?.trim()
    return v === undefined || v === "" ? undefined : v
  }
  all(name: string): ReadonlyArray<string> {
    return this.entries.filter(([k]) => k === name).map(([, v]) => v)
  }
}

/** Another workspace's object, or none: answered as the API does, 404 and nothing more. */
export class NotFound extends Data.TaggedError("NotFound")<{}> {}

export const orNotFound = <A>(value: A | undefined) => value === undefined ? Effect.fail(new NotFound()) : Effect.succeed(value)
