import { describe, expect, it } from "@effect/vitest"
import * as MultipartParser from "../src/MultipartParser.ts"

type Event =
  | { readonly field: string; readonly value: string }
  | { readonly file: string; readonly filename: string | undefined; readonly type: string; readonly bytes: string }
  | { readonly error: MultipartParser.Failure }
  | "done"

/** Runs the parser over `body` cut into `pieces` of at most `size` bytes; what it reported, in order. */
const run = (
  body: string | Uint8Array,
  options: { size?: number; contentType?: string; limits?: Partial<MultipartParser.Config> } = {}
) => {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body
  const events: Array<Event> = []
  const parser = MultipartParser.make({
    headers: { "content-type": options.contentType ?? "multipart/form-data; boundary=XyZ" },
    ...options.limits,
    onField: (info, value) => events.push({ field: info.name, value: new TextDecoder().decode(value) }),
    onFile: (info) => {
      const chunks: Array<Uint8Array> = []
      return (chunk) => {
        if (chunk !== null) chunks.push(chunk)
        else {
          events.push({
            file: info.name,
            filename: info.filename,
            type: info.contentType,
            bytes: Buffer.concat(chunks).toString("latin1")
          })
        }
      }
    },
    onError: (error) => events.push({ error }),
    onDone: () => events.push("done")
  })
  const size = options.size ?? bytes.length
  for (let at = 0; at < bytes.length; at += size) parser.write(bytes.subarray(at, at + size))
  parser.end()
  return events
}

const form = [
  "preamble, ignored\r\n",
  "--XyZ\r\n",
  `Content-Disposition: form-data; name="file"; filename="東京タワー.jpg"\r\n`,
  "Content-Type: image/jpeg\r\n\r\n",
  "\u00ff\u00d8 bytes with --XyZ inside\r\nand a line break\r\n",
  "--XyZ\r\n",
  `Content-Disposition: form-data; name="label"\r\n\r\n`,
  "日本 😀\r\n",
  "--XyZ\r\n",
  `Content-Disposition: form-data; name="file2"; filename*=utf-8''%F0%9F%98%80.png\r\n\r\n`,
  "\r\n",
  "--XyZ--\r\nepilogue, ignored"
].join("")
const parsed: Array<Event> = [
  {
    file: "file",
    filename: "東京タワー.jpg",
    type: "image/jpeg",
    bytes: Buffer.from("\u00ff\u00d8 bytes with --XyZ inside\r\nand a line break").toString("latin1")
  },
  { field: "label", value: "日本 😀" },
  { file: "file2", filename: "😀.png", type: "application/octet-stream", bytes: "" },
  "done"
]

describe("MultipartParser", () => {
  it("reads files and fields with names in any script, however the body is cut into pieces", () => {
    for (const size of [1, 2, 3, 5, 7, 13, 64, 100_000]) {
      expect(run(form, { size }), `pieces of ${size}`).toEqual(parsed)
    }
  })

  it("a body that opens with its boundary (no preamble), and a quoted boundary", () => {
    const body = `--a b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--a b--`
    expect(run(body, { contentType: `multipart/form-data; boundary="a b"` })).toEqual([
      { field: "x", value: "1" },
      "done"
    ])
  })

  it("a part that cannot be read ends the parse with a sentence saying what and where; nothing after it is reported", () => {
    const part = (headers: string) =>
      `--XyZ\r\nContent-Disposition: form-data; name="ok"\r\n\r\nyes\r\n--XyZ\r\n${headers}\r\n\r\nbody\r\n--XyZ\r\nContent-Disposition: form-data; name="after"\r\n\r\nno\r\n--XyZ--\r\n`
    const cases: Array<[string, string]> = [
      [`Content-Disposition: form-data; filename="日本.jpg"`, "part 2's Content-Disposition has no name"],
      [`Content-Type: image/jpeg`, "part 2 has no Content-Disposition header"],
      [
        `Content-Disposition: form-data; name="file"; filename="日本.jpg`,
        "part 2's Content-Disposition has a quoted string without its closing quote"
      ],
      [
        `Content-Disposition: form-data; name="file"; filename*=utf-8''%E6%97`,
        "part 2's Content-Disposition has a filename* that is not UTF-8 once decoded"
      ],
      [`Bad Header: x`, "part 2 has a header name that is not a token"]
    ]
    for (const [headers, message] of cases) {
      for (const size of [1, 1000]) {
        expect(run(part(headers), { size }), headers).toEqual([{ field: "ok", value: "yes" }, {
          error: { _tag: "Malformed", message }
        }])
      }
    }
  })

  it("a body that is not multipart/form-data as declared is Malformed", () => {
    const malformed = (message: string) => [{ error: { _tag: "Malformed", message } }]
    const ends = malformed("the body ends before its closing boundary")
    expect(run("")).toEqual(ends)
    expect(run("not multipart at all")).toEqual(ends)
    expect(run(`--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n\x89PNG`)).toEqual(ends)
    expect(run(`--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nno closing boundary\r\n`)).toEqual(ends)
    expect(run(`--XyZ\r\nContent-Disposition: form-data; name="a"\r\n--XyZ--\r\n`)).toEqual(
      malformed("part 1's headers do not end (no empty line before the next boundary)")
    )
    expect(run(`--XyZ!!\r\n`)).toEqual(malformed(`a boundary is followed by neither a line break nor "--"`))
    const noBoundary = malformed("the Content-Type is not multipart/form-data with a boundary")
    for (
      const contentType of [
        "multipart/form-data",
        "multipart/form-data; boundary=",
        "text/plain; boundary=XyZ",
        `multipart/form-data; boundary="XyZ`
      ]
    ) {
      expect(run(form, { contentType }), contentType).toEqual(noBoundary)
    }
  })

  it("limits: parts, a file's bytes, a field's bytes, the whole body (reported once, then nothing more)", () => {
    const limit = (l: string) => [{ error: { _tag: "ReachedLimit", limit: l } }]
    expect(run(form, { limits: { maxParts: 2 } })).toEqual([parsed[0], parsed[1], ...limit("MaxParts")])
    expect(run(form, { limits: { maxPartSize: 10 } })).toEqual(limit("MaxPartSize"))
    expect(run(form, { limits: { maxFieldSize: 5 } })).toEqual([parsed[0], ...limit("MaxFieldSize")])
    expect(run(form, { size: 10, limits: { maxTotalSize: 100 } })).toEqual(limit("MaxTotalSize"))
    // exactly at each limit is within it
    const file = Buffer.byteLength("\u00ff\u00d8 bytes with --XyZ inside\r\nand a line break")
    const field = Buffer.byteLength("日本 😀")
    const body = Buffer.byteLength(form)
    expect(run(form, { limits: { maxParts: 3, maxPartSize: file, maxFieldSize: field, maxTotalSize: body } })).toEqual(
      parsed
    )
    expect(run(form, { limits: { maxPartSize: file - 1 } })).toEqual(limit("MaxPartSize"))
    expect(run(form, { limits: { maxFieldSize: field - 1 } })).toEqual([parsed[0], ...limit("MaxFieldSize")])
    expect(run(form, { limits: { maxTotalSize: body - 1 } })).toEqual(limit("MaxTotalSize"))
  })
})
