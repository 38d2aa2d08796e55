// equirectangular (8-bit sRGB PNG) -> rectilinear view: node hdri-view.mjs in.png out.jpg yawDeg pitchDeg fovDeg W H
import sharp from "sharp"
const [inp, out, yawD, pitchD, fovD, Ws, Hs] = process.argv.slice(2)
const { data, info } = await sharp(inp).removeAlpha().raw().toBuffer({ resolveWithObject: true })
const W = +Ws, H = +Hs, yaw = (+yawD * Math.PI) / 180, pitch = (+pitchD * Math.PI) / 180
const f = W / 2 / Math.tan(((+fovD * Math.PI) / 180) / 2)
const o = Buffer.alloc(W * H * 3)
const sw = info.width, sh = info.height
const px = (x, y, c) => data[((Math.min(sh - 1, Math.max(0, y)) * sw + ((x % sw) + sw) % sw) * 3) + c]
for (let v = 0; v < H; v++) for (let u = 0; u < W; u++) {
  let x = u - W / 2 + 0.5, y = v - H / 2 + 0.5, z = f
  // pitch (around x axis; positive looks up)
  const y1 = y * Math.cos(pitch) - z * Math.sin(pitch), z1 = y * Math.sin(pitch) + z * Math.cos(pitch)
  const lon = Math.atan2(x, z1) + yaw, lat = Math.atan2(-y1, Math.hypot(x, z1))
  const sx = (lon / (2 * Math.PI) + 0.5) * sw - 0.5, sy = (0.5 - lat / Math.PI) * sh - 0.5
  const x0 = Math.floor(sx), y0 = Math.floor(sy), fx = sx - x0, fy = sy - y0
  for (let c = 0; c < 3; c++) {
    const a = px(x0, y0, c) * (1 - fx) + px(x0 + 1, y0, c) * fx
    const b = px(x0, y0 + 1, c) * (1 - fx) + px(x0 + 1, y0 + 1, c) * fx
    o[(v * W + u) * 3 + c] = Math.round(a * (1 - fy) + b * fy)
  }
}
await sharp(o, { raw: { width: W, height: H, channels: 3 } }).jpeg({ quality: 85 }).toFile(out)
