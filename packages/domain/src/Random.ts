const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * Bytes from the platform CSPRNG, drawn 4 KiB at a time (as Node's randomUUID does): a request id
 * per request would otherwise be a call into the CSPRNG per request. Each byte is used once.
 */
const pool = new Uint8Array(4096)
let used = pool.length

const nextByte = (): number => {
  if (used === pool.length) {
    crypto.getRandomValues(pool)
    used = 0
  }
  const b = pool[used]
  pool[used++] = 0
  return b
}

/** Uniform base62 from the platform CSPRNG (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const b = nextByte()
    if (b < 248) out += alphabet[b % 62]
  }
  return out
}

export const base62Alphabet = alphabet
