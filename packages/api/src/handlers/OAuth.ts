import { type CallbackOutcome, Integrations } from "@pic2video/cluster/drive/Integrations"
import { Api } from "@pic2video/domain/api/Api"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { securityHeaders } from "../PageHeaders.ts"

/**
 * `GET /oauth/cloud_drive/callback` (contract §7): where the provider sends the browser after the
 * consent. It needs no key (the single-use state names the workspace) and answers a person, so
 * every outcome is a small HTML page, with the headers of every page of the service (the portal's).
 * The URL holds the authorization code: the pages are not cached and send no Referer onwards.
 */
const page = (status: number, title: string, text: string) =>
  HttpServerResponse.text(
    `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body><h1>${title}</h1><p>${text}</p></body>
</html>
`,
    {
      status,
      contentType: "text/html; charset=utf-8",
      headers: { "cache-control": "no-store", ...securityHeaders }
    }
  )

const pageFor = (outcome: CallbackOutcome) => {
  switch (outcome._tag) {
    case "Connected":
      return page(200, "Drive connected", "Read-only access to your drive was granted. You can close this window.")
    case "InvalidState":
      return page(
        400,
        "Link expired or already used",
        "This connection link is not valid any more. Start the connection again from your application."
      )
    case "Refused":
      return page(
        400,
        "Drive not connected",
        "Access to the drive was not granted. Start the connection again from your application."
      )
    case "Unavailable":
      return page(
        503,
        "Drive provider unavailable",
        "The drive provider could not be reached. Start the connection again in a few minutes."
      )
  }
}

/** A parameter sent once; sent several times it is as good as absent (and the state then invalid). */
const single = (
  value: ReadonlyArray<string> | undefined
) => (value !== undefined && value.length === 1 ? value[0] : undefined)

/**
 * A flow started in the account portal goes back there (a path of this service, stored with the
 * state, never taken from the request), with the outcome for the portal to say in its own page.
 */
const backTo = (outcome: CallbackOutcome) =>
  outcome.returnTo !== undefined && outcome.returnTo.startsWith("/portal/")
    ? HttpServerResponse.redirect(`${outcome.returnTo}?connect=${outcome._tag.toLowerCase()}`, {
      status: 303,
      headers: { "cache-control": "no-store", ...securityHeaders }
    })
    : pageFor(outcome)

export const layer = HttpApiBuilder.group(Api, "oauth", (handlers) =>
  Effect.gen(function*() {
    const integrations = yield* Integrations
    return handlers.handle("callback", ({ query }) =>
      Effect.map(
        integrations.completeConnect({
          state: single(query.state),
          code: single(query.code),
          error: single(query.error)
        }),
        backTo
      ))
  }))
