import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { uploadPhoto, usedOf } from "../renders/helpers.ts"
import { expectError } from "../support/limits.ts"
import { client } from "../support/service.ts"
import { type Target, target } from "./support.ts"

/**
 * Finding 5: a caption that can never be composited (a character no font has, text that cannot fit)
 * keeps 502 `caption_prep_failed`, but the message says the caption must change: the spec's advice for
 * that code is "retry with backoff", and a client following it would retry forever. Nothing is charged.
 */
let t: Target
let api: ReturnType<typeof client>
let mediaId: string

beforeAll(async () => {
  t = await target()
  api = client(t.service.baseUrl, t.main.secret)
  mediaId = (await uploadPhoto(api, "rocket.jpg", t.service)).id
})
afterAll(() => t?.close())

describe("a caption that cannot be composited", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["U+FFFF", "before \uFFFF after", /remove or replace those characters/],
    ["250 joined emoji", Array.from({ length: 250 }, () => "😀").join("\u200D"), /shorten the quote|remove or replace/]
  ]
  for (const [name, quote, advice] of cases) {
    it(`${name}: 502 caption_prep_failed saying to change the caption, not to retry, and nothing charged`, async () => {
      const before = await usedOf(api)
      const body = await expectError(
        await api.postJson("/api/v1/renders", { media_id: mediaId, quote }),
        502,
        "caption_prep_failed"
      )
      expect(body.error.message).toMatch(/cannot be composited as sent/)
      expect(body.error.message).toMatch(advice)
      expect(body.error.message).not.toMatch(/^retry|; retry\b|retry with backoff/i)
      expect(await usedOf(api)).toBe(before)
    })
  }
})
