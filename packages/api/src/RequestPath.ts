import type { HttpServerRequest } from "effect/http/HttpServerRequest"

/**
 * Paths match exactly as declared (contract §4.1): case-sensitive, no trailing or doubled slash
 * folded away (find-my-way's defaults fold all three). The router and the 405 probe use the same.
 */
export const routerConfig = { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false }

/** A request target's path: everything before its query. */
export const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/**
 * The one place the request is adjusted for the router, so that it matches paths exactly as declared
 * (contract §4.1):
 * - find-my-way ends a path at `;` or `#` (`/usage;x` would be `/usage`, and `/renders/ID;x` the
 *   render ID): both are taken as the characters they are (`%3B`, `%23`), so such a path is no
 *   endpoint's (404), and in an id they are part of the id, which its endpoint does not find (404);
 * - find-my-way refuses a path it cannot percent-decode as if it did not exist: a `%` that starts no
 *   valid escape is taken literally (`%25`), so a malformed path id reaches its endpoint, whose lookup
 *   answers its own 404 (contract §4.8: ids are opaque).
 * Any other request is passed as it came.
 */
export const routable = (request: HttpServerRequest): HttpServerRequest => {
  const path = pathOf(request.url)
  const fixed = path.split("/").map((segment) => {
    let decodable = segment
    try {
      decodeURIComponent(segment)
    } catch {
      decodable = segment.replace(/%/g, "%25")
    }
    return decodable.replace(/;/g, "%3B").replace(/#/g, "%23")
  }).join("/")
  return fixed === path ? request : request.modify({ url: fixed + request.url.slice(path.length) })
}
