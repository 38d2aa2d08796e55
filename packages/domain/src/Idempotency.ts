import { createHash } from "node:crypto"
import * as JsonBody from "./JsonBody.ts"

/**
 * Idempotency (spec POST /renders, contract §4.6 and §6). Keys are 1–255 printable ASCII
 * characters; records are scoped to the API key and endpoint and live 24 hours from first use.
 */
export const recordTtlMillis = 24 * 60 * 60 * 1000

export const isValidKey = (key: string): boolean => /^[\x20-\x7e]{1,255}$/.test(key)

/** Canonical JSON: object keys sorted at every depth, no insignificant whitespace. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value).sort().map((k) =>
      `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`
    )
    return `{${entries.join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * SHA-256 of the canonical JSON body when it parses, else of the raw bytes, so 400s replay too. A body
 * nested past the depth bound (answered 422) is fingerprinted by its bytes: `canonicalJson` recurses.
 */
export const fingerprint = (raw: Uint8Array): string => {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(raw)
    return fingerprintParsed(text, JsonBody.parse(text))
  } catch {
    // not UTF-8: the raw bytes are the fingerprint
    return createHash("sha256").update(raw).digest("hex")
  }
}

/** The same fingerprint of a body already read as text and parsed (the API reads a body once). */
export const fingerprintParsed = (text: string, parsed: JsonBody.Parsed): string =>
  createHash("sha256").update(parsed._tag === "Ok" ? canonicalJson(parsed.value) : text).digest("hex")

/**
 * Which outcomes are remembered and replayed (contract §6: every outcome the create handler decides;
 * spec: "the same key replays the same error"). A 409 that reaches here is the import's
 * `integration_not_connected`: the idempotency 409s are answered before a record is begun.
 */
export const isRemembered = (status: number): boolean => [200, 201, 202, 400, 404, 402, 409, 422, 502].includes(status)
