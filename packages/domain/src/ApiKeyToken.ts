import { crc32 as crc32Bytes } from "./Crc32.ts"
import { base62Alphabet, randomBase62 } from "./Random.ts"

/**
 * API key secrets: `p2v_live_` + 16 base62 id characters + 32 base62 secret characters (190 bits)
 * + a 6-character base62 CRC32 checksum. The id part names the stored key row (`key_<id>`), so a
 * lookup needs no scan; the checksum lets us refuse typos and truncated keys without a query.
 */
export const keyPrefix = "p2v_live_"
const idLength = 16
const secretLength = 32
const checksumLength = 6
export const tokenLength = keyPrefix.length + idLength + secretLength + checksumLength

/** CRC-32 of the text's UTF-8 bytes. */
export const crc32 = (text: string): number => crc32Bytes(new TextEncoder().encode(text))

const toBase62 = (value: number, width: number): string => {
  let out = ""
  let v = value
  for (let i = 0; i < width; i++) {
    out = base62Alphabet[v % 62] + out
    v = Math.floor(v / 62)
  }
  return out
}

export const checksumOf = (body: string): string => toBase62(crc32(body), checksumLength)

interface KeyToken {
  /** the stored key's id, `key_<idPart>` */
  readonly keyId: string
  /** the high-entropy part; only a keyed hash of it is stored */
  readonly secret: string
}

export const mintToken = (idPart: string = randomBase62(idLength)): { readonly token: string } & KeyToken => {
  const secret = randomBase62(secretLength)
  const body = keyPrefix + idPart + secret
  return { token: body + checksumOf(body), keyId: `key_${idPart}`, secret }
}

const shape = new RegExp(`^${keyPrefix}[0-9A-Za-z]{${idLength + secretLength + checksumLength}}$`)

/** Parses a presented bearer token; None-like `undefined` for anything malformed or failing its checksum. */
export const parseToken = (token: string): KeyToken | undefined => {
  if (token.length !== tokenLength || !shape.test(token)) return undefined
  const body = token.slice(0, tokenLength - checksumLength)
  if (checksumOf(body) !== token.slice(tokenLength - checksumLength)) return undefined
  const idPart = body.slice(keyPrefix.length, keyPrefix.length + idLength)
  return { keyId: `key_${idPart}`, secret: body.slice(keyPrefix.length + idLength) }
}

export const keyIdPart = (keyId: string): string | undefined =>
  /^key_[0-9A-Za-z]{16}$/.test(keyId) ? keyId.slice(4) : undefined
