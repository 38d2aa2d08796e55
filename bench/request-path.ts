/**
 * `npm run bench:request-path` — the files of the project one `POST /api/v1/renders` runs, from the
 * request's arrival to its 202, and the packages they are in: what a newcomer reads to follow a create.
 *
 * The service is composed in this process as `npm start` composes it (the router, admission, the
 * services, a cluster runner of one with its entities; no portal, no telemetry) on the platform's test
 * HTTP server, over a fresh database on DATABASE_URL's (or TEST_DATABASE_URL's) server. One create is
 * made first (what runs once per process is not the request's path), then V8's precise coverage
 * (call counts, reset when taken) is taken around each of three more creates: a file counts when one
 * of its functions ran during every one of them (the timers of the process, a sweep or a heartbeat,
 * fall in one window at most). "Crossings" are the imports between those files that go from one
 * package into another. Each render fails at once after its 202 (its photo has no file), and each
 * create waits for the render before it to end.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Http from "@pic2video/api/Http"
import * as Sharding from "@pic2video/cluster/entities/Sharding"
import * as ApiKeys from "@pic2video/cluster/repositories/ApiKeysRepo"
import { MediaRepo } from "@pic2video/cluster/repositories/MediaRepo"
import { WorkspacesRepo } from "@pic2video/cluster/repositories/WorkspacesRepo"
import { Api } from "@pic2video/domain/api/Api"
import { layerDrive, layerEntities, layerInfra } from "@pic2video/server/Server"
import { ConfigProvider, Effect, Layer, References } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { freshDatabase } from "./database.ts"

const root = Path.resolve(import.meta.dirname, "..")
const adminUrl = [process.env.DATABASE_URL, process.env.TEST_DATABASE_URL].find((u) => u !== undefined && u !== "") ??
  "postgres://postgres@127.0.0.1:5432/postgres"

const session = new Session()
session.connect()
await session.post("Profiler.enable")
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false })

const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-request-path-"))
const env = {
  DATABASE_URL: await freshDatabase(adminUrl),
  DATA_DIR: dataDir,
  PUBLIC_BASE_URL: "http://p2v.test",
  RENDER_CONCURRENCY: "1"
}

const layerService = Http.serve((api) => api).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(layerEntities),
  Layer.provideMerge(layerDrive),
  Layer.provideMerge(Sharding.layerRunner),
  Layer.provideMerge(layerInfra),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
)

/** The package a file of ours is in, or undefined for anything else (node_modules, Node's own). */
const packageOf = (file: string) => /^packages\/([^/]+)\/src\//.exec(file)?.[1]

const program = Effect.gen(function*() {
  const workspace = yield* (yield* WorkspacesRepo).create("request-path", { plan: "studio" })
  const key = yield* ApiKeys.create({
    workspaceId: workspace.id,
    scopes: ["media:read", "media:write", "renders:create", "renders:read"]
  })
  const photo = (id: string) =>
    Effect.flatMap(MediaRepo, (media) =>
      media.add({
        id,
        workspaceId: workspace.id,
        label: "",
        tags: [],
        width: 10,
        height: 10,
        mimeType: "image/png",
        sizeBytes: 1,
        blobKey: `media/${workspace.id}/${id}`,
        sourceRef: null
      }))
  const client = yield* HttpApiClient.make(Api, {
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(key.secret))
  })
  const create = (mediaId: string) =>
    client.renders.createRender({ payload: { media_id: mediaId, quote: "The light is the subject." }, headers: {} })
  const settled = (id: string) =>
    client.renders.getRender({ params: { id } }).pipe(
      Effect.repeat({ until: (r) => r.status === "failed" || r.status === "completed" }),
      Effect.timeout("30 seconds")
    )
  const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  for (const id of ids) yield* photo(id)
  yield* settled((yield* create(ids[0])).id)
  const windows: Array<
    ReadonlyArray<
      {
        readonly url: string
        readonly functions: ReadonlyArray<{ readonly ranges: ReadonlyArray<{ readonly count: number }> }>
      }
    >
  > = []
  for (const id of ids.slice(1)) {
    yield* Effect.promise(() => session.post("Profiler.takePreciseCoverage"))
    const created = yield* create(id)
    windows.push((yield* Effect.promise(() => session.post("Profiler.takePreciseCoverage"))).result)
    yield* settled(created.id)
  }
  return windows
})

const windows = await Effect.runPromise(Effect.scoped(Effect.provide(program, layerService)))
fs.rmSync(dataDir, { recursive: true, force: true })

const ran = (window: (typeof windows)[number]) =>
  new Set(
    window
      .filter((script) => script.url.startsWith("file://") && script.functions.some((f) => f.ranges[0].count > 0))
      .map((script) => Path.relative(root, fileURLToPath(script.url)))
      .filter((file) => packageOf(file) !== undefined)
  )
const [firstRan, ...otherRan] = windows.map(ran)
const files = [...firstRan].filter((file) => otherRan.every((r) => r.has(file))).sort()

/** `@pic2video/<package>/<subpath>` to a file, through each package's own exports. */
const exportsOf = new Map<string, Record<string, string>>()
const resolve = (specifier: string): string | undefined => {
  const m = /^@pic2video\/([^/]+)(?:\/(.+))?$/.exec(specifier)
  if (m === null) return undefined
  const [, pkg, sub] = m
  if (!exportsOf.has(pkg)) {
    exportsOf.set(pkg, JSON.parse(fs.readFileSync(Path.join(root, "packages", pkg, "package.json"), "utf8")).exports)
  }
  const map = exportsOf.get(pkg)!
  const key = sub === undefined ? "." : `./${sub}`
  const exact = map[key]
  if (exact !== undefined) return Path.join("packages", pkg, exact)
  for (const [pattern, target] of Object.entries(map)) {
    if (!pattern.includes("*")) continue
    const [before, after] = pattern.split("*")
    if (key.startsWith(before) && key.endsWith(after)) {
      return Path.join("packages", pkg, target.replace("*", key.slice(before.length, key.length - after.length)))
    }
  }
  return undefined
}

const touched = new Set(files)
let crossings = 0
for (const file of files) {
  const text = fs.readFileSync(Path.join(root, file), "utf8")
  for (const [, specifier] of text.matchAll(/from "(@pic2video\/[^"]+)"/g)) {
    const target = resolve(specifier)
    if (target !== undefined && touched.has(target) && packageOf(target) !== packageOf(file)) crossings++
  }
}

const byPackage = new Map<string, Array<string>>()
for (const file of files) byPackage.set(packageOf(file)!, [...(byPackage.get(packageOf(file)!) ?? []), file])
console.log(
  `POST /api/v1/renders, arrival to 202: ${files.length} files in ${byPackage.size} packages, ${crossings} crossings`
)
for (const [pkg, list] of byPackage) {
  console.log(`\n${pkg} (${list.length})`)
  for (const file of list) console.log(`  ${file}`)
}
process.exit(0)
