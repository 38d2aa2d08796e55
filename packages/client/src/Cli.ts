import { Requests } from "@pic2video/domain"
import { Config, Console, Duration, Effect, Option } from "effect"
import { Argument, CliError, CliOutput, Command, Flag } from "effect/cli"
import * as fs from "node:fs"
import * as Path from "node:path"
import * as Batch from "./Batch.ts"
import * as Client from "./Client.ts"
import { ApiError, InvalidRequest, TransportError, UnexpectedAnswer, WaitTimeout } from "./Errors.ts"
import { downloadToFile, uploadFile } from "./Files.ts"
import { size as sizeText } from "./Guard.ts"
import * as Help from "./Help.ts"
import type * as Launch from "./Launch.ts"
import { printable } from "./Printable.ts"
import * as Progress from "./Progress.ts"
import * as Version from "./Version.ts"

/**
 * `p2v`: the API from a shell, for API users (the operator's commands are `npm run admin`).
 * The key comes from P2V_API_KEY, the service from P2V_BASE_URL. Exit codes: see `exitCodes`.
 */
export const exitCodes = {
  ok: 0,
  /** anything unexpected */
  failure: 1,
  /** bad arguments (including a value the API refuses, found before sending), or P2V_API_KEY missing */
  usage: 2,
  /** the service refused the request (the error's code is printed) */
  refused: 3,
  /** the render or import ended `failed` or `canceled` */
  unsuccessful: 4,
  /** --wait reached its deadline; the render or import goes on */
  deadline: 5,
  /** the service could not be reached, or did not answer in time */
  unreachable: 6,
  /** the service answered something that is not the API: not JSON, too large, too deep, a redirect to another origin, an unknown shape */
  unexpectedAnswer: 7,
  /** `p2v batch` stopped creating renders at the spend cap or quota (the ones accepted were collected) */
  stoppedByCap: 8,
  /** Ctrl-C: stopped waiting; nothing was canceled */
  interrupted: 130
} as const

/** A batch stopped creating at the spend cap or quota; what it had accepted was collected. */
class StoppedByCap extends Error {}
/** Bad arguments; an empty message: the help has been printed instead. */
class UsageError extends Error {}
/** A finished render or import that did not succeed; its document has been printed. */
class Unsuccessful extends Error {}

/** A switch: off unless given (no `--no-…` form, as before). */
const toggle = (name: string) => Flag.Boolean(name).pipe(Flag.withoutNegation, Flag.withDefault(false))

/** A refused value, in the words the help and the error use (`--concurrency must be 1 to 32`). */
const refuse = (message: string) => Effect.fail(new CliError.ValidationError({ message }))

/**
 * A path as given (not made absolute: it is printed back and written to the manifest), checked as
 * Effect 3's did: `exists` (else "Path 'x' must exist"), and when it exists, of its `type`.
 */
const checkPath = (type: "file" | "directory" | "either", exists: "yes" | "either") => (path: string) =>
  Effect.suspend(() => {
    let stat: fs.Stats | undefined
    try {
      stat = fs.statSync(path)
    } catch {
      stat = undefined
    }
    if (stat === undefined) return exists === "yes" ? refuse(`Path '${path}' must exist`) : Effect.succeed(path)
    if (type === "file" && !stat.isFile()) return refuse(`Expected path '${path}' to be a regular file`)
    if (type === "directory" && !stat.isDirectory()) return refuse(`Expected path '${path}' to be a directory`)
    return Effect.succeed(path)
  })
const pathFlag = (name: string, type: "file" | "directory", exists: "yes" | "either" = "either") =>
  Flag.String(name).pipe(Flag.withMetavar(type), Flag.mapEffect(checkPath(type, exists)))
const pathArgument = (name: string, type: "file" | "either") =>
  Argument.String(name).pipe(Argument.mapEffect(checkPath(type, "yes")))

const json = toggle("json").pipe(
  Flag.withDescription("Print the result as JSON on stdout (no progress output).")
)
const deadline = Flag.Int("deadline").pipe(
  Flag.withDescription("With --wait: minutes to wait at most (default 20). The render goes on after it."),
  Flag.withDefault(20)
)

const env = () => {
  const apiKey = process.env.P2V_API_KEY ?? ""
  if (apiKey === "") throw new UsageError("set P2V_API_KEY to an API key")
  const baseUrl = process.env.P2V_BASE_URL ?? "http://localhost:8080"
  return { apiKey, baseUrl }
}

/** A number of seconds, from its flag, else its environment variable, else the client's default. */
const seconds = (flag: string, variable: string, fallback: Duration.Input, what: string) => {
  const byDefault = Duration.toSeconds(fallback)
  return Flag.Finite(flag).pipe(
    Flag.withMetavar("SECONDS"),
    Flag.withFallbackConfig(Config.Number(variable).pipe(Config.withDefault(byDefault))),
    Flag.withDescription(`${what} Default ${byDefault} (${variable}).`),
    Flag.mapEffect((n) => n > 0 ? Effect.succeed(n) : refuse(`--${flag} must be more than 0`))
  )
}

/** `p2v`'s own options, before the command: how long to wait for the service. */
const rootConfig = {
  firstByteTimeout: seconds(
    "first-byte-timeout",
    "P2V_FIRST_BYTE_TIMEOUT",
    Client.defaults.firstByteTimeout,
    "Seconds to wait for an answer to begin (connecting included)."
  ),
  idleTimeout: seconds(
    "idle-timeout",
    "P2V_IDLE_TIMEOUT",
    Client.defaults.idleTimeout,
    "Seconds an answer or an upload may pause."
  )
}
const root = Command.make("p2v").pipe(Command.withSharedFlags(rootConfig))

const clientWith = (extra: Pick<Client.ClientOptions, "onRetry"> = {}) =>
  Effect.flatMap(root, (o) =>
    Effect.suspend(() => Effect.try({ try: env, catch: (e) => e as UsageError })).pipe(
      Effect.flatMap((e) =>
        Client.makeWithFetch({
          ...e,
          ...extra,
          firstByteTimeout: Duration.seconds(o.firstByteTimeout),
          idleTimeout: Duration.seconds(o.idleTimeout)
        })
      )
    ))
const client = clientWith()

const size = (m: Client.Media) => (m.width === null || m.height === null ? "-" : `${m.width}x${m.height}`)
const mediaLine = (m: Client.Media) => [m.id, m.created_at, m.mime_type, size(m), JSON.stringify(m.label)].join("  ")

/** stdout: the document as JSON, or as text; either way what the service said is escaped (Printable.ts). */
const print = (asJson: boolean, doc: unknown, text: () => string) =>
  Console.log(printable(asJson ? JSON.stringify(doc, null, 2) : text(), { lines: true }))

/** A line on stderr that carries what the service said. */
const note = (line: string) => process.stderr.write(`${printable(line)}\n`)

/** Waits for a render, drawing its progress; Ctrl-C stops the wait and says how to look again. */
const waitForRender = (c: Client.Client, id: string, minutes: number, mode: Progress.Mode) => {
  const progress = Progress.reporter(mode)
  return c.waitForRender(id, {
    deadline: `${minutes} minutes`,
    onProgress: (r) =>
      progress.update(`${Progress.bar(r.progress / 100)} ${r.status} ${id}`, `${id} ${r.status} ${r.progress}%`)
  }).pipe(
    Effect.tap((r) => Effect.sync(() => progress.done(`${Progress.bar(r.progress / 100)} ${r.status} ${id}`))),
    Effect.onInterrupt(() =>
      Effect.sync(() => {
        progress.done()
        note(`stopped waiting; ${id} goes on (p2v status ${id})`)
      })
    ),
    Effect.tapError(() => Effect.sync(() => progress.done()))
  )
}

/** Saves the MP4; `size` is the render's `asset.byte_size`, which bounds the download exactly. */
const download = (c: Client.Client, id: string, out: string, mode: Progress.Mode, size: number | null) => {
  const progress = Progress.reporter(mode)
  return downloadToFile(c, id, out, (n, total) =>
    progress.update(
      total === null
        ? `downloading ${Progress.bytes(n)}`
        : `${Progress.bar(n / total)} ${Progress.bytes(n)} of ${Progress.bytes(total)}`,
      total === null ? "downloading" : n === total ? "downloaded" : "downloading"
    ), { size }).pipe(
      Effect.tap((f) => Effect.sync(() => progress.done(`saved ${f.path} (${Progress.bytes(f.bytes)})`)))
    )
}

/**
 * Uploads one file with a bar of its bytes: on a terminal redrawn as the percentage changes, as plain
 * lines each quarter otherwise; once every byte is sent, the bar says the service is reading them.
 */
const uploadWithBar = (
  c: Client.Client,
  file: string,
  mode: Progress.Mode,
  options: { label?: string; tags?: ReadonlyArray<string> } = {}
) => {
  const progress = Progress.reporter(mode)
  let shown = -1
  let sentAll = false
  // once the upload has ended (or was stopped), a late count from the body draws nothing
  let ended = false
  const end = (line?: string) => {
    ended = true
    progress.done(line)
  }
  const onProgress = (sent: number, total: number) => {
    const percent = total === 0 ? 100 : Math.floor((sent / total) * 100)
    if (ended || percent === shown) return
    shown = percent
    sentAll = sent === total
    const what = sentAll ? "sent, waiting for the service" : `uploading ${file}`
    progress.update(
      `${Progress.bar(total === 0 ? 1 : sent / total)} ${Progress.bytes(sent)} of ${Progress.bytes(total)} ${what}`,
      `${file} ${Math.floor(percent / 25)}`
    )
  }
  progress.update(`${Progress.bar(0)} uploading ${file}`, `${file} 0`)
  // the service's default label is "" (decisions.md); p2v labels by the file name, as its help and the portal do
  return uploadFile(c, file, { ...options, label: options.label ?? Path.basename(file), onProgress }).pipe(
    Effect.tap((m) => Effect.sync(() => end(`uploaded ${file} as ${m.id}`))),
    Effect.onInterrupt(() =>
      Effect.sync(() => {
        end()
        // a body cut short cannot be stored; one sent whole may have been
        process.stderr.write(
          sentAll
            ? `stopped; ${file} was sent whole and may have been stored (p2v media list)\n`
            : `stopped uploading ${file}; it was not stored\n`
        )
      })
    ),
    Effect.tapError(() => Effect.sync(() => end()))
  )
}

const uploadConfig = {
  files: pathArgument("FILE", "file").pipe(Argument.atLeast(1)),
  label: Flag.String("label").pipe(Flag.optional, Flag.withDescription("Label (default: the file name).")),
  tags: Flag.String("tag").pipe(Flag.atLeast(0), Flag.withDescription("A tag; repeat for several.")),
  json
}
const upload = Command.make(
  "upload",
  uploadConfig,
  ({ files, label, tags, json }) =>
    Effect.gen(function*() {
      const c = yield* client
      const mode = Progress.modeFor(json)
      const uploaded: Array<Client.Media> = []
      for (const file of files) {
        uploaded.push(yield* uploadWithBar(c, file, mode, { label: Option.getOrUndefined(label), tags }))
      }
      yield* print(json, uploaded, () => uploaded.map(mediaLine).join("\n"))
    })
).pipe(
  Command.withDescription(
    `Upload photos (${Requests.photoTypesText}; up to ${Requests.maxUploadMiB} MiB each). Prints each photo's media id.`
  )
)

/** The render's fields as options, shared by `render` and `batch`. */
const renderFields = {
  quote: Flag.String("quote").pipe(Flag.optional, Flag.withDescription("The caption (up to 500 characters).")),
  captionStyle: Flag.Literals("caption-style", Requests.captionStyles).pipe(Flag.optional),
  textColor: Flag.Literals("text-color", Requests.textColors).pipe(Flag.optional),
  textSize: Flag.Literals("text-size", Requests.textSizes).pipe(Flag.optional),
  bold: toggle("bold").pipe(Flag.withDescription("Bold caption text.")),
  boldOutline: toggle("bold-outline").pipe(Flag.withDescription("Outline the bold caption text.")),
  pageTheme: Flag.String("page-theme").pipe(Flag.optional),
  imageClass: Flag.Literals("image-class", Requests.imageClasses).pipe(Flag.optional),
  subPrompt: Flag.String("sub-prompt").pipe(Flag.optional),
  renderPrompt: Flag.String("render-prompt").pipe(Flag.optional),
  metadata: Flag.KeyValuePair("metadata").pipe(
    Flag.optional,
    Flag.withDescription("key=value, repeatable (string values).")
  )
}

type RenderFields = Command.Command.Config.Infer<typeof renderFields>

/** The fields given, and only those (a field not given is not sent). */
const renderBody = (o: RenderFields): Batch.RenderOptions => {
  const optional = <A>(o: Option.Option<A>) => Option.getOrUndefined(o)
  const body: Batch.RenderOptions = {
    quote: optional(o.quote),
    caption_style: optional(o.captionStyle),
    text_color: optional(o.textColor),
    text_size: optional(o.textSize),
    ...(o.bold ? { bold: true } : {}),
    ...(o.boldOutline ? { bold_outline: true } : {}),
    page_theme: optional(o.pageTheme),
    image_class: optional(o.imageClass),
    sub_prompt: optional(o.subPrompt),
    render_prompt: optional(o.renderPrompt),
    metadata: Option.getOrUndefined(o.metadata)
  }
  return JSON.parse(JSON.stringify(body)) // drops the fields not given
}

const renderConfig = {
  source: Argument.String("MEDIA_ID|FILE").pipe(
    Argument.withDescription("A media id, or a photo file to upload first.")
  ),
  ...renderFields,
  idempotencyKey: Flag.String("idempotency-key").pipe(
    Flag.optional,
    Flag.withDescription("Default: a new key (kept across retries).")
  ),
  wait: toggle("wait").pipe(
    Flag.withDescription("Wait until the render is finished, showing its progress.")
  ),
  out: pathFlag("out", "file").pipe(Flag.optional, Flag.withDescription("Save the MP4 here (implies --wait).")),
  deadline,
  json
}
const render = Command.make(
  "render",
  renderConfig,
  (o) =>
    Effect.gen(function*() {
      const c = yield* client
      const mode = Progress.modeFor(o.json)
      let mediaId = o.source
      if (fs.existsSync(o.source) && fs.statSync(o.source).isFile()) {
        mediaId = (yield* uploadWithBar(c, o.source, mode)).id
      }
      // Ctrl-C during the create waits for its answer: the render id is printed, never lost
      const created = yield* Client.toTheEnd(c.createRender(
        { media_id: mediaId, ...renderBody(o) },
        { idempotencyKey: Option.getOrUndefined(o.idempotencyKey) }
      ))
      const id = created.render.id
      if (!o.wait && Option.isNone(o.out)) {
        return yield* print(o.json, created.render, () => id)
      }
      if (mode !== "quiet") note(`render ${id} queued${created.replayed ? " (replayed)" : ""}`)
      const done = yield* waitForRender(c, id, o.deadline, mode)
      if (done.status !== "completed") {
        yield* print(o.json, done, () =>
          `${id} ${done.status}: ${done.error?.code ?? ""} ${done.error?.message ?? ""}`.trim())
        return yield* Effect.fail(new Unsuccessful(done.status))
      }
      if (Option.isSome(o.out)) {
        yield* download(c, id, o.out.value, mode, done.asset?.byte_size ?? null)
      }
      yield* print(o.json, done, () =>
        `${id} completed${Option.isSome(o.out) ? ` -> ${o.out.value}` : ""}`)
    })
).pipe(
  Command.withDescription(
    "Create a render (the only call that costs money); --wait to follow it, --out to save the MP4."
  )
)

const clock = (seconds: number) => {
  const s = Math.max(0, Math.round(seconds))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`
}

/**
 * What `p2v batch` shows: on a terminal a table redrawn in place (counts, ETA, a row per photo
 * under way); otherwise one line per photo as it ends; nothing with --json.
 */
const batchView = (mode: Progress.Mode, concurrency: number, out: NodeJS.WriteStream = process.stderr) => {
  const started = Date.now()
  let drawn = 0
  let lastDraw = 0
  let ended = 0
  let waiting: { readonly until: number; readonly why: string } | null = null
  const name = (e: Batch.Entry) => Path.basename(e.photo)
  const line = (e: Batch.Entry, n: number, total: number) => {
    const head = `[${n}/${total}] ${e.status} ${e.photo}`
    switch (e.status) {
      case "completed": {
        // a name already taken in --out is never replaced: the MP4 got the next free one
        const natural = `${Path.basename(e.photo, Path.extname(e.photo))}.mp4`
        const taken = e.output !== null && Path.basename(e.output) !== natural ? `; ${natural} was taken` : ""
        return `${head} -> ${e.output} (${Progress.bytes(e.bytes ?? 0)}, ${(e.seconds ?? 0).toFixed(1)} s${taken})`
      }
      case "left":
        return `${head}: not rendered`
      default:
        return `${head}: ${e.error_code ?? ""}${e.error_message !== null ? `: ${e.error_message}` : ""}`
    }
  }
  const table = (all: ReadonlyArray<Batch.Entry>) => {
    const n = (...s: Array<Batch.Status>) => all.filter((e) => s.includes(e.status)).length
    const done = n("completed")
    const over = n("completed", "failed", "canceled", "skipped", "left")
    const elapsed = (Date.now() - started) / 1000
    const eta = over === 0 ? "…" : clock((elapsed / over) * (all.length - over))
    const rows = all.filter((e) => !Batch.finished(e.status) && e.status !== "queued").slice(0, concurrency * 2)
    const width = Math.max(40, (out.columns ?? 80) - 1)
    const cut = (s: string) => (s.length > width ? `${s.slice(0, width - 1)}…` : s)
    const wait = waiting !== null && waiting.until > Date.now()
      ? [`  waiting ${Math.ceil((waiting.until - Date.now()) / 1000)} s: ${waiting.why}`]
      : []
    return [
      `p2v batch: ${all.length} photos, concurrency ${concurrency}, ${clock(elapsed)} elapsed, ETA ${eta}`,
      `  done ${done}  rendering ${n("creating", "rendering", "downloading")}  queued ${
        n("queued", "uploading", "uploaded")
      }  failed ${n("failed", "canceled")}` +
      `  skipped ${n("skipped")}  left ${n("left")}`,
      ...rows.map((e) =>
        `  ${name(e).padEnd(18).slice(0, 18)} ${Progress.bar(e.progress / 100)} ${e.status}${
          e.render_id !== null ? ` ${e.render_id}` : ""
        }`
      ),
      ...wait
    ].map((l) => cut(printable(l)))
  }
  const draw = (all: ReadonlyArray<Batch.Entry>, force = false) => {
    if (!force && Date.now() - lastDraw < 100) return
    lastDraw = Date.now()
    const lines = table(all)
    // back to the table's first line, clear to the end of the screen, draw again
    out.write(`${drawn > 0 ? `\x1b[${drawn}F` : ""}\x1b[0J${lines.join("\n")}\n`)
    drawn = lines.length
  }
  let latest: ReadonlyArray<Batch.Entry> = []
  return {
    update: (e: Batch.Entry, _i: number, all: ReadonlyArray<Batch.Entry>) => {
      latest = all
      if (mode === "tty") return draw(all, Batch.finished(e.status))
      if (mode === "plain" && Batch.finished(e.status)) {
        ended++
        out.write(`${printable(line(e, ended, all.length))}\n`)
      }
    },
    retry: (e: ApiError | TransportError, millis: number) => {
      const why = e instanceof ApiError
        ? `${e.code}${e.code === "rate_limit_exceeded" ? " (the key's rate limit)" : ""}`
        : "the service did not answer"
      waiting = { until: Date.now() + millis, why }
      if (mode === "tty") draw(latest, true)
      else if (mode === "plain") out.write(`waiting ${(millis / 1000).toFixed(0)} s: ${printable(why)}\n`)
    },
    end: () => {
      waiting = null
      if (mode === "tty" && latest.length > 0) draw(latest, true)
    }
  }
}

const batchConfig = {
  photos: pathArgument("PHOTO|DIR", "either").pipe(
    Argument.atLeast(1),
    Argument.withDescription("Photos, or directories of photos (their files, in name order).")
  ),
  out: pathFlag("out", "directory").pipe(
    Flag.withDescription(
      "Where the MP4s (named after the photos; a name taken gets -2, -3 …: no file is replaced) and batch.jsonl go."
    )
  ),
  ...renderFields,
  captions: pathFlag("captions", "file", "yes").pipe(
    Flag.optional,
    Flag.withDescription(
      "A CSV or JSONL file of render fields per photo, keyed by its file name (column \"file\"); each row names one of the photos."
    )
  ),
  concurrency: Flag.Int("concurrency").pipe(
    Flag.withDefault(Batch.defaultConcurrency),
    Flag.withDescription(`Photos uploading, and photos rendering, at once (default ${Batch.defaultConcurrency}).`),
    Flag.mapEffect((n) => n >= 1 && n <= 32 ? Effect.succeed(n) : refuse("--concurrency must be 1 to 32"))
  ),
  deadline: Flag.Int("deadline").pipe(
    Flag.withDescription(
      "Minutes to wait for one render at most (default 20); it goes on after it, and a re-run collects it."
    ),
    Flag.withDefault(20)
  ),
  rerender: toggle("rerender").pipe(
    Flag.withDescription(
      "Render every photo again, even one rendered before: each is charged again. Without it a photo is charged once."
    )
  ),
  json
}
const batch = Command.make(
  "batch",
  batchConfig,
  (o) =>
    Effect.gen(function*() {
      const mode = Progress.modeFor(o.json)
      const view = batchView(mode, o.concurrency)
      const c = yield* clientWith({ onRetry: view.retry })
      const captions = Option.isSome(o.captions) ? yield* Batch.readCaptions(o.captions.value) : undefined
      const result = yield* Batch.run(c, {
        photos: o.photos,
        out: o.out,
        render: renderBody(o),
        captions,
        concurrency: o.concurrency,
        deadline: `${o.deadline} minutes`,
        rerender: o.rerender,
        onUpdate: view.update
      }).pipe(
        Effect.ensuring(Effect.sync(view.end)),
        Effect.onInterrupt(() =>
          Effect.sync(() =>
            note(
              `stopped; renders already created go on: run the same command again to collect them (${
                Path.join(o.out, Batch.manifestName)
              })`
            )
          )
        )
      )
      const n = result.counts
      if (result.stopped !== null) {
        note(
          `stopped by the cap: ${result.stopped.left} left (${result.stopped.code}: ${result.stopped.message}); the renders accepted were collected`
        )
      }
      yield* print(o.json, result, () =>
        `${result.entries.length} photos: ${n.completed} completed, ${n.failed} failed, ${n.skipped} skipped, ${n.left} left ` +
        `in ${clock(result.seconds)}; manifest ${result.manifest}`)
      if (result.stopped !== null) {
        return yield* Effect.fail(new StoppedByCap())
      }
      if (n.failed > 0) {
        return yield* Effect.fail(new Unsuccessful("failed"))
      }
    })
).pipe(Command.withDescription(
  "Render every photo (upload, create, wait, download into --out), resumable: a re-run skips what is done, and the same photo with the same fields is charged once."
))

const statusConfig = { id: Argument.String("RENDER_ID"), wait: toggle("wait"), deadline, json }
const status = Command.make(
  "status",
  statusConfig,
  ({ id, wait, deadline, json }) =>
    Effect.gen(function*() {
      const c = yield* client
      const r = wait ? yield* waitForRender(c, id, deadline, Progress.modeFor(json)) : yield* c.getRender(id)
      yield* print(json, r, () =>
        [
          `${r.id}  ${r.status}  ${r.progress}%`,
          ...(r.asset !== null ? [`video: ${r.asset.url} (${Progress.bytes(r.asset.byte_size ?? 0)})`] : []),
          ...(r.error !== null ? [`error: ${r.error.code}: ${r.error.message}`] : [])
        ].join("\n"))
      if (wait && r.status !== "completed") return yield* Effect.fail(new Unsuccessful(r.status))
    })
).pipe(Command.withDescription("Show a render's status (--wait to follow it to the end)."))

const downloadConfig = {
  id: Argument.String("RENDER_ID"),
  out: pathFlag("out", "file").pipe(Flag.optional, Flag.withDescription("Default: RENDER_ID.mp4")),
  json
}
const downloadCommand = Command.make(
  "download",
  downloadConfig,
  ({ id, out, json }) =>
    Effect.gen(function*() {
      const c = yield* client
      // the render says how long its video is: the download may not be longer
      const r = yield* c.getRender(id)
      const f = yield* download(
        c,
        id,
        Option.getOrElse(out, () => `${id}.mp4`),
        Progress.modeFor(json),
        r.asset?.byte_size ?? null
      )
      yield* print(json, f, () => f.path)
    })
).pipe(Command.withDescription("Save a completed render's MP4."))

const mediaListConfig = {
  limit: Flag.Int("limit").pipe(Flag.optional),
  cursor: Flag.String("cursor").pipe(Flag.optional),
  json
}
const mediaList = Command.make(
  "list",
  mediaListConfig,
  ({ limit, cursor, json }) =>
    Effect.gen(function*() {
      const c = yield* client
      const list = yield* c.listMedia({ limit: Option.getOrUndefined(limit), cursor: Option.getOrUndefined(cursor) })
      yield* print(json, list, () =>
        [
          ...(list.data.length === 0 ? ["no photos"] : list.data.map(mediaLine)),
          ...(list.has_more ? [`more: p2v media list --cursor ${list.next_cursor}`] : [])
        ].join("\n"))
    })
).pipe(Command.withDescription("List photos, newest first."))

const mediaCommands = [mediaList] as const
const mediaConfig = {}
const media = Command.make("media", mediaConfig).pipe(
  Command.withDescription("The photo library."),
  Command.withSubcommands(mediaCommands)
)

const importConfig = { folder: Argument.String("FOLDER_ID"), wait: toggle("wait"), deadline, json }
const importCommand = Command.make(
  "import",
  importConfig,
  ({ folder, wait, deadline, json }) =>
    Effect.gen(function*() {
      const c = yield* client
      const created = yield* c.createImport(folder)
      if (!wait) return yield* print(json, created, () => `${created.id} ${created.status}`)
      const progress = Progress.reporter(Progress.modeFor(json))
      const line = (i: Client.MediaImport) => {
        const n = i.counts
        const handled = n.imported + n.skipped + n.failed
        return `${
          Progress.bar(n.discovered === 0 ? 0 : handled / n.discovered)
        } ${i.status} ${n.imported} imported, ${n.skipped} skipped, ${n.failed} failed of ${n.discovered}`
      }
      const done = yield* c.waitForImport(created.id, {
        deadline: `${deadline} minutes`,
        onProgress: (i) => progress.update(line(i))
      }).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            progress.done()
            note(`stopped waiting; ${created.id} goes on`)
          })
        ),
        Effect.tapError(() => Effect.sync(() => progress.done()))
      )
      progress.done(line(done))
      yield* print(json, done, () =>
        `${done.id} ${done.status}${done.stopped_reason !== null ? ` (${done.stopped_reason})` : ""}`)
      if (done.status === "failed") {
        return yield* Effect.fail(new Unsuccessful(done.status))
      }
    })
).pipe(Command.withDescription("Import the photos of a folder of the connected cloud drive."))

const usageConfig = { json }
const usage = Command.make("usage", usageConfig, ({ json }) =>
  Effect.gen(function*() {
    const u = yield* (yield* client).usage()
    yield* print(json, u, () =>
      `${u.aesthetic_quotes.used} render${u.aesthetic_quotes.used === 1 ? "" : "s"} since ${u.cycle_start}` +
      (u.aesthetic_quotes.included === null ? "" : ` of ${u.aesthetic_quotes.included} included`))
  })).pipe(Command.withDescription("Renders charged in the current billing cycle."))

const commands = [upload, render, batch, status, downloadCommand, media, importCommand, usage] as const

export const p2v = root.pipe(
  Command.withDescription("the Pic-to-Video API from a shell."),
  Command.withSubcommands(commands)
)

const version = Version.client

/** After the commands in `p2v --help`. */
const footer = `Environment:
  P2V_API_KEY   the API key (required)
  P2V_BASE_URL  the service (default http://localhost:8080)

Limits: an answer must begin within --first-byte-timeout and may pause at most --idle-timeout; \
a JSON answer is at most ${sizeText(Client.defaults.maxJsonBytes)}; a download is at most the render's \
byte_size (${sizeText(Client.defaults.maxDownloadBytes)} when unknown); a redirect to another origin is \
refused; control characters the service sends are printed as \\uXXXX escapes.

Exit codes:
  0    done
  1    unexpected failure
  2    bad arguments, or P2V_API_KEY not set
  3    refused by the service (error: CODE: message (request ID))
  4    the render or import ended failed or canceled (batch: some photo did)
  5    --wait reached its --deadline; the render goes on
  6    the service could not be reached, or did not answer in time
  7    unexpected answer from the service: not JSON, too large, nested too deep, a redirect to another origin, not the API's shape
  8    batch: stopped creating at the spend cap or quota (N left)
  130  Ctrl-C (nothing is canceled)`

/** The commands as help finds them by name (the lists given to `withSubcommands`), with their flags and arguments. */
const leaf = (command: Command.Command.Any, config: Command.Command.Config): Help.Node => ({
  command,
  config,
  children: []
})
const tree: Help.Node = {
  command: p2v,
  config: rootConfig,
  children: [
    leaf(upload, uploadConfig),
    leaf(render, renderConfig),
    leaf(batch, batchConfig),
    leaf(status, statusConfig),
    leaf(downloadCommand, downloadConfig),
    { command: media, config: mediaConfig, children: [leaf(mediaList, mediaListConfig)] },
    leaf(importCommand, importConfig),
    leaf(usage, usageConfig)
  ]
}
// the tree must list every command given to `withSubcommands`, in order
if (
  tree.children.some((c, i) => c.command !== commands[i]) || tree.children[5].children[0].command !== mediaCommands[0]
) {
  throw new Error("Cli.ts: the help tree does not match the commands")
}

/**
 * What effect/cli would print, as `p2v` prints it: its help is ours (Help.ts), a refused argument
 * is one line on stderr in the words `p2v` has always used, and `--version` the version alone.
 */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.sync(() => {
      switch (event._tag) {
        case "Version":
          process.stdout.write(`${Version.text}\n\n`)
          return
        case "Help":
          process.stdout.write(`${helpText(Help.find(tree, event.commandPath.slice(1)))}\n`)
          return
        case "InvalidInvocation":
          process.stderr.write(`${event.errors.map((e) => printable(refusal(e, event.commandPath))).join("\n")}\n\n`)
          return
      }
    })
}

/** A refused argument, in Effect 3's words (`Missing argument <RENDER_ID>`). */
const refusal = (e: CliError.NonShowHelpErrors, commandPath: ReadonlyArray<string>): string => {
  switch (e._tag) {
    case "MissingArgument":
      return `Missing argument <${e.argument}>`
    case "MissingOption":
      return `Expected to find option: '--${e.option}'`
    case "UnrecognizedOption":
      return `Received unknown argument: '${e.option}'`
    case "UnexpectedArgument":
      return `Received unknown argument: '${e.arguments[0] ?? ""}'`
    case "UnknownSubcommand": {
      const parent = Help.find(tree, (e.parent ?? commandPath).slice(1))
      const names = parent[parent.length - 1].children.map((c) => `'${c.command.name}'`)
      return `Invalid subcommand for ${parent.map((n) => n.command.name).join(" ")} - use one of ${names.join(", ")}`
    }
    case "InvalidValue":
      return invalidValue(e, commandPath)
    case "ValidationError":
    case "UserError":
    case "DuplicateOption":
      return e.message
  }
}

/** A value its flag or argument refuses: what it should be, as Effect 3 said it. */
const invalidValue = (e: CliError.InvalidValue, commandPath: ReadonlyArray<string>): string => {
  const value = Help.valueOf(Help.find(tree, commandPath.slice(1)), e.kind, e.option)
  if (value?.choices !== undefined) return `Expected one of the following cases: ${value.choices.join(", ")}`
  if (e.value !== "" && (value?.word === "integer" || value?.word === "float" || value?.word === "SECONDS")) {
    return `'${e.value}' is not a ${value.word === "integer" ? "integer" : "float"}`
  }
  return e.message
}

const cli = Command.runWith(p2v, { version })
const cliLayer = CliOutput.layerPresenter(presenter)

const helpText = (path: ReadonlyArray<Help.Node>) =>
  path.length === 1 ? Help.root(tree, { version, footer }) : Help.command(path)

/**
 * The help these arguments (after `p2v`) ask for, if any, laid out by Help.ts for 80 columns;
 * `missing`: a command needs a subcommand and was given none (exit 2).
 */
export const helpFor = (
  args: ReadonlyArray<string>
): { readonly text: string; readonly missing: boolean } | undefined => {
  const asked = Help.requested(tree, args, valued)
  if (asked === undefined) return undefined
  return { text: helpText(asked.path), missing: asked.missing }
}

/** The root's options that take a value. */
const valued = ["--first-byte-timeout", "--idle-timeout"]

/**
 * Every help `p2v` can print, with the commands' names: what the bundled `p2v` answers `--help` from
 * without loading the CLI (Launch.ts).
 */
export const helpTable = (): Launch.HelpTable => {
  const texts: Record<string, string> = {}
  const entry = (path: ReadonlyArray<Help.Node>): Launch.Entry => {
    const node = path[path.length - 1]
    texts[path.slice(1).map((n) => n.command.name).join(" ")] = helpText(path)
    return {
      name: node.command.name,
      alias: node.command.alias,
      children: node.children.map((child) => entry([...path, child]))
    }
  }
  return { tree: entry([tree]), valued, texts }
}

/** Runs `p2v` with these arguments (`process.argv`): the help is ours, everything else effect/cli's. */
export const run = (argv: ReadonlyArray<string>) => {
  const help = helpFor(argv.slice(2))
  if (help === undefined) return cli(argv.slice(2)).pipe(Effect.provide(cliLayer))
  return Effect.andThen(Console.log(help.text), help.missing ? Effect.fail(new UsageError("")) : Effect.void)
}

/** The exit code for how a command ended, with the message for stderr. */
export const outcome = (e: unknown): { readonly code: number; readonly message?: string } => {
  const said = described(e)
  // one line, and nothing the service said reaches the terminal unescaped
  return said.message === undefined ? said : { code: said.code, message: printable(said.message) }
}

const described = (e: unknown): { readonly code: number; readonly message?: string } => {
  if (e instanceof ApiError) {
    return {
      code: exitCodes.refused,
      message: `error: ${e.code}: ${e.message}${e.requestId !== null ? ` (request ${e.requestId})` : ""}`
    }
  }
  if (e instanceof TransportError) return { code: exitCodes.unreachable, message: `error: ${e.message}` }
  if (e instanceof InvalidRequest) return { code: exitCodes.usage, message: `error: ${e.message} (nothing was sent)` }
  if (e instanceof UnexpectedAnswer) {
    return {
      code: exitCodes.unexpectedAnswer,
      message: `error: ${e.message}${e.requestId !== null ? ` (request ${e.requestId})` : ""}`
    }
  }
  if (e instanceof WaitTimeout) {
    return { code: exitCodes.deadline, message: `error: ${e.id} is still ${e.status} at the deadline; it goes on` }
  }
  if (e instanceof Unsuccessful) return { code: exitCodes.unsuccessful }
  if (e instanceof StoppedByCap) return { code: exitCodes.stoppedByCap }
  if (e instanceof Batch.BatchInputError) return { code: exitCodes.usage, message: `error: ${e.message}` }
  if (e instanceof UsageError) {
    return e.message === ""
      ? { code: exitCodes.usage }
      : { code: exitCodes.usage, message: `error: ${e.message}` }
  }
  if (CliError.isCliError(e)) {
    // the presenter has printed the problem already
    return { code: exitCodes.usage }
  }
  return { code: exitCodes.failure, message: `error: ${e instanceof Error ? e.message : String(e)}` }
}
