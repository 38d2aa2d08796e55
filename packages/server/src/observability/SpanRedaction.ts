/**
 * What a request's server span may record of its URL and headers (docs/operations.md, "Traces").
 * Spans leave the process for a collector that more people read than the service's database, so
 * the rule is an allow-list, not a deny-list (`?api_key=`, `?amp;token=`, `?%20token=` and
 * `?token%00=` all slipped past a list of exact secret names):
 * - `url.query` keeps a parameter's value only when its name is one of the service's own
 *   non-secret parameters; any other value is `REDACTED`, and so is a name that is not a plain word;
 * - a value that looks like a secret is `REDACTED` whatever its name: an API key (`p2v_live_…`,
 *   `p2v_test_…`), or a long random-looking string (a sign-in token, an OAuth code, a bearer token);
 * - `url.path` keeps its segments but one that looks like a secret;
 * - a header value is cut to `maxHeaderLength` characters, with any API key in it redacted.
 */
export const redacted = "REDACTED"

/** The query parameters of the API and the portal whose values say nothing secret. */
const recordedParameters: ReadonlySet<string> = new Set([
  // the API (packages/domain/src/api/Api.ts)
  "limit",
  "cursor",
  "parent",
  "error",
  // the portal's pages
  "status",
  "before",
  "before_id",
  "batch",
  "media_id",
  "revoked",
  "archived",
  "label",
  "folder",
  "trail",
  "connect"
])

/** A name recorded as it is (its value redacted): short, and nothing but a plain word. */
const plainName = /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/

const apiKey = /p2v_(?:live|test)_/i
/** The service's own ids (`rnd_…`, `imp_…`, `ws_…`, `key_…`, `req_…`): random, but not secrets. */
const ownId = /^(?:rnd|imp|ws|key|req)_[0-9A-Za-z]{16,64}$/
/** A run of token characters long enough to be a credential (base64url tokens, JWT parts, hex keys). */
const tokenRun = /[A-Za-z0-9_+/=~-]{20,}/g

const randomLooking = (run: string): boolean => {
  if (/^[0-9a-f]+$/i.test(run)) return run.length >= 32
  // letters of both cases mixed with digits (or, from 32 characters, without: a 43-character
  // base64url token has no digit once in 1,500): what a random token is, and words and numbers are not
  return /[a-z]/.test(run) && /[A-Z]/.test(run) && (/[0-9]/.test(run) || run.length >= 32)
}

/** Whether a (decoded) value may be a credential. */
const looksSecret = (value: string): boolean => {
  if (apiKey.test(value)) return true
  if (ownId.test(value)) return false
  for (const run of value.match(tokenRun) ?? []) {
    if (randomLooking(run)) return true
  }
  return false
}

const encode = (s: string) => encodeURIComponent(s)

/** The query as the span shows it (without its `?`). */
export const redactedQuery = (query: string): string => {
  const parts: Array<string> = []
  for (const [name, value] of new URLSearchParams(query)) {
    const recorded = recordedParameters.has(name)
    const shownName = recorded || (plainName.test(name) && !looksSecret(name)) ? name : redacted
    const shownValue = recorded && !looksSecret(value) ? value : redacted
    parts.push(`${encode(shownName)}=${shownValue === redacted ? redacted : encode(shownValue)}`)
  }
  return parts.join("&")
}

const decoded = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The path as the span shows it: a segment that looks like a secret is `REDACTED`. */
export const redactedPath = (path: string): string =>
  path.split("/").map((segment) => (looksSecret(decoded(segment)) ? redacted : segment)).join("/")

/** Header values longer than this are cut, so a client's oversized header (a 12,000-character User-Agent) cannot bloat a span. */
const maxHeaderLength = 256

/** A header value as a span records it: at most `maxHeaderLength` characters, API keys redacted. */
export const headerValue = (value: string): string =>
  value.slice(0, maxHeaderLength * 2).replace(/p2v_(?:live|test)_[A-Za-z0-9]*/gi, redacted).slice(0, maxHeaderLength)
