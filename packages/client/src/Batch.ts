import { canonicalJson } from "@pic2video/domain/Idempotency"
import * as Requests from "@pic2video/domain/Requests"
import { Data, Duration, Effect } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as Path from "node:path"
import { type Client, type CreateRenderBody, type Render, toTheEnd } from "./Client.ts"
import { ApiError, InvalidRequest, WaitTimeout } from "./Errors.ts"
import { downloadToFile, uploadFile } from "./Files.ts"

/**
 * A batch of renders, one per photo, that can be stopped at any moment and run again: each photo is
 * uploaded once, each render created under an `Idempotency-Key` derived from the photo's bytes and
 * its render options (a re-run never charges twice), and the manifest in the output directory
 * (`batch.jsonl`, rewritten whole at each change) says where every photo stands. Node and Deno
 * (node:fs), as Files.ts.
 */

/** The render fields a batch sets: everything of a create but the photo. */
export type RenderOptions = Omit<CreateRenderBody, "media_id">

/**
 * Where a photo stands. Finished: `completed` (the MP4 is saved), `failed` / `canceled` (the render
 * or one of its requests did not succeed), `skipped` (not a photo the service takes), `left` (not
 * rendered: the batch stopped at the spend cap or quota). Under way: the rest.
 */
export type Status =
  | "queued"
  | "uploading"
  | "uploaded"
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
  readonly idempotency_key: string | null
  readonly status: Status
  /** The render's progress, 0–100. */
  readonly progress: number
  /** The service's error code, or `deadline` (the wait ended first; the render goes on). */
  readonly error_code: string | null
  readonly error_message: string | null
  /** The MP4, once saved. */
  readonly output: string | null
  readonly bytes: number | null
  /** The photo's own time in the run that finished it: uploading, then create to MP4 (not waiting for a slot). */
  readonly seconds: number | null
}

export interface Options {
  /** Photos, and directories whose files (not sub-directories; not dot files) are taken in name order. */
  readonly photos: ReadonlyArray<string>
  /** Where the MP4s (named after the photos) and `batch.jsonl` go; made if missing. */
  readonly out: string
  /** Render fields for every photo. */
  readonly render?: RenderOptions
  /** Per photo, by file name (no directory): fields that replace `render`'s (see `readCaptions`). */
  readonly captions?: ReadonlyMap<string, RenderOptions>
  /** Photos in flight at once: at most this many uploads, and this many renders (create to download). Default 2. */
  readonly concurrency?: number
  /** How long to wait for one render. Default 20 minutes. */
  readonly deadline?: Duration.DurationInput
  /** Called with every change of a photo's state (and each render progress). */
  readonly onUpdate?: (entry: Entry, index: number, all: ReadonlyArray<Entry>) => void
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

/** A path given that is neither a file nor a directory, or a captions file that cannot be read. */
export class BatchInputError extends Data.TaggedError("BatchInputError")<{ readonly message: string }> {}

export const defaultConcurrency = 2
export const manifestName = "batch.jsonl"

/** The key of one render: the photo's bytes and its options, so that a re-run asks for the very same render. */
export const idempotencyKey = (photo: Uint8Array, options: RenderOptions) =>
  `p2v-batch:${createHash("sha256").update(photo).update(canonicalJson(options)).digest("hex")}`

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
        captions.set(Path.basename(row.file), captionOf(row, where))
      }
      return captions
    },
    catch: (e) =>
      e instanceof BatchInputError
        ? e
        : new BatchInputError({ message: `cannot read ${path}: ${(e as Error).message}` })
  })

// ---- the batch ----------------------------------------------------------------------------------

/** The files named, directories opened (their files in name order, no dot files). */
const expand = (paths: ReadonlyArray<string>) =>
  Effect.try({
    try: () =>
      paths.flatMap((p) => {
        const stat = fs.statSync(p, { throwIfNoEntry: false })
        if (stat === undefined) throw new BatchInputError({ message: `no such file or directory: ${p}` })
        if (!stat.isDirectory()) return [p]
        return fs.readdirSync(p, { withFileTypes: true })
          .filter((d) => d.isFile() && !d.name.startsWith("."))
          .map((d) => Path.join(p, d.name))
          .sort()
      }),
    catch: (e) => e instanceof BatchInputError ? e : new BatchInputError({ message: (e as Error).message })
  })

/** Each photo's MP4, named after it; a name already taken gets `-2`, `-3` … in the order given. */
const outputNames = (files: ReadonlyArray<string>, out: string) => {
  const taken = new Set<string>()
  return files.map((f) => {
    const base = Path.basename(f, Path.extname(f))
    let name = `${base}.mp4`
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}.mp4`
    taken.add(name)
    return Path.join(out, name)
  })
}

const readManifest = (path: string): Array<Entry> => {
  if (!fs.existsSync(path)) return []
  return fs.readFileSync(path, "utf8").split("\n").flatMap((line) => {
    try {
      const e = JSON.parse(line)
      return typeof e === "object" && e !== null && typeof e.photo === "string" ? [e as Entry] : []
    } catch {
      return []
    }
  })
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
    (e) => Effect.zipRight(Effect.sleep(Duration.seconds(e.retryAfter ?? 1)), patiently(call, rounds - 1))
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

/**
 * Runs the batch. Fails (leaving the manifest as it stood) only when the batch cannot go on at all:
 * a photo path that does not exist, the service unreachable or answering not as the API, the key
 * refused (401/403). Interrupted (Ctrl-C), it stops at once but finishes a create under way, so the
 * manifest has its render id; renders already accepted go on, and a re-run collects them.
 */
export const run = (client: Client, options: Options) =>
  Effect.gen(function*() {
    const started = Date.now()
    const files = yield* expand(options.photos)
    const concurrency = Math.max(1, options.concurrency ?? defaultConcurrency)
    fs.mkdirSync(options.out, { recursive: true })
    const manifest = Path.join(options.out, manifestName)
    const before = readManifest(manifest)
    const byKey = new Map(before.filter((e) => e.idempotency_key !== null).map((e) => [e.idempotency_key!, e]))
    const mediaBySha = new Map(
      before.filter((e) => e.sha256 !== null && e.media_id !== null).map((e) => [e.sha256!, e.media_id!])
    )
    const outputs = outputNames(files, options.out)

    const entries: Array<Entry> = files.map((photo) => ({
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
    }))
    /** Rewritten whole, and renamed into place: a kill at any moment leaves the last complete manifest. */
    const save = () => {
      fs.writeFileSync(`${manifest}.partial`, entries.map((e) => JSON.stringify(e)).join("\n") + "\n")
      fs.renameSync(`${manifest}.partial`, manifest)
    }
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
    const uploads = yield* Effect.makeSemaphore(concurrency)
    const renders = yield* Effect.makeSemaphore(concurrency)
    const body = (name: string): RenderOptions => ({ ...options.render, ...options.captions?.get(name) })

    /** Upload (or find the earlier upload of) photo i; null when it is skipped or left. */
    const prepare = (i: number, t0: Stopwatch) =>
      Effect.gen(function*() {
        const file = files[i]
        const size = fs.statSync(file).size
        const skip = (code: string, message: string) =>
          Effect.as(
            set(i, { status: "skipped", error_code: code, error_message: message, seconds: t0.seconds() }),
            null
          )
        if (size > Requests.maxUploadBytes) return yield* skip("payload_too_large", `over ${Requests.uploadLimitText}`)
        const bytes = new Uint8Array(fs.readFileSync(file))
        if (photoType(bytes) === null) return yield* skip("unsupported_media_type", `not ${Requests.photoTypesText}`)
        const sha256 = createHash("sha256").update(bytes).digest("hex")
        const fields = body(Path.basename(file))
        const key = idempotencyKey(bytes, fields)
        yield* set(i, { sha256, idempotency_key: key })
        const earlier = byKey.get(key)
        if (
          earlier?.status === "completed" && earlier.output !== null &&
          fs.statSync(earlier.output, { throwIfNoEntry: false })?.size === earlier.bytes
        ) {
          // done in an earlier run, its MP4 still there: nothing to ask
          yield* set(i, { ...earlier, photo: file })
          return null
        }
        if (earlier?.render_id != null) {
          // a render created by an earlier run: followed, not created again
          const found = yield* Effect.either(patiently(client.getRender(earlier.render_id)))
          if (found._tag === "Right") {
            yield* set(i, { media_id: earlier.media_id, render_id: earlier.render_id })
            return { fields, key, mediaId: earlier.media_id!, render: found.right }
          }
          if (!isApiError(found.left, ["render_not_found"])) return yield* Effect.fail(found.left)
        }
        if (state.stopped !== null) return yield* Effect.as(set(i, { status: "left" }), null)
        const known = mediaBySha.get(sha256)
        if (known !== undefined) {
          // uploaded by an earlier run; still there? (its preview answers 404 once archived)
          const there = yield* Effect.either(patiently(client.preview(known)))
          if (there._tag === "Right") {
            yield* set(i, { media_id: known, status: "uploaded" })
            return { fields, key, mediaId: known, render: null }
          }
          if (!isApiError(there.left, ["unknown_media"])) return yield* Effect.fail(there.left)
        }
        yield* set(i, { status: "uploading" }, false)
        const uploaded = yield* Effect.either(patiently(uploadFile(client, file, { label: Path.basename(file) })))
        if (uploaded._tag === "Left") {
          const e = uploaded.left
          if (e instanceof ApiError && isApiError(e, stopCodes)) {
            stop(e)
            return yield* Effect.as(set(i, { status: "left", error_code: e.code, error_message: e.message }), null)
          }
          if (e instanceof ApiError && isApiError(e, skipCodes)) return yield* skip(e.code, e.message)
          return yield* Effect.fail(e)
        }
        mediaBySha.set(sha256, uploaded.right.id)
        yield* set(i, { media_id: uploaded.right.id, status: "uploaded" })
        return { fields, key, mediaId: uploaded.right.id, render: null as Render | null }
      })

    /** Create (unless found), wait, download. */
    const produce = (
      i: number,
      t0: Stopwatch,
      p: { fields: RenderOptions; key: string; mediaId: string; render: Render | null }
    ) =>
      Effect.gen(function*() {
        let render = p.render
        if (render === null) {
          if (state.stopped !== null) return yield* set(i, { status: "left" })
          // a create under way is finished even when the batch is stopped, its id written into the manifest
          const created = yield* Effect.either(toTheEnd(
            patiently(client.createRender({ ...p.fields, media_id: p.mediaId }, { idempotencyKey: p.key })).pipe(
              Effect.tap((c) => set(i, { render_id: c.render.id, status: "rendering", progress: 0 }))
            )
          ))
          if (created._tag === "Left") {
            const e = created.left
            if (e instanceof ApiError && isApiError(e, stopCodes)) {
              stop(e)
              return yield* set(i, { status: "left", error_code: e.code, error_message: e.message })
            }
            if (e instanceof InvalidRequest) {
              // the client found the fields wrong before sending (a caption row's value): the service's rule, so its code
              return yield* set(i, {
                status: "failed",
                error_code: "validation_failed",
                error_message: `${e.message} (nothing was sent)`,
                seconds: t0.seconds()
              })
            }
            if (e instanceof ApiError && e.status < 500 && e.status !== 401 && e.status !== 403 && e.status !== 429) {
              return yield* set(i, {
                status: "failed",
                error_code: e.code,
                error_message: e.message,
                seconds: t0.seconds()
              })
            }
            return yield* Effect.fail(e)
          }
          render = created.right.render as Render
        }
        yield* set(i, { render_id: render.id, status: "rendering", progress: render.progress })
        const done = yield* Effect.either(client.waitForRender(render.id, {
          deadline: options.deadline ?? "20 minutes",
          onProgress: (r) => Effect.runSync(set(i, { progress: r.progress }, false))
        }))
        if (done._tag === "Left") {
          if (done.left instanceof WaitTimeout) {
            return yield* set(i, {
              status: "failed",
              error_code: "deadline",
              error_message: `still ${done.left.status} at the deadline; it goes on`
            })
          }
          return yield* Effect.fail(done.left)
        }
        const r = done.right
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
        const saved = yield* downloadToFile(client, r.id, outputs[i], undefined, { size: r.asset?.byte_size ?? null })
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
