/**
 * Top-level MP4 box order, read from box headers only. `+faststart` must put `moov` before `mdat`
 * (players stream from the first byte; Meta's upload spec asks for it).
 */
import type { ReadAt } from "./byte-reader.ts"

const u32 = (b: Uint8Array, o: number) => ((b[o] << 24) >>> 0) + ((b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3])

export const topLevelBoxes = async (read: ReadAt, fileSize: number, max = 32): Promise<ReadonlyArray<string>> => {
  const boxes: Array<string> = []
  let offset = 0
  while (offset + 8 <= fileSize && boxes.length < max) {
    const h = await read(offset, 16)
    if (h.length < 8) break
    let size = u32(h, 0)
    const type = String.fromCharCode(h[4], h[5], h[6], h[7])
    if (size === 1) size = u32(h, 8) * 2 ** 32 + u32(h, 12)
    else if (size === 0) size = fileSize - offset
    if (size < 8) break
    boxes.push(type)
    offset += size
  }
  return boxes
}

export const moovBeforeMdat = (boxes: ReadonlyArray<string>): boolean => {
  const moov = boxes.indexOf("moov")
  const mdat = boxes.indexOf("mdat")
  return moov >= 0 && mdat >= 0 && moov < mdat
}
