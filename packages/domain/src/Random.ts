const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Uniform base62 from the platform CSPRNG (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  const buf = new Uint8Array(length * 2)
  while (out.length < length) {
    crypto.getRandomValues(buf)
    for (let i = 0; i < buf.length && out.length < length; i++) {
      const b = buf[i]
      if (b < 248) out += alphabet[b % 62]
    }
  }
  return out
}

export const base62Alphabet = alphabet
