import { canonicalJson } from "@pic2video/domain/Idempotency"
import * as Requests from "@pic2video/domain/Requests"
import { Data, Deferred, Duration, Effect, Semaphore } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as Path from "node:path"
import { type Client, type CreateRenderBody, type Media, toTheEnd } from "./Client.ts"
import { ApiError, InvalidRequest, WaitTimeout } from "./Errors.ts"
import { downloadToFile } from "./Files.ts"

/**
 * A batch of renders, one per photo, that can be stopped at any moment and run again, and that
 * charges the same photo with the same fields once, whatever became of its manifest or `--out`:
 *
 * - A photo and its fields have one digest, SHA-256(photo bytes, canonical JSON of the fields). The
 *   photo is uploaded once for it, tagged `p2v-batch:` + the digest's first 40 hex digits: a later run
 *   finds that upload in the library (`GET /media`) even with no manifest.
 * - Its render is created with that upload's `media_id` under `Idempotency-Key: p2v-batch:` + the
 *   digest: the same body every time, so the service answers a repeated create with the render it
 *   accepted first (and charged once), for 24 hours.
 * - Renders cannot be listed: past those 24 hours only a manifest knows a render's id. An upload older
 *   than 23 hours with no render id in the manifest, and no sign there that no render was asked for,
 *   may have been rendered: it is skipped (`rendered_before`), not charged again, unless `rerender`.
 * - A refusal the service remembered (a spend cap since refilled) is answered again for 24 hours: a
 *   replayed `spend_cap_reached`, `quota_exceeded` or `caption_prep_failed` moves to the next key,
 *   `…:2`, `…:3`, charged nothing, found again the same way by a later run.
 *
 * The manifest in the output directory (`batch.jsonl`, rewritten whole at each change) starts from
 * what the previous one knew and keeps every line it cannot use. Files in `--out` are only created,
 * exclusively: no link is followed and no file replaced. Node and Deno (node:fs), as Files.ts.
 */

/** The render fields a batch sets: everything of a create but the photo. */
export type RenderOptions = Omit<CreateRenderBody, "media_id">

/**
 * Where a photo stands. Finished: `completed` (the MP4 is saved), `failed` / `canceled` (the render
 * or one of its requests did not succeed), `skipped` (not rendered, with the reason in `error_code`),
 * `left` (not rendered: the batch stopped at the spend cap or quota). Under way: the rest;
 * `uploaded` says no render was asked for under its key yet, `creating` that one was asked for and
 * the answer is not in (the service's answer under the same key says which render it is).
 */
export type Status =
  | "queued"
  | "uploading"
  | "uploaded"
  | "creating"
  | "rendering"
  | "downloading"
  | "completed"
  | "failed"
  | "canceled"
  | "skipped"
  | "left"

export const finished = (s: Status) =>
  s === "completed" || s === "failed" || s === "canceled" || s === "skipped" || s === "left"

/** One photo's line in `batch.jsonl`. */
export interface Entry {
  /** The path as given (or found in a given directory). */
  readonly photo: string
  /** SHA-256 of the photo's bytes (hex). */
  readonly sha256: string | null
  readonly media_id: string | null
  readonly render_id: string | null
  /** The key of the render's create: `p2v-batch:` + the digest of the photo and its fields (`:2`, `:3` … for a later try). */
  readonly idempotency_key: string | null
  readonly status: Status
  /** The render's progress, 0–100. */
  readonly progress: number
  /**
   * The service's error code; `deadline` (the wait ended first; the render goes on); for a photo
   * skipped here: `not_a_file`, `unreadable`, `rendered_before`.
   */
  readonly error_code: string | null
  readonly error_message: string | null
  /** The MP4, once saved: a file directly in `--out`. */
  readonly output: string | null
  readonly bytes: number | null
  /** The photo's own time in the run that finished it: uploading, then create to MP4 (not waiting for a slot). */
  readonly seconds: number | null
}

export interface Options {
  /** Photos, and directories whose files (not sub-directories; not dot files) are taken in name order. */
  readonly photos: ReadonlyArray<string>
  /** Where the MP4s (named after the photos; a name taken gets `-2`, `-3` …) and `batch.jsonl` go; made if missing. */
  readonly out: string
  /** Render fields for every photo. */
  readonly render?: RenderOptions
  /** Per photo, by file name (no directory): fields that replace `render`'s (see `readCaptions`). */
  readonly captions?: ReadonlyMap<string, RenderOptions>
  /** Photos in flight at once: at most this many uploads, and this many renders (create to download). Default 2. */
  readonly concurrency?: number
  /** How long to wait for one render. Default 20 minutes. */
  readonly deadline?: Duration.Input
  /** Called with every change of a photo's state (and each render progress). */
  readonly onUpdate?: (entry: Entry, index: number, all: ReadonlyArray<Entry>) => void
  /** Render every photo again, even one rendered before (charged again): the new render replaces the old in the manifest. */
  readonly rerender?: boolean
}

export interface Result {
  readonly entries: ReadonlyArray<Entry>
  /** The manifest's path. */
  readonly manifest: string
  readonly counts: {
    readonly completed: number
    readonly failed: number
    readonly skipped: number
    readonly left: number
  }
  /** Why the batch stopped creating, and how many photos were left unrendered. */
  readonly stopped: { readonly code: string; readonly message: string; readonly left: number } | null
  readonly seconds: number
}

/** A captions file that cannot be read, or that names a file not among the photos. */
export class BatchInputError extends Data.TaggedError("BatchInputError")<{ readonly message: string }> {}

export const defaultConcurrency = 2
export const manifestName = "batch.jsonl"

const keyPrefix = "p2v-batch:"

/** A photo and its render fields as one value: the same photo with the same fields is the same render. */
const digestOf = (photo: Uint8Array, options: RenderOptions) =>
  createHash("sha256").update(photo).update(canonicalJson(options)).digest("hex")

/** The key of try `take` of a render: 1 unless a remembered refusal (or `rerender`) moved on. */
const keyOf = (digest: string, take: number) => take === 1 ? `${keyPrefix}${digest}` : `${keyPrefix}${digest}:${take}`

/** The digest and try of a key this module made; null for anything else. */
const parseKey = (key: string | null) => {
  const m = key === null ? null : /^p2v-batch:([0-9a-f]{64})(?::([1-9][0-9]{0,5}))?$/.exec(key)
  return m === null ? null : { digest: m[1], take: m[2] === undefined ? 1 : Number(m[2]) }
}

/** The key of one render: the photo's bytes and its options, so that a re-run asks for the very same render. */
export const idempotencyKey = (photo: Uint8Array, options: RenderOptions) => keyOf(digestOf(photo, options), 1)

/** The tag of the upload made for a photo and its fields, by which a later run finds it (a tag holds 50 characters). */
export const uploadTag = (digest: string) => `${keyPrefix}${digest.slice(0, Requests.maxTagLength - keyPrefix.length)}`

/** What the service takes, by the bytes' signature; the service checks again (and decides). */
export const photoType = (b: Uint8Array): string | null => {
  const at = (offset: number, ...bytes: Array<number>) => bytes.every((x, i) => b[offset + i] === x)
  const ascii = (offset: number, text: string) => at(offset, ...Array.from(text, (c) => c.charCodeAt(0)))
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg"
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png"
  if (ascii(0, "RIFF") && ascii(8, "WEBP")) return "image/webp"
  if (ascii(0, "GIF87a") || ascii(0, "GIF89a")) return "image/gif"
  return null
}

// ---- captions -----------------------------------------------------------------------------------

const textFields = [
  "quote",
  "render_type",
  "caption_style",
  "text_color",
  "text_size",
  "page_theme",
  "image_class",
  "sub_prompt",
  "render_prompt"
] as const
const booleanFields = ["bold", "bold_outline"] as const
const captionColumns: ReadonlyArray<string> = ["file", ...textFields, ...booleanFields, "metadata"]

/** RFC 4180: fields separated by commas, quoted with `"` (doubled inside), records by CRLF or LF. */
export const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  for (; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        field += "\""
        i++
      } else if (c === "\"") quoted = false
      else field += c
    } else if (c === "\"" && field === "") quoted = true // a quote opens a field only at its start
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      row.push(field)
      rows.push(row)
      row = []
      field = ""
    } else field += c
  }
  if (field !== "" || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ""))
}

/** One caption row as render fields: CSV cells are text, so `bold` is true/false and `metadata` a JSON object. */
const captionOf = (row: Record<string, unknown>, where: string): RenderOptions => {
  const out: Record<string, unknown> = {}
  for (const [column, value] of Object.entries(row)) {
    if (!captionColumns.includes(column)) {
      throw new BatchInputError({
        message: `${where}: unknown column "${column}" (known: ${captionColumns.join(", ")})`
      })
    }
    if (column === "file" || value === "" || value === undefined) continue
    if ((booleanFields as ReadonlyArray<string>).includes(column) && typeof value === "string") {
      if (!/^(true|false|yes|no|1|0)$/i.test(value)) {
        throw new BatchInputError({ message: `${where}: ${column} must be true or false` })
      }
      out[column] = /^(true|yes|1)$/i.test(value)
    } else if (column === "metadata" && typeof value === "string") {
      try {
        out[column] = JSON.parse(value)
      } catch {
        throw new BatchInputError({ message: `${where}: metadata must be a JSON object` })
      }
    } else out[column] = value
  }
  return out as RenderOptions
}

/**
 * Per-photo render fields from a CSV (a header row naming `file` and any of the render's fields) or a
 * JSONL file (one object per line with `file`), keyed by file name. The service checks the values.
 */
export const readCaptions = (path: string): Effect.Effect<ReadonlyMap<string, RenderOptions>, BatchInputError> =>
  Effect.try({
    try: () => {
      // a FIFO would wait for a writer for ever
      if (!fs.statSync(path).isFile()) throw new BatchInputError({ message: `${path}: not a file` })
      const text = fs.readFileSync(path, "utf8")
      const rows: Array<[Record<string, unknown>, string]> = []
      if (/\.jsonl$/i.test(path)) {
        text.split(/\r?\n/).forEach((line, n) => {
          if (line.trim() === "") return
          let value: unknown
          try {
            value = JSON.parse(line)
          } catch {
            throw new BatchInputError({ message: `${path}:${n + 1}: not JSON` })
          }
          if (typeof value !== "object" || value === null || Array.isArray(value)) {
            throw new BatchInputError({ message: `${path}:${n + 1}: not a JSON object` })
          }
          rows.push([value as Record<string, unknown>, `${path}:${n + 1}`])
        })
      } else {
        const [header, ...records] = parseCsv(text)
        if (header === undefined) throw new BatchInputError({ message: `${path}: empty` })
        captionOf(Object.fromEntries(header.map((h) => [h.trim(), ""])), `${path}:1`)
        records.forEach((r, n) =>
          rows.push([Object.fromEntries(header.map((h, i) => [h.trim(), r[i] ?? ""])), `${path}:${n + 2}`])
        )
      }
      const captions = new Map<string, RenderOptions>()
      for (const [row, where] of rows) {
        if (typeof row.file !== "string" || row.file === "") {
          throw new BatchInputError({ message: `${where}: no "file"` })
        }
        const name = Path.basename(row.file)
        if (captions.has(name)) throw new BatchInputError({ message: `${where}: ${name} has a row already` })
        captions.set(name, captionOf(row, where))
      }
      return captions
    },
    catch: (e) =>
      e instanceof BatchInputError
        ? e
        : new BatchInputError({ message: `cannot read ${path}: ${(e as Error).message}` })
  })

// ---- the batch ----------------------------------------------------------------------------------

/** Why a photo is not rendered, found before anything is sent. */
interface Skip {
  readonly code: string
  readonly message: string
}

/**
 * The photos: the paths given, a directory standing for its entries in name order (links followed;
 * not its sub-directories or links to one, not dot files). Nothing is read yet; a directory that cannot
 * be listed is itself a photo that is skipped, with why.
 */
const expand = (paths: ReadonlyArray<string>) => {
  const problems = new Map<string, Skip>()
  const isDirectory = (p: string) => {
    try {
      return fs.statSync(p).isDirectory()
    } catch {
      return false // gone or unreachable: read as a photo, its skip says why
    }
  }
  const files = paths.flatMap((p) => {
    if (!isDirectory(p)) return [p]
    try {
      return fs.readdirSync(p, { withFileTypes: true })
        .filter((d) => !d.name.startsWith(".") && !d.isDirectory())
        .map((d) => Path.join(p, d.name))
        .filter((f) => !isDirectory(f))
        .sort()
    } catch (e) {
      problems.set(p, { code: "unreadable", message: `cannot list it: ${(e as Error).message}` })
      return [p]
    }
  })
  return { files, problems }
}

/**
 * A photo's bytes, or why it is skipped. Only a regular file is opened, and without blocking: a FIFO
 * would wait for a writer for ever (deaf to signals), a device might never end.
 */
const readPhoto = (file: string): { readonly bytes: Uint8Array } | Skip => {
  const unreadable = (e: unknown): Skip => ({ code: "unreadable", message: `cannot read it: ${(e as Error).message}` })
  const notAFile: Skip = { code: "not_a_file", message: "not a regular file (a FIFO, socket, device or directory)" }
  const tooLarge: Skip = { code: "payload_too_large", message: `over ${Requests.uploadLimitText}` }
  let fd: number
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return notAFile
    if (stat.size > Requests.maxUploadBytes) return tooLarge
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch (e) {
    return unreadable(e)
  }
  try {
    // what was opened, which may no longer be what was looked at
    if (!fs.fstatSync(fd).isFile()) return notAFile
    const bytes = new Uint8Array(fs.readFileSync(fd))
    if (bytes.byteLength > Requests.maxUploadBytes) return tooLarge
    if (photoType(bytes) === null) return { code: "unsupported_media_type", message: `not ${Requests.photoTypesText}` }
    return { bytes }
  } catch (e) {
    return unreadable(e)
  } finally {
    fs.closeSync(fd)
  }
}

const statuses: ReadonlyArray<Status> = [
  "queued",
  "uploading",
  "uploaded",
  "creating",
  "rendering",
  "downloading",
  "completed",
  "failed",
  "canceled",
  "skipped",
  "left"
]

const blank = (photo: string): Entry => ({
  photo,
  sha256: null,
  media_id: null,
  render_id: null,
  idempotency_key: null,
  status: "queued",
  progress: 0,
  error_code: null,
  error_message: null,
  output: null,
  bytes: null,
  seconds: null
})

/** A manifest line as an entry, each field of its type or empty; null for a line that is not one. */
const entryOf = (line: string): Entry | null => {
  let e: unknown
  try {
    e = JSON.parse(line)
  } catch {
    return null
  }
  if (typeof e !== "object" || e === null || typeof (e as { photo?: unknown }).photo !== "string") return null
  const o = e as Record<string, unknown>
  const text = (v: unknown) => (typeof v === "string" ? v : null)
  const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null)
  return {
    photo: o.photo as string,
    sha256: text(o.sha256),
    media_id: text(o.media_id),
    render_id: text(o.render_id),
    idempotency_key: text(o.idempotency_key),
    status: statuses.includes(o.status as Status) ? (o.status as Status) : "queued",
    progress: count(o.progress) ?? 0,
    error_code: text(o.error_code),
    error_message: text(o.error_message),
    output: text(o.output),
    bytes: count(o.bytes),
    seconds: count(o.seconds)
  }
}

/** The lines an earlier run wrote; a manifest that is not a plain file (a link) is not read. */
const readManifest = (path: string): Array<Entry> => {
  let text: string
  try {
    const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    try {
      if (!fs.fstatSync(fd).isFile()) return []
      text = fs.readFileSync(fd, "utf8")
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return []
  }
  return text.split("\n").flatMap((line) => entryOf(line) ?? [])
}

/**
 * Writes `path` whole through `path.partial`, renamed into place: a kill at any moment leaves the
 * last complete file. The partial file is created afresh (a leftover, or a link planted in a shared
 * directory, is removed, never written through); the rename replaces a link, never follows it.
 */
const writeWhole = (path: string, text: string) => {
  const partial = `${path}.partial`
  fs.rmSync(partial, { force: true })
  fs.writeFileSync(partial, text, { flag: "wx" })
  fs.renameSync(partial, path)
}

const isCode = (e: unknown, code: string) =>
  typeof e === "object" && e !== null && (e as { code?: unknown }).code === code

/**
 * What a photo and its fields come to: a render to follow, or the entry's end without one (skipped,
 * left or failed). Shared by the photos that have the same digest (identical files).
 */
type Outcome =
  | { readonly _tag: "Render"; readonly id: string; readonly key: string; readonly mediaId: string | null }
  | { readonly _tag: "End"; readonly patch: Partial<Entry> }

/** The upload a photo and its fields are rendered from; `fresh`: no render can have been asked for with it before. */
type Upload = { readonly _tag: "Upload"; readonly media: Media; readonly fresh: boolean } | {
  readonly _tag: "End"
  readonly patch: Partial<Entry>
}

/** The codes after which the batch creates nothing more: no render would be accepted. */
const stopCodes: ReadonlyArray<string> = ["spend_cap_reached", "quota_exceeded"]
/** Upload refusals that say the file is not a photo the service takes. */
const skipCodes: ReadonlyArray<string> = ["unsupported_media_type", "payload_too_large", "validation_failed"]
/** Answers worth waiting out: the client retried them already; a batch has time to wait longer. */
const waitCodes: ReadonlyArray<string> = ["rate_limit_exceeded", "service_unavailable", "idempotency_in_progress"]

/** Retries what the client gave up on after its own attempts: a batch outlasts a busy minute. */
const patiently = <A, E>(call: Effect.Effect<A, E>, rounds = 10): Effect.Effect<A, E> =>
  Effect.catchIf(
    call,
    (e): e is E & ApiError => rounds > 0 && e instanceof ApiError && waitCodes.includes(e.code),
    (e) => Effect.andThen(Effect.sleep(Duration.seconds(e.retryAfter ?? 1)), patiently(call, rounds - 1))
  )

/** An `ApiError` with one of these codes (a plain test: its false branch may still be another ApiError). */
const isApiError = (e: unknown, codes: ReadonlyArray<string>): boolean =>
  e instanceof ApiError && codes.includes(e.code)

/** A photo's own time: while it holds an upload or a render slot, not while it waits for one. */
interface Stopwatch {
  readonly timing: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly seconds: () => number
}
const stopwatch = (): Stopwatch => {
  let spent = 0
  let since: number | null = null
  return {
    timing: (work) =>
      Effect.suspend(() => {
        since = Date.now()
        return Effect.ensuring(
          work,
          Effect.sync(() => {
            spent += Date.now() - since!
            since = null
          })
        )
      }),
    seconds: () => (spent + (since === null ? 0 : Date.now() - since)) / 1000
  }
}

/** Remembered refusals that charged nothing and that another key may get past: the next try moves on. */
const walkCodes: ReadonlyArray<string> = ["spend_cap_reached", "quota_exceeded", "caption_prep_failed"]

/**
 * How long after its upload a render's create is surely still remembered: the service keeps a key 24
 * hours from its first use, which comes after the upload; an hour's margin for the clocks.
 */
const replayWindow = Duration.hours(23)

/** How long an interrupted batch waits for a create under way to answer, so that its render id is kept. */
const createGrace = Duration.seconds(5)

/** One computation per digest, however many photos have it: the others wait for its result. */
const perDigest = <A, E>() => {
  const results = new Map<string, Deferred.Deferred<A, E>>()
  return (digest: string, work: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      const running = results.get(digest)
      if (running !== undefined) return Deferred.await(running)
      const result = Deferred.makeUnsafe<A, E>()
      results.set(digest, result)
      return Effect.andThen(Deferred.into(work, result), Deferred.await(result))
    })
}

/**
 * Runs the batch. Fails (leaving the manifest as it stood) only when the batch cannot go on at all:
 * a captions file naming a photo not given, the service unreachable or answering not as the API,
 * the key refused (401/403), `--out` not writable. A photo that cannot be read is skipped, with why.
 * Interrupted (Ctrl-C, SIGTERM), it stops at once, giving a create under way a few seconds to answer
 * so that the manifest has its render id; renders already accepted go on, and a re-run collects them.
 */
export const run = (client: Client, options: Options) =>
  Effect.gen(function*() {
    const started = Date.now()
    const { files, problems } = expand(options.photos)
    const unknown = [...(options.captions?.keys() ?? [])].filter((name) =>
      !files.some((f) => Path.basename(f) === name)
    )
    if (unknown.length > 0) {
      return yield* new BatchInputError({
        message: `the captions name ${unknown.join(", ")}, not among the photos given (nothing was sent)`
      })
    }
    const concurrency = Math.max(1, options.concurrency ?? defaultConcurrency)
    const out = options.out
    fs.mkdirSync(out, { recursive: true })
    const manifest = Path.join(out, manifestName)

    // each photo starts from its line in the manifest; the lines of other photos are kept as they are
    const before = readManifest(manifest)
    const adopted = new Set<Entry>()
    const entries: Array<Entry> = files.map((photo) => {
      const line = before.find((e) => e.photo === photo && !adopted.has(e))
      if (line === undefined) return blank(photo)
      adopted.add(line)
      return line
    })
    const kept: Array<Entry> = before.filter((e) => !adopted.has(e))
    const save = () => writeWhole(manifest, [...entries, ...kept].map((e) => JSON.stringify(e)).join("\n") + "\n")
    const set = (i: number, patch: Partial<Entry>, persist = true) =>
      Effect.sync(() => {
        entries[i] = { ...entries[i], ...patch }
        if (persist) save()
        options.onUpdate?.(entries[i], i, entries)
      })
    const state: { stopped: { readonly code: string; readonly message: string } | null } = { stopped: null }
    const stop = (e: ApiError) => {
      state.stopped ??= { code: e.code, message: e.message }
    }
    const uploads = yield* Semaphore.make(concurrency)
    const renders = yield* Semaphore.make(concurrency)
    const body = (name: string): RenderOptions => ({ ...options.render, ...options.captions?.get(name) })

    // ---- the MP4s: a name of each photo's own, in the order given, never a file replaced

    /**
     * Where an entry's MP4 is: its name in `--out`, wherever the line says the directory is (an output is
     * never anywhere else; the line may have been written from another working directory).
     */
    const outputOf = (e: Entry) => (e.output === null ? null : Path.join(out, Path.basename(e.output)))
    /** An entry's MP4 as it left it: a plain file (not a link) of the size it wrote. */
    const intact = (e: Entry) => {
      const output = outputOf(e)
      const stat = output === null ? undefined : fs.lstatSync(output, { throwIfNoEntry: false })
      return stat !== undefined && stat.isFile() && stat.size === e.bytes
    }
    const stem = (photo: string) => Path.basename(photo, Path.extname(photo))
    const nameFor = (photo: string, n: number) => `${stem(photo)}${n === 1 ? "" : `-${n}`}.mp4`
    // each MP4 is one photo's: the first line to claim a name has it
    const taken = new Set<string>()
    const owned = entries.map((e) => {
      const name = e.status === "completed" && intact(e) ? Path.basename(outputOf(e)!) : null
      if (name === null || taken.has(name)) return null
      taken.add(name)
      return name
    })
    const exists = (name: string) => fs.lstatSync(Path.join(out, name), { throwIfNoEntry: false }) !== undefined
    const names = entries.map((e, i) => {
      if (owned[i] !== null) return owned[i]
      let n = 1
      while (taken.has(nameFor(e.photo, n)) || exists(nameFor(e.photo, n))) n++
      taken.add(nameFor(e.photo, n))
      return nameFor(e.photo, n)
    })
    /**
     * Puts photo i's finished download in place: on `rerender`, over this photo's own earlier MP4; else
     * under its name created exclusively (no link followed, no file replaced), else the next free one.
     */
    const place = (i: number) => (partial: string): string => {
      const own = entries[i]
      if (options.rerender && owned[i] !== null && outputOf(own) === Path.join(out, owned[i]) && intact(own)) {
        fs.renameSync(partial, Path.join(out, owned[i]))
        return Path.join(out, owned[i])
      }
      for (let n = 1;; n++) {
        const name = n === 1 ? names[i] : nameFor(files[i], n)
        if (n > 1 && taken.has(name)) continue
        taken.add(name)
        const path = Path.join(out, name)
        try {
          fs.writeFileSync(path, new Uint8Array(0), { flag: "wx" })
        } catch (e) {
          if (isCode(e, "EEXIST")) continue
          throw e
        }
        fs.renameSync(partial, path)
        return path
      }
    }

    // ---- what the manifest knew of a digest, and the library's uploads

    const linesOf = (digest: string) => before.filter((e) => parseKey(e.idempotency_key)?.digest === digest)
    /** The line of the manifest that got furthest with this photo and these fields. */
    const knownOf = (digest: string, photo: string): Entry | undefined => {
      const lines = linesOf(digest)
      const best = (e: Entry) => e.render_id !== null && e.status === "completed"
      return lines.find((e) => best(e) && e.photo === photo) ?? lines.find(best) ??
        lines.find((e) => e.render_id !== null) ?? lines.find((e) => e.media_id !== null)
    }
    /**
     * The manifest shows that no render was accepted for this digest with this upload: a line says none
     * was asked for (`uploaded`, `left`) or the asking was refused, and no line says one may have been.
     */
    const nothingAccepted = (digest: string, mediaId: string) => {
      const lines = linesOf(digest)
      const mayHave = (e: Entry) =>
        e.render_id !== null || ["creating", "rendering", "downloading", "completed", "canceled"].includes(e.status) ||
        e.error_code === "idempotency_conflict" || e.error_code === "rendered_before"
      const none = (e: Entry) =>
        e.media_id === mediaId && (e.status === "uploaded" || e.status === "left" || e.status === "failed")
      return lines.some(none) && !lines.some(mayHave)
    }

    /** The workspace's uploads by the tag this module gives them: listed once, when first needed. */
    const library = yield* Effect.cached(Effect.gen(function*() {
      const byTag = new Map<string, Array<Media>>()
      const byId = new Map<string, Media>()
      let cursor: string | undefined
      do {
        const page = yield* patiently(client.listMedia({ limit: 100, cursor }))
        for (const m of page.data) {
          byId.set(m.id, m)
          for (const tag of m.tags.filter((t) => t.startsWith(keyPrefix))) byTag.set(tag, [...byTag.get(tag) ?? [], m])
        }
        cursor = page.has_more && page.next_cursor !== null ? page.next_cursor : undefined
      } while (cursor !== undefined)
      // oldest first: the first upload is the one a create can have been asked for with
      for (const list of byTag.values()) list.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))
      return { byTag, byId }
    }))

    /**
     * The upload for a digest: the manifest's, else the library's tagged one, else a new one of the
     * photo's bytes (null: the file is no longer that photo).
     */
    const uploadOf = (digest: string, file: string, bytes: () => Uint8Array | null) =>
      Effect.gen(function*() {
        const { byId, byTag } = yield* library
        const known = knownOf(digest, file)?.media_id
        const found = (known != null ? byId.get(known) : undefined) ?? byTag.get(uploadTag(digest))?.[0]
        if (found !== undefined) {
          return { _tag: "Upload", media: found, fresh: nothingAccepted(digest, found.id) } as const
        }
        if (state.stopped !== null) {
          return { _tag: "End", patch: { status: "left" } } as const
        }
        const photo = bytes()
        if (photo === null) {
          return {
            _tag: "End",
            patch: {
              status: "skipped",
              error_code: "unreadable",
              error_message: "it changed or went away during the batch"
            }
          } as const
        }
        const name = Path.basename(file)
        const uploaded = yield* Effect.result(patiently(client.upload({
          file: photo,
          filename: name,
          contentType: photoType(photo)!,
          label: name,
          tags: [uploadTag(digest)]
        })))
        if (uploaded._tag === "Failure") {
          const e = uploaded.failure
          if (e instanceof ApiError && isApiError(e, stopCodes)) {
            stop(e)
            return { _tag: "End", patch: { status: "left", error_code: e.code, error_message: e.message } } as const
          }
          if (e instanceof ApiError && isApiError(e, skipCodes)) {
            return { _tag: "End", patch: { status: "skipped", error_code: e.code, error_message: e.message } } as const
          }
          return yield* Effect.fail(e)
        }
        byId.set(uploaded.success.id, uploaded.success)
        byTag.set(uploadTag(digest), [...byTag.get(uploadTag(digest)) ?? [], uploaded.success])
        return { _tag: "Upload", media: uploaded.success, fresh: true } as const
      })
    const upload = perDigest<Upload, unknown>()

    /**
     * The render of a digest: the manifest's, still there; else asked for with its upload under its
     * key, the service answering a key it remembers with the render it accepted then.
     */
    const renderOf = (i: number, digest: string, fields: RenderOptions) =>
      Effect.gen(function*() {
        const known = knownOf(digest, files[i])
        if (!options.rerender && known?.render_id != null) {
          const found = yield* Effect.result(patiently(client.getRender(known.render_id)))
          if (found._tag === "Success") {
            return {
              _tag: "Render",
              id: known.render_id,
              key: known.idempotency_key!,
              mediaId: known.media_id
            } as const
          }
          // not this workspace's render (a manifest written with another key): asked for again below
          if (!isApiError(found.failure, ["render_not_found"])) return yield* Effect.fail(found.failure)
        }
        // read again only now: a photo waiting for a render slot holds no bytes
        const again = () => {
          const read = readPhoto(files[i])
          return "bytes" in read && digestOf(read.bytes, fields) === digest ? read.bytes : null
        }
        const got = yield* upload(digest, uploadOf(digest, files[i], again))
        if (got._tag === "End") return got
        let media = got.media
        if (
          !options.rerender && !got.fresh &&
          Date.parse(media.created_at) < Date.now() - Duration.toMillis(replayWindow)
        ) {
          return {
            _tag: "End",
            patch: {
              status: "skipped",
              media_id: media.id,
              error_code: "rendered_before",
              error_message: `uploaded for this very render on ${media.created_at} (${media.id}); the render's id is ` +
                `not in this manifest, and the service forgets its key after 24 hours: --rerender renders it again (charged)`
            }
          } as const
        }
        let take = known?.media_id === media.id ? parseKey(known.idempotency_key)?.take ?? 1 : 1
        const tried = new Set([media.id])
        while (true) {
          if (state.stopped !== null) return { _tag: "End", patch: { status: "left" } } as const
          const key = keyOf(digest, take)
          yield* set(i, { status: "creating", idempotency_key: key, media_id: media.id, render_id: null })
          // a create under way is given a few seconds when the batch is stopped, its id written into the manifest
          const created = yield* Effect.result(toTheEnd(
            patiently(client.createRender({ ...fields, media_id: media.id }, { idempotencyKey: key })).pipe(
              Effect.tap((c) =>
                options.rerender && c.replayed ? Effect.void : set(i, { render_id: c.render.id, status: "rendering" })
              )
            ),
            createGrace
          ))
          if (created._tag === "Success") {
            // asked to render again: a render this key already has is passed by
            if (options.rerender && created.success.replayed) {
              take++
              continue
            }
            return { _tag: "Render", id: created.success.render.id, key, mediaId: media.id } as const
          }
          const e = created.failure
          if (e instanceof ApiError && e.replayed === true && (options.rerender || walkCodes.includes(e.code))) {
            take++
            continue
          }
          if (e instanceof ApiError && isApiError(e, ["idempotency_conflict"])) {
            // the key was used with another upload of this photo and fields: another tagged one may be it
            const other = (yield* library).byTag.get(uploadTag(digest))?.find((m) => !tried.has(m.id))
            if (other !== undefined) {
              tried.add(other.id)
              media = other
              continue
            }
            if (options.rerender) {
              take++
              continue
            }
            return {
              _tag: "End",
              patch: {
                status: "failed",
                error_code: e.code,
                error_message: `${e.message}: this photo with these fields was rendered in the last 24 hours from an ` +
                  `upload no longer in the library, and its render's id is not in this manifest`
              }
            } as const
          }
          if (e instanceof ApiError && isApiError(e, stopCodes)) {
            stop(e)
            return { _tag: "End", patch: { status: "left", error_code: e.code, error_message: e.message } } as const
          }
          if (e instanceof InvalidRequest) {
            // the client found the fields wrong before sending (a caption row's value): the service's rule, so its code
            return {
              _tag: "End",
              patch: {
                status: "failed",
                error_code: "validation_failed",
                error_message: `${e.message} (nothing was sent)`
              }
            } as const
          }
          if (e instanceof ApiError && e.status < 500 && e.status !== 401 && e.status !== 403 && e.status !== 429) {
            return { _tag: "End", patch: { status: "failed", error_code: e.code, error_message: e.message } } as const
          }
          return yield* Effect.fail(e)
        }
      })
    const rendered = perDigest<Outcome, unknown>()

    /** Read, and find or make the upload (unless the render is known); null when the photo is done or skipped. */
    const prepare = (i: number, t0: Stopwatch) =>
      Effect.gen(function*() {
        const file = files[i]
        const end = (patch: Partial<Entry>) =>
          Effect.as(set(i, { ...patch, ...(patch.status === "skipped" ? { seconds: t0.seconds() } : {}) }), null)
        const read = problems.get(file) ?? readPhoto(file)
        if (!("bytes" in read)) {
          return yield* end({ status: "skipped", error_code: read.code, error_message: read.message })
        }
        const fields = body(Path.basename(file))
        const digest = digestOf(read.bytes, fields)
        if (parseKey(entries[i].idempotency_key)?.digest !== digest) {
          // another photo under this path, or other fields, than the manifest's line: that line is kept as it was
          const line = entries[i]
          if (line.media_id !== null || line.render_id !== null || line.output !== null) {
            kept.push(line)
          }
          entries[i] = blank(file)
        } else if (options.rerender && entries[i].render_id !== null) {
          // the render replaced is kept in the manifest; its MP4 is replaced with the new one
          kept.push({ ...entries[i], output: null, bytes: null })
        }
        // the key from the start: a later run knows this line by it
        yield* set(i, {
          sha256: createHash("sha256").update(read.bytes).digest("hex"),
          idempotency_key: entries[i].idempotency_key ?? knownOf(digest, file)?.idempotency_key ?? keyOf(digest, 1)
        })
        if (
          !options.rerender && owned[i] !== null && outputOf(entries[i]) === Path.join(out, owned[i]) &&
          intact(entries[i])
        ) {
          // done in an earlier run, its MP4 still there: nothing to ask
          return yield* end({ output: outputOf(entries[i]) })
        }
        const job = { digest, fields }
        if (!options.rerender && knownOf(digest, file)?.render_id != null) return job
        yield* set(i, { status: "uploading" }, false)
        const got = yield* upload(digest, uploadOf(digest, file, () => read.bytes))
        if (got._tag === "End") return yield* end(got.patch)
        // `uploaded` only when it is true that no render was asked for with it: a later run relies on it
        yield* set(i, { media_id: got.media.id, status: got.fresh ? "uploaded" : "queued" })
        return job
      })

    /** Create (unless found), wait, download. */
    const produce = (i: number, t0: Stopwatch, job: { digest: string; fields: RenderOptions }) =>
      Effect.gen(function*() {
        const outcome = yield* rendered(job.digest, renderOf(i, job.digest, job.fields))
        if (outcome._tag === "End") {
          const ended = outcome.patch.status === "failed" || outcome.patch.status === "skipped"
          return yield* set(i, { ...outcome.patch, ...(ended ? { seconds: t0.seconds() } : {}) })
        }
        yield* set(i, {
          render_id: outcome.id,
          idempotency_key: outcome.key,
          media_id: outcome.mediaId,
          status: "rendering",
          error_code: null,
          error_message: null
        })
        const done = yield* Effect.result(client.waitForRender(outcome.id, {
          deadline: options.deadline ?? "20 minutes",
          onProgress: (r) => Effect.runSync(set(i, { progress: r.progress }, false))
        }))
        if (done._tag === "Failure") {
          if (done.failure instanceof WaitTimeout) {
            return yield* set(i, {
              status: "failed",
              error_code: "deadline",
              error_message: `still ${done.failure.status} at the deadline; it goes on`
            })
          }
          return yield* Effect.fail(done.failure)
        }
        const r = done.success
        if (r.status !== "completed") {
          return yield* set(i, {
            status: r.status === "canceled" ? "canceled" : "failed",
            progress: r.progress,
            error_code: r.error?.code ?? r.status,
            error_message: r.error?.message ?? null,
            seconds: t0.seconds()
          })
        }
        yield* set(i, { status: "downloading", progress: 100 }, false)
        const saved = yield* downloadToFile(client, r.id, Path.join(out, names[i]), undefined, {
          size: r.asset?.byte_size ?? null
        }, { place: place(i) })
        yield* set(i, { status: "completed", output: saved.path, bytes: saved.bytes, seconds: t0.seconds() })
      })

    const photo = (i: number) =>
      Effect.gen(function*() {
        const t0 = stopwatch()
        const prepared = yield* uploads.withPermits(1)(t0.timing(prepare(i, t0)))
        if (prepared === null) return
        yield* renders.withPermits(1)(t0.timing(produce(i, t0, prepared)))
      })

    yield* Effect.sync(save)
    yield* Effect.forEach(files, (_, i) => photo(i), { concurrency: "unbounded", discard: true }).pipe(
      Effect.ensuring(Effect.sync(save))
    )
    const count = (s: Status | ReadonlyArray<Status>) =>
      entries.filter((e) => (typeof s === "string" ? [s] : s).includes(e.status)).length
    const left = count("left")
    return {
      entries,
      manifest,
      counts: { completed: count("completed"), failed: count(["failed", "canceled"]), skipped: count("skipped"), left },
      stopped: state.stopped === null ? null : { ...state.stopped, left },
      seconds: (Date.now() - started) / 1000
    } satisfies Result
  })
