import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_ENCODE, encodeCommand, filterGraph, toArgv, x264Params } from "../src/ffmpeg-args.ts"
import { moovBeforeMdat, topLevelBoxes } from "../src/mp4-atoms.ts"
import type { VideoProbe } from "../src/probe.ts"
import { verifyProbe } from "../src/verify.ts"

const argAfter = (argv: ReadonlyArray<string>, flag: string) => argv[argv.indexOf(flag) + 1]

describe("ffmpeg args", () => {
  const cmd = encodeCommand({
    frames: 240,
    overlayPath: "/tmp/o.png",
    outPath: "/tmp/out.mp4",
    settings: DEFAULT_ENCODE
  })
  const argv = toArgv(cmd)

  it("reads rgb24 frames on stdin at 1080x1920@30, then the overlay; the silence comes from the graph", () => {
    expect(cmd.inputs.map((i) => i.source)).toEqual(["pipe:0", "/tmp/o.png"])
    expect(cmd.inputs[0].options).toEqual(["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "1080x1920", "-r", "30"])
    expect(argAfter(argv, "-map")).toBe("[v]")
    expect(argv.filter((_, i) => argv[i - 1] === "-map")).toEqual(["[v]", "[a]"])
    expect(cmd.complexFilter.endsWith(";anullsrc=r=48000:cl=stereo[a]")).toBe(true)
  })

  it("burns the caption in RGB, then converts once with the BT.709 matrix to limited range", () => {
    const g = filterGraph(true)
    expect(g.indexOf("overlay")).toBeLessThan(g.indexOf("out_color_matrix=bt709"))
    expect(g).toContain("out_range=tv")
    expect(g).toContain("format=yuv420p[v];")
    expect(filterGraph(false)).not.toContain("overlay")
    expect(encodeCommand({ frames: 30, overlayPath: undefined, outPath: "o.mp4", settings: DEFAULT_ENCODE }).inputs)
      .toHaveLength(1)
  })

  it("encodes H.264 High@4.0 yuv420p, tagged BT.709, CRF + maxrate, 2 s GOP, AAC 48 kHz stereo, faststart", () => {
    expect(argAfter(argv, "-c:v")).toBe("libx264")
    expect(argAfter(argv, "-profile:v")).toBe("high")
    expect(argAfter(argv, "-level:v")).toBe("4.0")
    expect(argAfter(argv, "-pix_fmt")).toBe("rgb24") // the input's
    expect(argv.slice(argv.indexOf("-filter_complex"))).toContain("yuv420p")
    expect(argAfter(argv, "-crf")).toBe("20")
    expect(argAfter(argv, "-maxrate")).toBe("12000k")
    expect(argAfter(argv, "-bufsize")).toBe("24000k")
    expect(argAfter(argv, "-g")).toBe("60")
    for (const f of ["-color_primaries", "-color_trc", "-colorspace"]) expect(argAfter(argv, f)).toBe("bt709")
    expect(argAfter(argv, "-color_range")).toBe("tv")
    expect(argAfter(argv, "-c:a")).toBe("aac")
    expect(argAfter(argv, "-ar")).toBe("48000")
    expect(argAfter(argv, "-ac")).toBe("2")
    expect(argAfter(argv, "-movflags")).toBe("+faststart")
    expect(argAfter(argv, "-frames:v")).toBe("240")
    expect(argAfter(argv, "-threads")).toBe(String(DEFAULT_ENCODE.threads))
    expect(argv.at(-1)).toBe("/tmp/out.mp4")
  })

  it("holds few frames in x264: one thread by default, more as slices; B-frames are not references", () => {
    expect(DEFAULT_ENCODE.threads).toBe(1)
    expect(argAfter(argv, "-x264-params")).toBe("b-pyramid=none")
    const two = toArgv(
      encodeCommand({
        frames: 240,
        overlayPath: undefined,
        outPath: "o.mp4",
        settings: { ...DEFAULT_ENCODE, threads: 2 }
      })
    )
    expect(argAfter(two, "-threads")).toBe("2")
    expect(argAfter(two, "-x264-params")).toBe("b-pyramid=none:sliced-threads=1")
    expect(x264Params({ ...DEFAULT_ENCODE, threads: 4 })).toContain("sliced-threads=1")
  })
})

describe("ffmpeg args for the renderer's yuv420p frames", () => {
  const cmd = encodeCommand({
    frames: 240,
    overlayPath: undefined,
    outPath: "/tmp/out.mp4",
    settings: DEFAULT_ENCODE,
    inputPixFmt: "yuv420p"
  })
  const argv = toArgv(cmd)

  it("reads yuv420p on stdin (caption already in it) as its only input, converts nothing, and still tags BT.709 limited range", () => {
    // One input: ffmpeg reads it in step with the encoder, no input thread queueing raw frames ahead.
    expect(cmd.inputs.map((i) => i.source)).toEqual(["pipe:0"])
    expect(cmd.inputs[0].options).toEqual(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "1080x1920", "-r", "30"])
    expect(cmd.complexFilter).toBe("[0:v]null[v];anullsrc=r=48000:cl=stereo[a]")
    expect(argv.filter((_, i) => argv[i - 1] === "-map")).toEqual(["[v]", "[a]"])
    for (const f of ["-color_primaries", "-color_trc", "-colorspace"]) expect(argAfter(argv, f)).toBe("bt709")
    expect(argAfter(argv, "-color_range")).toBe("tv")
    expect(argv.filter((a) => a === "-pix_fmt")).toHaveLength(2)
    expect(argv.at(-2)).toBe("mp4")
  })
})

describe("mp4 box order", () => {
  const box = (type: string, size: number) => {
    const b = new Uint8Array(size)
    new DataView(b.buffer).setUint32(0, size)
    b.set([...type].map((c) => c.charCodeAt(0)), 4)
    return b
  }
  const file = (...boxes: Array<Uint8Array>) => {
    const all = new Uint8Array(boxes.reduce((n, b) => n + b.length, 0))
    let o = 0
    for (const b of boxes) {
      all.set(b, o)
      o += b.length
    }
    return { read: async (off: number, len: number) => all.subarray(off, off + len), size: all.length }
  }
  it("reads top-level boxes and tells whether moov precedes mdat", async () => {
    const fast = file(box("ftyp", 32), box("moov", 100), box("mdat", 500))
    const slow = file(box("ftyp", 32), box("mdat", 500), box("moov", 100))
    expect(await topLevelBoxes(fast.read, fast.size)).toEqual(["ftyp", "moov", "mdat"])
    expect(moovBeforeMdat(await topLevelBoxes(fast.read, fast.size))).toBe(true)
    expect(moovBeforeMdat(await topLevelBoxes(slow.read, slow.size))).toBe(false)
  })
})

describe("verifyProbe", () => {
  const good: VideoProbe = {
    durationSec: 8,
    byteSize: 1,
    video: {
      codec: "h264",
      profile: "High",
      level: 40,
      width: 1080,
      height: 1920,
      pixFmt: "yuv420p",
      fps: 30,
      frames: 240,
      colorSpace: "bt709",
      colorPrimaries: "bt709",
      colorTransfer: "bt709",
      colorRange: "tv"
    },
    audio: { codec: "aac", sampleRate: 48000, channels: 2 },
    boxes: ["ftyp", "moov", "mdat"],
    moovBeforeMdat: true
  }
  it("accepts a deliverable file and names every problem of a broken one", () => {
    expect(verifyProbe(good, 8)).toEqual([])
    expect(verifyProbe({ ...good, durationSec: 8.03 }, 8)).toEqual([])
    const bad = verifyProbe(
      {
        ...good,
        durationSec: 7.5,
        audio: null,
        moovBeforeMdat: false,
        video: { ...good.video!, pixFmt: "yuv444p", colorSpace: "" }
      },
      8
    )
    expect(bad.join(" ")).toMatch(/pix_fmt.*colour tags.*duration.*AAC.*box order/)
    expect(verifyProbe({ ...good, video: null }, 8)).toEqual(["no video stream"])
  })
})
