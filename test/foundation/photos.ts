import { crc32 } from "@pic2video/domain/Crc32"
import { deflateSync } from "node:zlib"
import sharp from "sharp"

/**
 * Photos built to order for the foundation suite (no vitest import, so the bench can use it too):
 * exact byte sizes, EXIF orientation with GPS, animated GIF, non-images.
 */

/** 15 MB as contract §5 defines it. */
export const maxUploadBytes = 15 * 1024 * 1024

export const solid = (width: number, height: number, format: "png" | "jpeg" | "webp" | "gif" = "png") =>
  sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } })[format]().toBuffer()

/** A PNG chunk; `prVt` is ancillary, private and safe to copy, so decoders skip it. */
const pngChunk = (type: string, data: Uint8Array) => {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, "latin1")
  Buffer.from(data).copy(out, 8)
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}

/**
 * An animated PNG (APNG): a PNG whose `acTL` chunk, before the image data, announces animation
 * (two frames: the default image and one `fcTL`+`fdAT` frame after it). Decoders without APNG
 * support show the default image, which is what a render uses.
 */
export const animatedPng = async (): Promise<Buffer> => {
  const width = 32, height = 24
  const png = await sharp({ create: { width, height, channels: 3, background: { r: 250, g: 80, b: 20 } } }).png()
    .toBuffer()
  const afterIhdr = 8 + 25
  const u32 = (...values: Array<number>) => {
    const b = Buffer.alloc(values.length * 4)
    values.forEach((v, i) => b.writeUInt32BE(v, i * 4))
    return b
  }
  const fcTL = (sequence: number) =>
    pngChunk("fcTL", Buffer.concat([u32(sequence, width, height, 0, 0), Buffer.from([0, 1, 0, 10, 0, 0])]))
  const raw = Buffer.alloc((width * 3 + 1) * height, 0x40)
  for (let y = 0; y < height; y++) raw[y * (width * 3 + 1)] = 0
  const frame = Buffer.concat([u32(2), deflateSync(raw)])
  const iend = png.length - 12
  return Buffer.concat([
    png.subarray(0, afterIhdr),
    pngChunk("acTL", u32(2, 0)),
    fcTL(0),
    png.subarray(afterIhdr, iend),
    fcTL(1),
    pngChunk("fdAT", frame),
    png.subarray(iend)
  ])
}

/**
 * A valid PNG of exactly `size` bytes: a small image padded with private ancillary chunks inserted
 * before IEND (each at most 1 MiB, so no decoder's chunk limit is hit).
 */
export const pngOfSize = async (size: number): Promise<Buffer> => {
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 200, b: 90 } } })
    .png().toBuffer()
  const iend = png.length - 12
  let missing = size - png.length
  if (missing < 0) throw new Error(`a PNG cannot be ${size} bytes`)
  const chunks: Array<Buffer> = []
  const step = 1024 * 1024
  while (missing > 0) {
    // every chunk costs 12 bytes of framing; a remainder under 12 is folded into the previous chunk
    let data = Math.min(step, missing - 12)
    if (missing - (data + 12) > 0 && missing - (data + 12) < 12) data -= 12
    if (data < 0) throw new Error(`cannot pad ${missing} bytes`)
    chunks.push(pngChunk("prVt", new Uint8Array(data).fill(0x61)))
    missing -= data + 12
  }
  const out = Buffer.concat([png.subarray(0, iend), ...chunks, png.subarray(iend)])
  if (out.length !== size) throw new Error(`built ${out.length} bytes, wanted ${size}`)
  return out
}

/**
 * A JPEG whose stored orientation is EXIF 6 (display rotated 90° clockwise), carrying a GPS IFD and
 * a recognisable camera make; its stored pixels are `width`×`height`.
 */
export const exifRotatedJpegWithGps = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .withMetadata({ orientation: 6 })
    .withExif({
      IFD0: { Make: "FoundationTestCam", Model: "GPS-Leak-Probe" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 0/1", GPSLongitudeRef: "W", GPSLongitude: "0/1 7/1 0/1" }
    })
    .jpeg()
    .toBuffer()

/** True when the bytes hold a TIFF tag id in either byte order (e.g. 0x8825, the GPS IFD pointer). */
export const hasTiffTag = (exif: Uint8Array, tag: number) => {
  const b = Buffer.from(exif)
  return b.includes(Buffer.from([tag & 0xff, tag >> 8])) || b.includes(Buffer.from([tag >> 8, tag & 0xff]))
}

/** A two-frame animated GIF of `width`×`height` frames. */
export const animatedGif = async (width: number, height: number) => {
  const frame = (r: number, b: number) =>
    sharp({ create: { width, height, channels: 3, background: { r, g: 0, b } } }).png().toBuffer()
  return sharp([await frame(255, 0), await frame(0, 255)], { join: { animated: true } }).gif({ loop: 0 })
    .toBuffer()
}

export const svg = new TextEncoder().encode(
  `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`
)

export const text = new TextEncoder().encode("this is plain text, not a photo\n".repeat(20))

/**
 * A decompression bomb: a valid 1-bit greyscale PNG of `width`×`height` (e.g. 20000×20000 = 400 MP)
 * whose all-zero pixel data deflates to a few tens of kilobytes.
 */
export const pngBomb = (width: number, height: number) => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 1 // bit depth
  ihdr[9] = 0 // greyscale
  const row = 1 + Math.ceil(width / 8) // filter byte + packed pixels
  const raw = Buffer.alloc(row * height) // zeros: filter 0, black pixels
  const idat = deflateSync(raw, { level: 9 })
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", idat),
    pngChunk("IEND", new Uint8Array(0))
  ])
}

/** A two-frame animated WebP. */
export const animatedWebp = async (width: number, height: number) => {
  const frame = (r: number, b: number) =>
    sharp({ create: { width, height, channels: 3, background: { r, g: 0, b } } }).png().toBuffer()
  return sharp([await frame(255, 0), await frame(0, 255)], { join: { animated: true } }).webp({ loop: 0 })
    .toBuffer()
}
