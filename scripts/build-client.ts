/**
 * Builds `@pic2video/client` as a package others install: `npm run build:client` (or `npm run build`
 * in packages/client) writes packages/client/dist/, a package directory `npm pack` takes as it is:
 *
 * - the library: ESM JavaScript with source maps (sources inside) and `.d.ts` types, one file per
 *   module, for the entries `.`, `./Client` (Effect), `./Promise`, `./Files` and `./Batch`. The
 *   contract the client is derived from (the HttpApi definition and its schemas, packages/domain) is
 *   shipped inside it, under `contract/`, as the same modules: the user installs one package, whose
 *   one dependency is `effect` (the domain package is the service's too, with server-side modules a
 *   client has no use for, and its version moves with the service's, not the API's).
 * - `bin/p2v.js` (the package's `bin`): a launcher of a few KB that answers `p2v --version` and
 *   `p2v --help` from text made here (HelpTable.ts), and `bin/cli.js`: every command in one bundle,
 *   `effect` inside, which the launcher loads when a command runs.
 * - package.json (made from packages/client/package.json: name, version, licence, description),
 *   README.md, LICENSE.
 *
 * The workspace's own package.json keeps pointing at the TypeScript sources, which the repository's
 * code and tests import as they are, unbuilt.
 *
 * `--bin` builds bin/p2v.js alone. `--standalone` builds packages/client/standalone/p2v alone: one
 * executable with Node inside (Node's single executable applications), which needs no `node` on PATH.
 */
import { helpTable } from "@pic2video/client/Cli"
import { build, type Plugin, transform } from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const client = Path.join(root, "packages/client")
const domain = Path.join(root, "packages/domain")
const dist = Path.join(client, "dist")

/** The package's entries: the export's name and the module it is. */
const entries: Record<string, string> = {
  ".": "index",
  "./Client": "Client",
  "./Promise": "Promise",
  "./Files": "Files",
  "./Batch": "Batch"
}

const run = (command: string, args: ReadonlyArray<string>, cwd = root) => {
  const r = spawnSync(command, args, { cwd, stdio: "inherit" })
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status ?? r.signal}`)
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"))

// ---- where each source module goes ---------------------------------------------------------------

/** A source file (packages/client/src/X.ts, packages/domain/src/Y.ts) → its place in dist, without extension. */
const placeOf = (source: string): string | undefined => {
  const inClient = Path.relative(Path.join(client, "src"), source)
  if (!inClient.startsWith("..")) return inClient.replace(/\.ts$/, "")
  const inDomain = Path.relative(Path.join(domain, "src"), source)
  if (!inDomain.startsWith("..")) return Path.join("contract", inDomain.replace(/\.ts$/, ""))
  return undefined
}

const domainExports: Record<string, string> = readJson(Path.join(domain, "package.json")).exports

/** The source file a specifier in `from` names, if it is one of ours (else it stays: `effect`, `node:fs`). */
const targetOf = (from: string, specifier: string): string | undefined => {
  if (specifier === "@pic2video/domain" || specifier.startsWith("@pic2video/domain/")) {
    const sub = `.${specifier.slice("@pic2video/domain".length)}`
    const file = domainExports[sub]
    if (file === undefined) throw new Error(`${from}: ${specifier} is not an export of @pic2video/domain`)
    return Path.join(domain, file)
  }
  if (specifier.startsWith("@pic2video/")) throw new Error(`${from}: the client may not depend on ${specifier}`)
  if (!specifier.startsWith(".")) return undefined
  return Path.resolve(Path.dirname(from), specifier).replace(/\.(js|d\.ts)$/, ".ts")
}

/** `from "…"`, `import("…")`, `import "…"`: the module specifiers of JavaScript and of `.d.ts` alike. */
const specifiers = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])([^"'\n]+)\2/g

/** The text of `source`'s output with each of our specifiers pointing at the output it names. */
const relink = (text: string, source: string, modules: ReadonlySet<string>) =>
  text.replace(specifiers, (whole, lead: string, quote: string, specifier: string) => {
    const target = targetOf(source, specifier)
    if (target === undefined) return whole
    if (!modules.has(target)) throw new Error(`${source}: ${specifier} is not in the package`)
    let relative = Path.relative(Path.dirname(placeOf(source)!), placeOf(target)!)
    if (!relative.startsWith(".")) relative = `./${relative}`
    return `${lead}${quote}${relative}.js${quote}`
  })

// ---- the library ---------------------------------------------------------------------------------

/**
 * The `.d.ts` of every module the entries reach (tsc follows the imports into the domain), by source
 * file. tsc also checks the types on the way.
 */
const declarations = (): Map<string, string> => {
  const out = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-client-types-"))
  try {
    run(process.execPath, [
      Path.join(root, "node_modules/typescript/bin/tsc"),
      "-p",
      Path.join(client, "tsconfig.build.json"),
      "--outDir",
      out
    ])
    const found = new Map<string, string>()
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const path = Path.join(dir, e.name)
        if (e.isDirectory()) walk(path)
        // tsc's rootDir is packages/: out/client/src/X.d.ts is packages/client/src/X.ts
        else if (e.name.endsWith(".d.ts")) {
          found.set(
            Path.join(root, "packages", Path.relative(out, path)).replace(/\.d\.ts$/, ".ts"),
            fs.readFileSync(path, "utf8")
          )
        }
      }
    }
    walk(out)
    return found
  } finally {
    fs.rmSync(out, { recursive: true, force: true })
  }
}

/** The modules the entries reach, by their imports (type imports too: the `.d.ts` need them). */
const reachable = (available: ReadonlySet<string>): Set<string> => {
  const found = new Set<string>()
  const visit = (source: string) => {
    if (found.has(source)) return
    if (!available.has(source)) throw new Error(`${source} has no types`)
    found.add(source)
    for (const m of fs.readFileSync(source, "utf8").matchAll(specifiers)) {
      const target = targetOf(source, m[3])
      if (target !== undefined) visit(target)
    }
  }
  for (const name of Object.values(entries)) visit(Path.join(client, "src", `${name}.ts`))
  return found
}

const library = async () => {
  const types = declarations()
  // tsc is given the domain's every module (it emits none it reaches through node_modules); the package takes those reached
  const modules = reachable(new Set(types.keys()))
  for (const source of modules) {
    const dts = types.get(source)!
    const place = placeOf(source)
    if (place === undefined) throw new Error(`${source} is neither the client's nor the contract's`)
    const file = Path.join(dist, place)
    fs.mkdirSync(Path.dirname(file), { recursive: true })
    fs.writeFileSync(`${file}.d.ts`, relink(dts, source, modules))
    // each module as it is (no bundling): the imports are kept as written, type-only ones dropped, as Node strips them
    const js = await transform(fs.readFileSync(source, "utf8"), {
      loader: "ts",
      format: "esm",
      target: "es2022",
      sourcemap: "external",
      sourcesContent: true,
      sourcefile: `${Path.basename(place)}.ts`,
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } }
    })
    const name = Path.basename(file)
    // esbuild keeps the specifiers as written; relinking changes only those lines' lengths, which carry no mapping
    fs.writeFileSync(`${file}.js`, `${relink(js.code, source, modules)}//# sourceMappingURL=${name}.js.map\n`)
    fs.writeFileSync(`${file}.js.map`, js.map)
  }
  return modules.size
}

// ---- the CLI -------------------------------------------------------------------------------------

/** HelpTable.ts, replaced by the table it would compute. */
const helpPlugin: Plugin = {
  name: "p2v-help-table",
  setup(b) {
    b.onResolve(
      { filter: /\/HelpTable\.ts$/ },
      (args) => ({ path: Path.resolve(args.resolveDir, args.path), namespace: "p2v-help" })
    )
    b.onLoad({ filter: /.*/, namespace: "p2v-help" }, () => ({
      contents: `export const load = () => Promise.resolve(${JSON.stringify(helpTable())})`,
      loader: "js"
    }))
  }
}

/** In the launcher, the CLI (Main.ts) is the bundle beside it, bin/cli.js. */
const cliChunk: Plugin = {
  name: "p2v-cli-chunk",
  setup(b) {
    b.onResolve({ filter: /\/Main\.ts$/ }, () => ({ path: "./cli.js", external: true }))
  }
}

/** A bundle: `effect` and the client inside; a module's code runs only when it is first needed. */
const bundle = (entry: string, outfile: string, format: "esm" | "cjs", plugins: Array<Plugin>) =>
  build({
    entryPoints: [Path.join(client, "src", entry)],
    outfile,
    bundle: true,
    platform: "node",
    format,
    target: "node22",
    // minified: V8 parses the whole file at every start (the messages p2v prints name no class)
    minify: true,
    legalComments: "none",
    // the entry's `#!/usr/bin/env node` line is kept by esbuild
    // CommonJS (the standalone): a dynamic import() becomes a require, which Node's SEA serves for built-ins
    ...(format === "cjs" ? { supported: { "dynamic-import": false } } : {}),
    plugins,
    logLevel: "warning"
  })

/**
 * `p2v` as two files: bin/p2v.js, the launcher (`--version`, the help: a few KB, nothing else
 * loaded), and bin/cli.js, every command in one bundle, loaded by the launcher when a command runs
 * (through Node's compile cache, so V8 compiles it once, not at every start).
 */
const cli = async () => {
  const file = Path.join(dist, "bin/p2v.js")
  await bundle("bin/p2v.ts", file, "esm", [helpPlugin, cliChunk])
  await bundle("Main.ts", Path.join(dist, "bin/cli.js"), "esm", [])
  fs.chmodSync(file, 0o755)
}

// ---- the package's files -------------------------------------------------------------------------

const manifest = () => {
  const own = readJson(Path.join(client, "package.json"))
  const effect: string = readJson(Path.join(root, "node_modules/effect/package.json")).version
  const exports: Record<string, unknown> = {}
  for (const [name, module] of Object.entries(entries)) {
    exports[name] = { types: `./${module}.d.ts`, import: `./${module}.js`, default: `./${module}.js` }
  }
  exports["./package.json"] = "./package.json"
  return {
    name: own.name,
    version: own.version,
    description: own.description,
    license: own.license,
    type: "module",
    engines: { node: ">=22" },
    exports,
    bin: { p2v: "./bin/p2v.js" },
    files: ["*.js", "*.js.map", "*.d.ts", "contract/", "bin/"],
    keywords: ["pic2video", "video", "api-client", "effect"],
    // the version the client was built and tested with: Effect 4 moves between minor versions
    dependencies: { effect }
  }
}

const main = async () => {
  const started = Date.now()
  if (process.argv.includes("--standalone")) return standalone()
  if (process.argv.includes("--bin")) {
    // only bin/p2v.js (npm run bench:cli)
    await cli()
    return console.log(`built ${Path.relative(root, dist)}/bin/p2v.js in ${Date.now() - started} ms`)
  }
  fs.rmSync(dist, { recursive: true, force: true })
  fs.mkdirSync(dist, { recursive: true })
  const count = await library()
  await cli()
  fs.writeFileSync(Path.join(dist, "package.json"), `${JSON.stringify(manifest(), null, 2)}\n`)
  fs.copyFileSync(Path.join(client, "README.md"), Path.join(dist, "README.md"))
  fs.copyFileSync(Path.join(client, "LICENSE"), Path.join(dist, "LICENSE"))
  console.log(`built ${Path.relative(root, dist)}: ${count} modules, bin/p2v.js in ${Date.now() - started} ms`)
}

// ---- without Node --------------------------------------------------------------------------------

/**
 * One executable: Node (this one, 24) with the CLI inside, as a single executable application. The
 * bundle is CommonJS (what Node 24's SEA runs), its V8 code cache made here (`useCodeCache`).
 */
const standalone = async () => {
  const started = Date.now()
  const dir = Path.join(client, "standalone")
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  // one file with everything (no compile cache to read: the SEA carries V8's code cache itself)
  await bundle("bin/p2v.ts", Path.join(dir, "p2v.cjs"), "cjs", [helpPlugin])
  fs.writeFileSync(
    Path.join(dir, "sea-config.json"),
    JSON.stringify({ main: "p2v.cjs", output: "p2v.blob", disableExperimentalSEAWarning: true, useCodeCache: true })
  )
  run(process.execPath, ["--experimental-sea-config", "sea-config.json"], dir)
  const exe = Path.join(dir, "p2v")
  fs.copyFileSync(process.execPath, exe)
  fs.chmodSync(exe, 0o755)
  // postject (a devDependency) writes the blob into the copy of node
  run(process.execPath, [
    Path.join(root, "node_modules/postject/dist/cli.js"),
    exe,
    "NODE_SEA_BLOB",
    Path.join(dir, "p2v.blob"),
    "--sentinel-fuse",
    "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"
  ], dir)
  for (const f of ["p2v.blob", "sea-config.json", "p2v.cjs"]) fs.rmSync(Path.join(dir, f))
  const size = fs.statSync(exe).size
  console.log(
    `built ${Path.relative(root, exe)}: ${(size / 1024 / 1024).toFixed(1)} MiB (Node ${process.version}) in ${
      Date.now() - started
    } ms`
  )
}

await main()
