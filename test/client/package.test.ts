import { helpFor } from "@pic2video/client/Cli"
import * as Version from "@pic2video/client/Version"
import { build } from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeShared, root, runCommand, type Service, startService, workspaceWithKey } from "../support/service.ts"

/**
 * `@pic2video/client` as someone outside this repository gets it: built (scripts/build-client.ts),
 * packed by `npm pack`, and installed from the tarball by `npm install` into a clean project in the
 * temporary directory (no workspace link, nothing of the repository on any path), then run against the
 * real service on Node 24 and 22, Deno and Bun (each from its npm package, kept between runs in
 * TMPDIR/p2v-test-runtimes): the Promise client and the Effect client upload, render, wait and
 * download; the TypeScript quick start type-checks against the package's `.d.ts`; the browser entry
 * bundles for the browser; the `p2v` it installs answers as the source does.
 */
const runtimes = {
  node24: { spec: "node@24.21.0", bin: "node" },
  node22: { spec: "node@22", bin: "node" },
  deno: { spec: "deno@2.9.6", bin: "deno" },
  bun: { spec: "bun@1", bin: "bun" }
} as const
type Runtime = keyof typeof runtimes

let service: Service
let secret: string
let dir: string
let project: string
let packed: { filename: string; size: number; unpackedSize: number; files: Array<{ path: string }> }
const runtimeBin: Partial<Record<Runtime, string>> = {}
const runtimeFailure: Partial<Record<Runtime, string>> = {}

/** What npm needs of this machine's environment to reach the registry (its CA certificates, a proxy). */
const network = Object.fromEntries(
  Object.entries(process.env).filter((e): e is [string, string] =>
    /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY)$/.test(e[0]) &&
    e[1] !== undefined
  )
)

/** An environment without the repository: the runtime's own directory and the system's, HOME. */
const envWith = (runtime: Runtime, extra: Record<string, string> = {}) => ({
  ...network,
  PATH: [Path.dirname(runtimeBin[runtime]!), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
  HOME: process.env.HOME ?? "/tmp",
  NO_COLOR: "1",
  DENO_NO_UPDATE_CHECK: "1",
  ...extra
})

/**
 * `npm install` with the registry over the network: tried up to three times, a few seconds apart, so a
 * dropped connection to the registry does not read as a broken package.
 */
const npmInstall = async (args: ReadonlyArray<string>, options: { cwd: string; env: NodeJS.ProcessEnv }) => {
  let r = await runCommand("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...args], options)
  for (let attempt = 2; attempt <= 3 && r.code !== 0; attempt++) {
    console.log(`npm install ${args.join(" ")} in ${options.cwd}: attempt ${attempt} after: ${r.stderr.slice(-300)}`)
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    r = await runCommand("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...args], options)
  }
  return r
}

/** Installs a runtime from its npm package once (kept between runs); its binary's path. */
const install = async (runtime: Runtime) => {
  const { spec, bin } = runtimes[runtime]
  const at = Path.join(os.tmpdir(), "p2v-test-runtimes", spec.replace("@", "-"))
  // Deno's own binary, not the package's Node wrapper (which npm links when it runs no install script)
  const file = runtime === "deno"
    ? Path.join(
      at,
      `node_modules/@deno/${process.platform}-${process.arch}${process.platform === "linux" ? "-glibc" : ""}/deno`
    )
    : Path.join(at, "node_modules/.bin", bin)
  if (fs.existsSync(file)) return file
  fs.mkdirSync(at, { recursive: true })
  fs.writeFileSync(Path.join(at, "package.json"), "{\"private\":true}\n")
  const r = await npmInstall([spec], {
    cwd: at,
    env: { ...network, PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }
  })
  if (r.code !== 0 || !fs.existsSync(file)) throw new Error(`npm install ${spec}: ${r.stderr}`)
  return file
}

beforeAll(async () => {
  const built = await runCommand(process.execPath, [Path.join(root, "scripts/build-client.ts")])
  expect(built.code, `${built.stdout}${built.stderr}`).toBe(0)

  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-package-"))
  const pack = await runCommand("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: Path.join(root, "packages/client/dist"),
    env: { ...network, PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }
  })
  expect(pack.code, pack.stderr).toBe(0)
  packed = JSON.parse(pack.stdout)[0]

  for (const runtime of Object.keys(runtimes) as Array<Runtime>) {
    try {
      runtimeBin[runtime] = await install(runtime)
    } catch (e) {
      runtimeFailure[runtime] = (e as Error).message
    }
  }
  expect(runtimeFailure.node24).toBeUndefined()

  project = Path.join(dir, "project")
  fs.mkdirSync(project)
  fs.writeFileSync(
    Path.join(project, "package.json"),
    JSON.stringify(
      {
        name: "p2v-consumer",
        private: true,
        type: "module",
        dependencies: { "@pic2video/client": `file:${Path.join(dir, packed.filename)}` },
        devDependencies: { "typescript": "5.9.3", "@types/node": "24.19.2" }
      },
      null,
      2
    )
  )
  for (const f of ["consumer.mjs", "consumer.ts"]) {
    fs.copyFileSync(Path.join(import.meta.dirname, "package", f), Path.join(project, f))
  }
  fs.writeFileSync(
    Path.join(project, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2023", "DOM", "DOM.Iterable"],
          types: ["node"],
          noEmit: true,
          skipLibCheck: false
        },
        files: ["consumer.ts"]
      },
      null,
      2
    )
  )
  const installed = await npmInstall([], {
    cwd: project,
    env: envWith("node24")
  })
  expect(installed.code, installed.stderr).toBe(0)

  service = await startService(await makeShared())
  secret = (await workspaceWithKey(service.env)).secret
}, 600_000)

afterAll(async () => {
  await service?.stop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

describe("the packed @pic2video/client", () => {
  it("holds the library, its types, the contract and p2v, and depends on effect alone", () => {
    const files = packed.files.map((f) => f.path).sort()
    for (const module of ["index", "Client", "Promise", "Files", "Batch"]) {
      expect(files).toEqual(expect.arrayContaining([`${module}.js`, `${module}.js.map`, `${module}.d.ts`]))
    }
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "LICENSE",
        "bin/p2v.js",
        "bin/cli.js",
        "contract/api/Api.js",
        "contract/api/Api.d.ts"
      ])
    )
    // nothing but the package: no TypeScript sources, no tests, no server code
    expect(files.filter((f) => !/\.(js|js\.map|d\.ts)$/.test(f))).toEqual(["LICENSE", "README.md", "package.json"])
    const manifest = JSON.parse(
      fs.readFileSync(Path.join(project, "node_modules/@pic2video/client/package.json"), "utf8")
    )
    expect(manifest).toMatchObject({
      name: "@pic2video/client",
      version: Version.client,
      license: "MIT",
      type: "module",
      bin: { p2v: "./bin/p2v.js" }
    })
    expect(manifest.private).toBeUndefined()
    expect(manifest.exports["."]).toEqual({ types: "./index.d.ts", import: "./index.js", default: "./index.js" })
    expect(manifest.dependencies).toEqual({
      effect: JSON.parse(fs.readFileSync(Path.join(root, "node_modules/effect/package.json"), "utf8")).version
    })
    // a real install: a directory of the tarball's files, not a link into the repository
    expect(fs.lstatSync(Path.join(project, "node_modules/@pic2video/client")).isSymbolicLink()).toBe(false)
    const lock = JSON.parse(fs.readFileSync(Path.join(project, "package-lock.json"), "utf8"))
    const dependencies = Object.entries(lock.packages as Record<string, { dev?: boolean }>)
      .filter(([path, p]) =>
        path.startsWith("node_modules/") && p.dev !== true && path !== "node_modules/@pic2video/client"
      )
    console.log(
      `tarball ${packed.filename}: ${(packed.size / 1024).toFixed(1)} KiB packed, ${
        (packed.unpackedSize / 1024).toFixed(1)
      } KiB unpacked, ${files.length} files; ${dependencies.length} packages installed with it: ${
        dependencies.map(([p]) => p.replace(/^node_modules\//, "")).join(", ")
      }`
    )
  })

  it("type-checks the TypeScript quick start against its .d.ts (strict, NodeNext)", async () => {
    const r = await runCommand(runtimeBin.node24!, [
      Path.join(project, "node_modules/typescript/bin/tsc"),
      "-p",
      project
    ], { cwd: project, env: envWith("node24") })
    expect(r.code, r.stdout + r.stderr).toBe(0)
  })

  it("bundles for the browser without a Node built-in", async () => {
    const result = await build({
      entryPoints: ["@pic2video/client", "@pic2video/client/Client", "@pic2video/client/Promise"],
      absWorkingDir: project,
      bundle: true,
      platform: "browser",
      format: "esm",
      outdir: Path.join(dir, "browser"),
      write: false,
      logLevel: "silent"
    }).catch((e: { errors: Array<{ text: string }> }) => ({ errors: e.errors, outputFiles: [] }))
    expect(result.errors.map((e) => e.text)).toEqual([])
    for (const f of result.outputFiles) expect(f.text).not.toMatch(/from\s*["']node:|require\(["']node:/)
  })

  const consumer = async (runtime: Runtime) => {
    const out = fs.mkdtempSync(Path.join(dir, `${runtime}-`))
    let script = "consumer.mjs"
    let args: Array<string> = []
    if (runtime === "deno") {
      // Deno as its docs say: `npm:` specifiers, found in the project's node_modules
      script = "consumer-deno.mjs"
      fs.writeFileSync(
        Path.join(project, script),
        fs.readFileSync(Path.join(project, "consumer.mjs"), "utf8").replace(
          /from "(@pic2video\/client[^"]*|effect)"/g,
          "from \"npm:$1\""
        )
      )
      args = ["run", "-A", script]
    } else {
      args = [script]
    }
    const r = await runCommand(runtimeBin[runtime]!, args, {
      cwd: project,
      env: envWith(runtime, {
        P2V_API_KEY: secret,
        P2V_BASE_URL: service.baseUrl,
        PHOTO: Path.join(root, "test/fixtures/rocket.jpg"),
        OUT: out
      })
    })
    expect(r.code, r.stderr).toBe(0)
    const seen = JSON.parse(r.stdout.trim().split("\n").at(-1)!)
    console.log(`${runtime}: ${seen.runtime}`)
    expect(seen.promise).toMatchObject({ status: "completed", missing: "render_not_found" })
    expect(seen.effect).toMatchObject({ status: "completed", missing: "render_not_found", label: seen.runtime })
    for (const [which, got] of [["promise", seen.promise], ["effect", seen.effect]] as const) {
      expect(got.bytes, which).toBe(got.size)
      const mp4 = fs.readFileSync(Path.join(out, `${which}.mp4`))
      expect(mp4.byteLength, which).toBe(got.size)
      expect(mp4.subarray(4, 8).toString(), which).toBe("ftyp")
    }
    return seen.runtime as string
  }

  it("uploads, renders, waits and downloads on Node 24", async () => {
    expect(await consumer("node24")).toBe("node 24.21.0")
  })

  it("uploads, renders, waits and downloads on Node 22", async () => {
    expect(runtimeFailure.node22).toBeUndefined()
    expect(await consumer("node22")).toMatch(/^node 22\./)
  })

  it("uploads, renders, waits and downloads on Deno 2 (npm: imports)", async () => {
    expect(runtimeFailure.deno).toBeUndefined()
    expect(await consumer("deno")).toMatch(/^deno 2\./)
  })

  it("uploads, renders, waits and downloads on Bun", async (context) => {
    // Bun is tried when its npm package installs here; if it does not, the test says so and is skipped
    if (runtimeFailure.bun !== undefined) {
      console.log(`bun: not installed: ${runtimeFailure.bun}`)
      return context.skip()
    }
    expect(await consumer("bun")).toMatch(/^bun 1\./)
  })

  it("installs p2v, which answers as the source does, on Node 24 and 22", async () => {
    const p2v = Path.join(project, "node_modules/.bin/p2v")
    for (const runtime of ["node24", "node22"] as const) {
      const env = envWith(runtime, { P2V_API_KEY: secret, P2V_BASE_URL: service.baseUrl })
      const version = await runCommand(p2v, ["--version"], { cwd: project, env })
      expect(version, runtime).toMatchObject({ code: 0, stdout: `${Version.text}\n\n`, stderr: "" })
      const usage = await runCommand(p2v, ["usage", "--json"], { cwd: project, env })
      expect(usage.code, usage.stderr).toBe(0)
      expect(JSON.parse(usage.stdout).aesthetic_quotes.used).toBeGreaterThanOrEqual(0)
      const missing = await runCommand(p2v, ["status", "rnd_doesnotexist0000000000"], { cwd: project, env })
      expect(missing.code).toBe(3)
      expect(missing.stderr).toMatch(/^error: render_not_found: .+ \(request \S+\)\n$/)
    }
    // the help it carries is the help the definitions make, for every command, and for none (exit 2)
    const env = envWith("node24")
    for (
      const args of [
        [],
        ["--help"],
        ["-h"],
        ["render", "--help"],
        ["media", "list", "-h"],
        ["--idle-timeout", "5", "usage", "--help"],
        ["media"],
        ["batch", "--help"],
        ["upload", "--help"],
        ["status", "--help"],
        ["download", "--help"],
        ["import", "--help"]
      ]
    ) {
      const r = await runCommand(p2v, args, { cwd: project, env })
      const expected = helpFor(args)!
      expect(r, args.join(" ")).toMatchObject({
        code: expected.missing ? 2 : 0,
        stdout: `${expected.text}\n`,
        stderr: ""
      })
    }
    const version = await runCommand(p2v, ["--version"], { cwd: project, env })
    expect(version.stdout).toBe(`${Version.text}\n\n`)
    // the version it says is the API's the service serves
    const document = await (await fetch(`${service.baseUrl}/openapi.json`)).json() as { info: { version: string } }
    expect(document.info.version).toBe(Version.api)
  })
})
