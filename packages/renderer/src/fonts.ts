import { Config, Effect } from "effect"
import type { CaptionStyle } from "./CaptionSpec.ts"
import { addFontCoverage, CodePointSet } from "./font-cmap.ts"
import { fileReader, listFontFiles, resolvePackageFile as fontFile } from "./platform/files.ts"

/**
 * Caption fonts. The style fonts ship inside npm packages (OFL, via @expo-google-fonts, which are the
 * only npm packages with plain TTFs) and are handed to Pango per call with `fontfile`. Everything
 * they lack (emoji, Arabic, Hebrew, CJK, …) comes from fontconfig's fallback over the system fonts
 * that the install step puts in place (scripts/setup.mjs: Debian's Noto packages).
 */
interface CaptionFont {
  /** Pango font description without the size. */
  readonly description: string
  readonly file: string
}

const PLAYFAIR = "@expo-google-fonts/playfair-display"
const FONTS = {
  // SemiBold as the "regular" weight: the regular italic was hard to read on busy photos.
  quote: {
    description: "Playfair Display SemiBold Italic",
    file: fontFile(`${PLAYFAIR}/600SemiBold_Italic/PlayfairDisplay_600SemiBold_Italic.ttf`)
  },
  quoteBold: {
    description: "Playfair Display ExtraBold Italic",
    file: fontFile(`${PLAYFAIR}/800ExtraBold_Italic/PlayfairDisplay_800ExtraBold_Italic.ttf`)
  },
  // Anton has a single (already heavy) weight; meme `bold` thickens the outline instead.
  meme: { description: "Anton", file: fontFile("@expo-google-fonts/anton/400Regular/Anton_400Regular.ttf") }
} as const satisfies Record<string, CaptionFont>

export const fontFor = (style: CaptionStyle, bold: boolean): CaptionFont =>
  style === "meme" ? FONTS.meme : bold ? FONTS.quoteBold : FONTS.quote

/** Where fontconfig looks on Debian-like systems; P2V_FONT_DIRS (colon-separated) adds more. */
const SYSTEM_FONT_DIRS = ["/usr/share/fonts", "/usr/local/share/fonts"]

const fontDirs = Effect.gen(function*() {
  const extra = yield* Config.String("P2V_FONT_DIRS").pipe(Config.withDefault(""))
  const home = yield* Config.String("HOME").pipe(Config.withDefault(""))
  const user = home ? [`${home}/.local/share/fonts`, `${home}/.fonts`] : []
  return [...SYSTEM_FONT_DIRS, ...user, ...extra.split(":").filter((d) => d.length > 0)]
}).pipe(Effect.orElseSucceed(() => SYSTEM_FONT_DIRS))

interface FontCoverage {
  readonly set: CodePointSet
  readonly files: number
}

let coverageCache: FontCoverage | undefined

/**
 * Union of the code points every reachable font maps. Scanned once per process (~0.5 s for the ~300
 * Noto files) and kept: fonts are installed by the install step, not while the service runs.
 */
export const fontCoverage: Effect.Effect<FontCoverage> = Effect.suspend(() => {
  if (coverageCache) return Effect.succeed(coverageCache)
  return Effect.gen(function*() {
    const files = [...Object.values(FONTS).map((f) => f.file), ...(yield* listFontFiles(yield* fontDirs))]
    const set = new CodePointSet()
    yield* Effect.forEach(
      files,
      (file) => fileReader(file, (read) => addFontCoverage(read, set)).pipe(Effect.ignore),
      { concurrency: 8, discard: true }
    )
    coverageCache = { set, files: files.length }
    return coverageCache
  })
})

// Characters that never need a glyph of their own: whitespace, controls, format characters (ZWJ,
// bidi marks, tags) and variation selectors.
const NEEDS_NO_GLYPH = /^[\p{White_Space}\p{Cc}\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]$/u

/** Code points of `text` that no reachable font can draw (Pango would show hex boxes for them). */
export const missingGlyphs = (text: string, coverage: CodePointSet): ReadonlyArray<number> => {
  const missing = new Set<number>()
  for (const ch of text) {
    if (NEEDS_NO_GLYPH.test(ch)) continue
    const cp = ch.codePointAt(0)!
    if (!coverage.has(cp)) missing.add(cp)
  }
  return [...missing]
}

export const formatCodePoint = (cp: number): string => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`

/** A short, human summary of which scripts the installed fonts can draw (logged at start-up). */
export const describeCoverage = (c: FontCoverage): string => {
  const probes: ReadonlyArray<readonly [string, number]> = [
    ["emoji", 0x1f600],
    ["arabic", 0x0627],
    ["hebrew", 0x05d0],
    ["cjk", 0x4f60],
    ["kana", 0x3042],
    ["hangul", 0xac00],
    ["devanagari", 0x0915],
    ["thai", 0x0e01]
  ]
  const yes = probes.filter(([, cp]) => c.set.has(cp)).map(([n]) => n)
  const no = probes.filter(([, cp]) => !c.set.has(cp)).map(([n]) => n)
  return `${c.files} font files; scripts: ${yes.join(" ") || "latin only"}${
    no.length ? `; missing: ${no.join(" ")}` : ""
  }`
}
