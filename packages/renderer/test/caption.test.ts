import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import sharp from "sharp"
import { addQuotes, splitMeme } from "../src/caption-layout.ts"
import { prepareCaption } from "../src/caption.ts"
import { type CaptionSpec, CaptionStyle, TextColor, TextSize } from "../src/CaptionSpec.ts"
import { planFraming } from "../src/framing.ts"
import { SAFE_BOX } from "../src/output.ts"
import { alphaBox } from "./support/fixtures.ts"

const insideSafeZone = (b: { left: number; top: number; right: number; bottom: number }) => {
  expect(b.left).toBeGreaterThanOrEqual(SAFE_BOX.left)
  expect(b.top).toBeGreaterThanOrEqual(SAFE_BOX.top)
  expect(b.right).toBeLessThanOrEqual(SAFE_BOX.right)
  expect(b.bottom).toBeLessThanOrEqual(SAFE_BOX.bottom)
}

const overlayBox = (spec: CaptionSpec, photo?: { width: number; height: number }) =>
  Effect.gen(function*() {
    const png = yield* prepareCaption(spec, photo)
    expect(png).not.toBeNull()
    const box = yield* Effect.promise(() => alphaBox(png!))
    expect(box).toBeDefined()
    expect([box!.width, box!.height]).toEqual([1080, 1920])
    return box!
  })

describe("layout rules", () => {
  it("adds typographic quotes only when absent", () => {
    expect(addQuotes("Hello")).toBe("“Hello”")
    expect(addQuotes("\"Hello\"")).toBe("“Hello”")
    expect(addQuotes("“Hello”")).toBe("“Hello”")
    expect(addQuotes("«Bonjour»")).toBe("«Bonjour»")
  })
  it("splits memes top/bottom at a line break or near the middle", () => {
    expect(splitMeme("ONE DOES NOT SIMPLY\nWALK INTO MORDOR")).toEqual(["ONE DOES NOT SIMPLY", "WALK INTO MORDOR"])
    expect(splitMeme("WHEN THE CODE | FINALLY WORKS")).toEqual(["WHEN THE CODE", "FINALLY WORKS"])
    expect(splitMeme("ONE DOES NOT SIMPLY WALK INTO MORDOR")).toEqual(["ONE DOES NOT SIMPLY", "WALK INTO MORDOR"])
    expect(splitMeme("NOPE")).toEqual(["NOPE", ""])
  })
})

describe("prepareCaption", () => {
  it.effect("an empty or absent quote is a deliberate no-caption render", () =>
    Effect.gen(function*() {
      expect(yield* prepareCaption({ quote: "" })).toBeNull()
      expect(yield* prepareCaption({})).toBeNull()
      expect(yield* prepareCaption({ quote: "   " })).toBeNull()
    }))

  it.effect(
    "every style × colour × size × bold × outline stays inside the safe zone",
    () =>
      Effect.gen(function*() {
        const specs: Array<CaptionSpec> = []
        for (const caption_style of CaptionStyle.literals) {
          for (const text_color of TextColor.literals) {
            for (const text_size of TextSize.literals) {
              for (const bold of [false, true]) {
                for (const bold_outline of [false, true]) {
                  specs.push({
                    quote: "Stay close to anything that makes you glad you are alive",
                    caption_style,
                    text_color,
                    text_size,
                    bold,
                    bold_outline
                  })
                }
              }
            }
          }
        }
        expect(specs.length).toBe(120)
        const sizes = new Map<string, number>()
        yield* Effect.forEach(
          specs,
          (spec) =>
            overlayBox(spec).pipe(
              Effect.tap((b) =>
                Effect.sync(() => {
                  insideSafeZone(b)
                  sizes.set(
                    `${spec.caption_style}/${spec.text_size}/${spec.bold}/${spec.bold_outline}/${spec.text_color}`,
                    b.bottom - b.top
                  )
                })
              )
            ),
          { concurrency: 2, discard: true }
        )
        // The size steps are real steps: larger text makes a taller caption.
        expect(sizes.get("quote/larger/false/false/white")!).toBeGreaterThan(sizes.get("quote/tiny/false/false/white")!)
      }),
    120_000
  )

  const hard: Record<string, string> = {
    "500 characters": "Every morning we are born again. What we do today is what matters most. ".repeat(7).slice(
      0,
      500
    ),
    "colour emoji (ZWJ, skin tone)": "Sunday mood ☀️🌿😌✨👩🏽‍💻👨‍👩‍👧‍👦 🇯🇵",
    "Arabic": "الحياة قصيرة، فابتسم ما دمت تملك أسنانك",
    "Hebrew": "החיים הם מה שקורה לך בזמן שאתה עסוק בתוכניות אחרות",
    "mixed BiDi": "Love is مرحبا and שלום in every language",
    "CJK": "千里之行，始于足下。七転び八起き。천 리 길도 한 걸음부터",
    "60-character word": "Pneumonoultramicroscopicsilicovolcanoconiosis" + "Supercalifragilistic",
    "URL": "https://example.com/a/very/long/path/that/never/breaks/at/a/space/anywhere/at/all"
  }

  for (const [name, quote] of Object.entries(hard)) {
    for (const caption_style of CaptionStyle.literals) {
      it.effect(`${name} (${caption_style}) renders inside the safe zone`, () =>
        Effect.gen(function*() {
          insideSafeZone(yield* overlayBox({ quote, caption_style, text_size: "larger", bold_outline: true }))
          // and in the band of a contain-blur framing
          insideSafeZone(yield* overlayBox({ quote, caption_style, text_size: "larger" }, { width: 640, height: 427 }))
        }))
    }
  }

  it.effect("a quote with a landscape photo sits in the band below the photo", () =>
    Effect.gen(function*() {
      const photo = { width: 640, height: 427 }
      const band = planFraming(photo, undefined, true).captionBox
      const b = yield* overlayBox({ quote: "A quiet morning by the lake" }, photo)
      expect(b.top).toBeGreaterThanOrEqual(band.top)
    }))

  it.effect("a meme puts text at the top and the bottom", () =>
    Effect.gen(function*() {
      const b = yield* overlayBox({ quote: "one does not simply walk into mordor", caption_style: "meme" })
      expect(b.top).toBeLessThan(SAFE_BOX.top + 150)
      expect(b.bottom).toBeGreaterThan(SAFE_BOX.bottom - 150)
    }))

  it.effect("a script no installed font can draw fails clearly instead of drawing boxes", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(prepareCaption({ quote: "hello \u{E000}\u{F0000} world" }))
      expect(Exit.isFailure(exit)).toBe(true)
      const err = yield* Effect.flip(prepareCaption({ quote: "hello \u{E000} world" }))
      expect(err._tag).toBe("CaptionPrepError")
      expect(err.reason).toBe("unsupported_script")
      expect(err.message).toContain("U+E000")
    }))

  /**
   * The overlay composited over pure white (the near-white sky case): the pixels 2 px off each glyph
   * edge must be dark enough for white text to read. With only the soft drop shadow their median was
   * ~197 of 255 (contrast ~1.3:1 against the text); the halo brings it to ~74.
   */
  it.effect("white quote text stays readable over a white photo", () =>
    Effect.gen(function*() {
      for (const text_size of ["tiny", "default"] as const) {
        const png = yield* prepareCaption({ quote: "Where the mountains meet the water.", text_size })
        const { data, info } = yield* Effect.promise(() =>
          sharp(png!).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
        )
        const W = info.width
        const isText = (i: number) => data[i * 4] >= 250 && data[i * 4 + 3] === 255
        const overWhite = (i: number) => 255 - data[i * 4 + 3] + (data[i * 4] * data[i * 4 + 3]) / 255
        const ring: Array<number> = []
        for (let y = 2; y < info.height - 2; y++) {
          for (let x = 2; x < W - 2; x++) {
            if (!isText(y * W + x)) continue
            for (const j of [(y - 2) * W + x, (y + 2) * W + x, y * W + x - 2, y * W + x + 2]) {
              if (data[j * 4] < 128 || data[j * 4 + 3] === 0) ring.push(overWhite(j))
            }
          }
        }
        ring.sort((a, b) => a - b)
        expect(ring.length).toBeGreaterThan(500)
        expect(ring[Math.floor(ring.length / 2)]).toBeLessThan(128)
      }
    }))

  it.effect("is deterministic", () =>
    Effect.gen(function*() {
      const a = yield* prepareCaption({ quote: "Same in, same out 😌", bold_outline: true })
      const b = yield* prepareCaption({ quote: "Same in, same out 😌", bold_outline: true })
      expect(Buffer.from(a!).equals(Buffer.from(b!))).toBe(true)
    }))
})
