/**
 * The client's version (its package.json's; test/client/package.test.ts checks they agree) and the
 * version of the API it speaks (the definition's `OpenApi.Version`, which /openapi.json serves).
 * A module of its own so that `p2v --version` reads it without loading the client.
 */
export const client = "0.1.0"
export const api = "v1"

/** What `p2v --version` prints: the client's version first, as before, then the API's. */
export const text = `${client} (Pic-to-Video Rendering API ${api})`
