/**
 * Which code points a font file maps (its `cmap`), read straight from the sfnt tables. Used to refuse a
 * caption that Pango would draw as hex boxes. Handles TTF/OTF and collections (TTC/OTC), cmap
 * formats 4 and 12 (every font we ship or install has one of them). Pure: works on byte readers.
 */
export type { ReadAt } from "./byte-reader.ts"
import type { ReadAt } from "./byte-reader.ts"

const u16 = (b: Uint8Array, o: number) => (b[o] << 8) | b[o + 1]
const u32 = (b: Uint8Array, o: number) => ((b[o] << 24) >>> 0) + ((b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3])
const tag = (b: Uint8Array, o: number) => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3])

/** A set of code points as a bitmap over the whole Unicode range (139 KB). */
export class CodePointSet {
  readonly bits = new Uint8Array(0x110000 >> 3)
  add(cp: number): void {
    this.bits[cp >> 3] |= 1 << (cp & 7)
  }
  addRange(first: number, last: number): void {
    for (let cp = first; cp <= Math.min(last, 0x10ffff); cp++) this.add(cp)
  }
  has(cp: number): boolean {
    return (this.bits[cp >> 3] & (1 << (cp & 7))) !== 0
  }
}

const faceOffsets = async (read: ReadAt): Promise<ReadonlyArray<number>> => {
  const head = await read(0, 12)
  if (head.length < 12) return []
  if (tag(head, 0) !== "ttcf") return [0]
  const n = u32(head, 8)
  const table = await read(12, 4 * Math.min(n, 64))
  return Array.from({ length: table.length / 4 }, (_, i) => u32(table, i * 4))
}

const addFace = async (read: ReadAt, faceOffset: number, into: CodePointSet): Promise<void> => {
  const dir = await read(faceOffset, 12)
  const numTables = u16(dir, 4)
  const records = await read(faceOffset + 12, numTables * 16)
  let cmapOffset = -1
  let cmapLength = 0
  for (let i = 0; i < numTables; i++) {
    if (tag(records, i * 16) === "cmap") {
      cmapOffset = u32(records, i * 16 + 8)
      cmapLength = u32(records, i * 16 + 12)
    }
  }
  if (cmapOffset < 0) return
  const cmap = await read(cmapOffset, cmapLength)
  const n = u16(cmap, 2)
  // Prefer the full-repertoire subtable (format 12) and fall back to the BMP one (format 4).
  let best: { offset: number; format: number } | undefined
  for (let i = 0; i < n; i++) {
    const platform = u16(cmap, 4 + i * 8)
    const encoding = u16(cmap, 6 + i * 8)
    const offset = u32(cmap, 8 + i * 8)
    if (offset + 2 > cmap.length) continue
    const format = u16(cmap, offset)
    const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10))
    if (!unicode || (format !== 4 && format !== 12)) continue
    if (!best || (format === 12 && best.format !== 12)) best = { offset, format }
  }
  if (!best) return
  const o = best.offset
  if (best.format === 12) {
    const groups = u32(cmap, o + 12)
    for (let g = 0; g < groups; g++) {
      const p = o + 16 + g * 12
      if (u32(cmap, p + 8) !== 0 || u32(cmap, p) !== u32(cmap, p + 4)) into.addRange(u32(cmap, p), u32(cmap, p + 4))
    }
    return
  }
  const segX2 = u16(cmap, o + 6)
  const ends = o + 14
  const starts = ends + segX2 + 2
  const deltas = starts + segX2
  const rangeOffsets = deltas + segX2
  for (let s = 0; s < segX2 / 2; s++) {
    const end = u16(cmap, ends + s * 2)
    const start = u16(cmap, starts + s * 2)
    const delta = u16(cmap, deltas + s * 2)
    const ro = u16(cmap, rangeOffsets + s * 2)
    for (let cp = start; cp <= end && cp !== 0xffff; cp++) {
      let glyph: number
      if (ro === 0) glyph = (cp + delta) & 0xffff
      else {
        const at = rangeOffsets + s * 2 + ro + (cp - start) * 2
        glyph = at + 1 < cmap.length ? u16(cmap, at) : 0
        if (glyph !== 0) glyph = (glyph + delta) & 0xffff
      }
      if (glyph !== 0) into.add(cp)
    }
  }
}

/** Adds every code point the font (or each face of the collection) maps to a glyph. */
export const addFontCoverage = async (read: ReadAt, into: CodePointSet): Promise<void> => {
  for (const offset of await faceOffsets(read)) await addFace(read, offset, into)
}
