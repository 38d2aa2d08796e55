import { OUTPUT } from "./output.ts"
import type { VideoProbe } from "./probe.ts"

/**
 * Pure: everything wrong with a probed render, or [] when it is deliverable. A file that passes is
 * H.264 High, yuv420p, BT.709-tagged, 1080x1920@30, the asked length within one frame, with AAC
 * audio and moov before mdat. Anything else fails the render instead of reaching a user.
 */
export const verifyProbe = (p: VideoProbe, expectedSeconds: number): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const frame = 1 / OUTPUT.fps
  const v = p.video
  if (!v) return ["no video stream"]
  if (v.codec !== "h264") problems.push(`codec ${v.codec}`)
  if (v.profile !== "High") problems.push(`profile ${v.profile}`)
  if (v.width !== OUTPUT.width || v.height !== OUTPUT.height) problems.push(`size ${v.width}x${v.height}`)
  if (v.pixFmt !== "yuv420p") problems.push(`pix_fmt ${v.pixFmt}`)
  if (Math.abs(v.fps - OUTPUT.fps) > 0.01) problems.push(`fps ${v.fps}`)
  if (v.colorSpace !== "bt709" || v.colorPrimaries !== "bt709" || v.colorTransfer !== "bt709") {
    problems.push(`colour tags ${v.colorSpace}/${v.colorPrimaries}/${v.colorTransfer}`)
  }
  if (!(Math.abs(p.durationSec - expectedSeconds) <= frame + 1e-6)) problems.push(`duration ${p.durationSec}`)
  if (Number.isFinite(v.frames) && v.frames !== Math.round(expectedSeconds * OUTPUT.fps)) {
    problems.push(`frames ${v.frames}`)
  }
  if (!p.audio || p.audio.codec !== "aac") problems.push("no AAC audio")
  if (!p.moovBeforeMdat) problems.push(`box order ${p.boxes.join(",")}`)
  return problems
}
