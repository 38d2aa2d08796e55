import { Result } from "effect"
import * as MP from "multipasta"
import * as HeadersParser from "multipasta/HeadersParser"
import * as Search from "multipasta/Search"
import * as PartHeaders from "./PartHeaders.ts"

/**
 * A multipart/form-data body split into its parts, as it arrives: multipasta's boundary search and
 * header reader, with each part's Content-Disposition and Content-Type read by `PartHeaders` (RFC
 * 7578, 6266, 8187). multipasta's own `make` reads them with a grammar that refuses any character
 * above U+00FF in a quoted string (so a part named `日本.jpg` lost its name and became a nameless
 * field) and throws on a `filename*` that is not percent-encoded UTF-8 (ISO-8859-1 included).
 *
 * The configuration and callbacks are multipasta's (`MP.PartInfo`, the same limits), so a reader
 * uses it as it would `MP.make`. The first failure is reported once and the parser then ignores
 * whatever it is given: a limit passed (`ReachedLimit`, as multipasta names them) or a body that is
 * not multipart/form-data (`Malformed`, with a sentence saying what is wrong and in which part).
 */
export type Failure =
  | Extract<MP.MultipartError, { readonly _tag: "ReachedLimit" }>
  | { readonly _tag: "Malformed"; readonly message: string }

export interface Config extends MP.BaseConfig {
  readonly onField: (info: MP.PartInfo, value: Uint8Array) => void
  readonly onFile: (info: MP.PartInfo) => (chunk: Uint8Array | null) => void
  readonly onError: (failure: Failure) => void
  readonly onDone: () => void
}

const headerProblems: Record<HeadersParser.FailureReason, string> = {
  TooManyHeaders: "has too many headers",
  HeaderTooLarge: "has headers over 16 KiB",
  InvalidHeaderName: "has a header name that is not a token",
  InvalidHeaderValue: "has a header value with a control character"
}

const crlf = new Uint8Array([13, 10])
const dash = 45

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number) => {
  if (chunks.length === 1) return chunks[0]
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}

export const make = (config: Config): MP.Parser => {
  const {
    isFile = MP.defaultIsFile,
    maxFieldSize = 1024 * 1024,
    maxPartSize = Infinity,
    maxParts = Infinity,
    maxTotalSize = Infinity
  } = config
  /** where the parser is: past a failure or the closing boundary it reads nothing more */
  let state: "preamble" | "boundary" | "headers" | "file" | "field" | "over" = "preamble"
  const fail = (failure: Failure) => {
    if (state === "over") return
    state = "over"
    config.onError(failure)
  }
  const malformed = (message: string) => fail({ _tag: "Malformed", message })

  const boundary = Result.match(PartHeaders.parse(config.headers["content-type"] ?? ""), {
    onFailure: () => undefined,
    onSuccess: (t) =>
      t.value === "multipart/form-data" && t.parameters.boundary !== "" ? t.parameters.boundary : undefined
  })
  if (boundary === undefined) {
    malformed("the Content-Type is not multipart/form-data with a boundary")
    return { write: () => {}, end: () => {} }
  }

  let total = 0
  let parts = 0
  let index = 0
  /** what follows a boundary until it says whether it is the last ("--") or starts a part (CRLF) */
  let after: Array<Uint8Array> = []
  let afterSize = 0
  let headers = HeadersParser.make()
  let size = 0
  let field: Array<Uint8Array> = []
  let info: MP.PartInfo | undefined
  let onChunk: (chunk: Uint8Array | null) => void = () => {}

  /** the part before a boundary is complete, unless its headers never ended */
  const finishPart = () => {
    if (state === "headers") {
      malformed(`part ${parts}'s headers do not end (no empty line before the next boundary)`)
      return false
    }
    if (state === "file") onChunk(null)
    else if (state === "field") config.onField(info!, concat(field, size))
    field = []
    return true
  }

  const body = (chunk: Uint8Array) => {
    if (chunk.length === 0) return
    size += chunk.length
    if (state === "file") {
      if (size > maxPartSize) return fail({ _tag: "ReachedLimit", limit: "MaxPartSize" })
      onChunk(chunk)
    } else {
      if (size > maxFieldSize) return fail({ _tag: "ReachedLimit", limit: "MaxFieldSize" })
      field.push(chunk)
    }
  }

  const partHeaders = (chunk: Uint8Array, start: number) => {
    const result = headers(chunk, start)
    if (result._tag === "Continue") return
    if (result._tag === "Failure") return malformed(`part ${parts} ${headerProblems[result.reason]}`)
    const disposition = PartHeaders.disposition(`part ${parts}`, result.headers["content-disposition"])
    if (Result.isFailure(disposition)) return malformed(disposition.failure)
    const { filename, name, parameters } = disposition.success
    const type = PartHeaders.contentType(result.headers["content-type"])
    info = {
      name,
      filename,
      contentType: type.value !== "" ? type.value : filename !== undefined ? "application/octet-stream" : "text/plain",
      contentTypeParameters: type.parameters,
      contentDisposition: "form-data",
      contentDispositionParameters: parameters,
      headers: result.headers
    }
    size = 0
    if (isFile(info)) {
      state = "file"
      onChunk = config.onFile(info)
    } else state = "field"
    body(chunk.subarray(result.endPosition))
  }

  const search = Search.make(`\r\n--${boundary}`, (i, chunk) => {
    if (state === "over" || i === 0) return // the preamble is ignored
    if (i !== index) {
      if (!finishPart()) return
      index = i
      state = "boundary"
      after = []
      afterSize = 0
    }
    if (state === "boundary") {
      after.push(chunk)
      afterSize += chunk.length
      if (afterSize < 2) return
      const start = concat(after, afterSize)
      if (start[0] === dash && start[1] === dash) {
        state = "over"
        return config.onDone()
      }
      if (start[0] !== crlf[0] || start[1] !== crlf[1]) {
        return malformed(`a boundary is followed by neither a line break nor "--"`)
      }
      if (++parts > maxParts) return fail({ _tag: "ReachedLimit", limit: "MaxParts" })
      state = "headers"
      headers = HeadersParser.make()
      return partHeaders(start, 2)
    }
    if (state === "headers") return partHeaders(chunk, 0)
    body(chunk)
  })
  // the first boundary may open the body: it is then preceded by the CRLF the search looks for
  search.write(crlf)

  return {
    write(chunk) {
      if (state === "over") return
      if ((total += chunk.length) > maxTotalSize) return fail({ _tag: "ReachedLimit", limit: "MaxTotalSize" })
      search.write(chunk)
    },
    end() {
      if (state === "over") return
      search.end()
      malformed("the body ends before its closing boundary")
    }
  }
}
