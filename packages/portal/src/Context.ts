import * as JsonBody from "@pic2video/api/JsonBody"
import type { Session } from "@pic2video/cluster/services/PortalSessionService"
import type { WorkspaceRow } from "@pic2video/cluster/services/WorkspaceService"
import { Errors } from "@pic2video/domain"
import { Data, Effect } from "effect"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"
import type { Frame, Section } from "./Layout.ts"

/** What a signed-in page handler is given: the request, its session and workspace, a parsed form. */
export interface Signed {
  readonly request: HttpServerRequest
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
export class NotFound extends Data.TaggedError("NotFound") {}

export const orNotFound = <A>(value: A | undefined) =>
  value === undefined ? Effect.fail(new NotFound()) : Effect.succeed(value)

/** A form's body is small: read at most this much (a larger one is 413 and the connection closes). */
const maxFormBytes = 64 * 1024

/**
 * An urlencoded form (every value of a repeated name), or why it cannot be read: 413
 * `payload_too_large` past 64 KiB (read no further), 400 `invalid_request` otherwise.
 */
export const readForm = (request: HttpServerRequest): Effect.Effect<Form | Errors.ApiFailure> => {
  const type = (request.headers["content-type"] ?? "").toLowerCase()
  if (type !== "" && !type.startsWith("application/x-www-form-urlencoded")) {
    return Effect.succeed(Errors.fail("invalid_request", "the form is not urlencoded"))
  }
  return JsonBody.textWithin(
    request,
    maxFormBytes,
    () => Errors.fail("payload_too_large", "the form is larger than 64 KiB")
  ).pipe(
    Effect.map((text) => new Form([...new URLSearchParams(text).entries()])),
    Effect.catch((refusal) => Effect.succeed(refusal))
  )
}
