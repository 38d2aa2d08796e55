// Install step (npm postinstall). Never fatal: every problem is a warning and the renderer falls
// back to what it can find (the npm-shipped ffmpeg; captions in a script without a font then fail
// clearly at caption time instead of drawing boxes).
//
// 1. npm 11 skips dependency install scripts, so @ffmpeg-installer/@ffprobe-installer's own
//    `chmod u+x` may not have run: make the shipped binaries executable here.
//    The same for Deno's platform package (@deno/linux-x64-glibc …), and node_modules/.bin/deno is
//    pointed at that binary, as deno's own skipped postinstall does: otherwise it is bin.cjs, a Node
//    wrapper running deno as its child, which does not pass SIGTERM on (`npm run start:deno` could
//    not stop cleanly).
// 2. As root on Debian/apt, install Debian's ffmpeg (5.1: newer x264, faster filters than the 2018
//    npm build) and the fallback fonts Pango needs for colour emoji, Arabic/Hebrew and CJK.
//    Idempotent: dpkg-query decides what is missing, so a second run costs milliseconds.
// 3. The same way, the tools only the tests use, and only when the dev dependencies are installed
//    (not by `npm ci --omit=dev`, the Dockerfile's install, nor under NODE_ENV=production): Debian's
//    chromium for the portal's browser tests (playwright-core drives it; no browser is ever
//    downloaded; without it the browser tests skip and say why), and Debian's prometheus (prometheus
//    and promtool, for the metrics tests in test/observability). Each its own apt-get run, so a
//    failure leaves ffmpeg and fonts alone.
//    The same for libjemalloc2, the allocator the service preloads (packages/server/src/ProcessMemory.ts).
//    P2V_SKIP_SYSTEM_DEPS=1 skips parts 2 and 3 entirely.
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, lstatSync, readlinkSync, statSync, symlinkSync, unlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const require = createRequire(join(root, "package.json"))
const started = Date.now()
const log = (msg) => console.log(`[setup] ${msg}`)
const warn = (msg) => console.warn(`[setup] warning: ${msg}`)

// Debian package → why we want it. fonts-noto-core carries Noto Sans Arabic/Hebrew (and most other
// scripts); fonts-noto-cjk is the only CJK coverage; the colour emoji font is a CBDT bitmap font.
const SYSTEM_PACKAGES = [
  "ffmpeg",
  "fonts-noto-color-emoji",
  "fonts-noto-core",
  "fonts-noto-cjk",
  "fontconfig"
]

// Only the portal's browser tests use it (test/portal); the service never does.
const BROWSER_PACKAGES = ["chromium"]

// Only the observability tests use it (test/observability: a real Prometheus scraping the service,
// promtool checking its exposition); the service never does. Debian's package ships a systemd unit;
// on a machine without systemd (containers, CI) nothing is started.
const PROMETHEUS_PACKAGES = ["prometheus"]

/**
 * Whether npm is installing without the dev dependencies: `--omit=dev` (npm passes it on as
 * npm_config_omit, and sets NODE_ENV=production for the scripts), `--production`, or NODE_ENV=production
 * (npm's default omit then) unless `--include=dev`. Run by hand (`node scripts/setup.mjs`), it is not.
 */
function devDependenciesOmitted() {
  const list = (v) => (v ?? "").split(/[\s,]+/).filter((x) => x !== "")
  if (list(process.env.npm_config_include).includes("dev")) return false
  return list(process.env.npm_config_omit).includes("dev") || process.env.npm_config_production === "true" ||
    process.env.NODE_ENV === "production"
}

// jemalloc: the service preloads it when present (packages/server/src/ProcessMemory.ts, docs/contract.md H4);
// without it the service keeps glibc's malloc, whose resident set stays high after upload bursts.
const ALLOCATOR_PACKAGES = ["libjemalloc2"]

function makeExecutable(pkg, binary, suffix = "") {
  const platformPkg = `@${pkg}/${process.platform}-${process.arch}${suffix}`
  let file
  try {
    file = join(dirname(require.resolve(`${platformPkg}/package.json`)), binary)
  } catch {
    warn(`${platformPkg} is not installed; no npm-shipped ${binary} on this platform`)
    return
  }
  if (!existsSync(file)) return warn(`${file} is missing`)
  const mode = statSync(file).mode
  if ((mode & 0o111) === 0o111) return file
  try {
    chmodSync(file, mode | 0o755)
    log(`made ${file} executable`)
  } catch (e) {
    warn(`could not chmod ${file}: ${e.message}`)
  }
  return file
}

function linkDeno() {
  if (process.platform === "win32") return
  const file = makeExecutable("deno", "deno", process.platform === "linux" ? "-glibc" : "")
  const bin = join(root, "node_modules", ".bin", "deno")
  if (file === undefined || !existsSync(dirname(bin))) return
  try {
    const stat = lstatSync(bin, { throwIfNoEntry: false })
    if (stat?.isSymbolicLink() && !resolve(dirname(bin), readlinkSync(bin)).endsWith("bin.cjs")) return
    if (stat !== undefined) unlinkSync(bin)
    symlinkSync(relative(dirname(bin), file), bin)
    log(`${bin} -> ${file}`)
  } catch (e) {
    warn(`could not link ${bin}: ${e.message}`)
  }
}

function missingDebianPackages(packages) {
  const r = spawnSync("dpkg-query", ["-W", "-f=${Package} ${db:Status-Status}\\n", ...packages], {
    encoding: "utf8"
  })
  const installed = new Set(
    (r.stdout ?? "").split("\n").filter((l) => l.endsWith(" installed")).map((l) => l.split(" ")[0])
  )
  return packages.filter((p) => !installed.has(p))
}

let aptUpdated = false

/** Installs what of `packages` is missing; `fallback` says what happens when that fails. */
function installDebianPackages(what, packages, fallback) {
  const missing = missingDebianPackages(packages)
  if (missing.length === 0) return log(`${what} already installed`)
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    return warn(
      `not root; missing Debian packages: ${missing.join(" ")} (sudo apt-get install ${missing.join(" ")}); ${fallback}`
    )
  }
  log(`installing Debian packages: ${missing.join(" ")}`)
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  // Bounded so a stuck mirror cannot hang `npm ci` forever.
  const opts = { stdio: ["ignore", "ignore", "inherit"], env, timeout: 20 * 60 * 1000 }
  if (!aptUpdated) {
    aptUpdated = true
    const update = spawnSync("apt-get", ["update", "-qq"], opts)
    if (update.status !== 0) warn("apt-get update failed; trying the install with the lists we have")
  }
  const install = spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing], opts)
  if (install.status !== 0) {
    return warn(`apt-get install failed (exit ${install.status ?? install.signal}); ${fallback}`)
  }
  const still = missingDebianPackages(packages)
  if (still.length > 0) warn(`still missing after apt-get: ${still.join(" ")}; ${fallback}`)
  else log("installed")
}

function installSystemDeps() {
  if (process.env.P2V_SKIP_SYSTEM_DEPS === "1") return log("P2V_SKIP_SYSTEM_DEPS=1: skipping apt")
  if (process.platform !== "linux" || !existsSync("/etc/debian_version") || !existsSync("/usr/bin/apt-get")) {
    return log(
      "not a Debian/apt machine: install ffmpeg and Noto fonts (emoji, CJK, Arabic/Hebrew) yourself, " +
        "and Chromium for the portal's browser tests (or set CHROMIUM_PATH; they skip without one)"
    )
  }
  installDebianPackages("ffmpeg and fallback fonts", SYSTEM_PACKAGES, "falling back to the npm ffmpeg")
  if (devDependenciesOmitted()) {
    log("dev dependencies omitted: not installing the test tools (chromium, prometheus)")
  } else {
    installDebianPackages("chromium", BROWSER_PACKAGES, "the portal's browser tests will skip")
    installDebianPackages(
      "prometheus",
      PROMETHEUS_PACKAGES,
      "the observability tests will fail: they need /usr/bin/prometheus and /usr/bin/promtool"
    )
  }
  installDebianPackages("jemalloc", ALLOCATOR_PACKAGES, "the service keeps the system allocator")
}

try {
  makeExecutable("ffmpeg-installer", "ffmpeg")
  makeExecutable("ffprobe-installer", "ffprobe")
  linkDeno()
  installSystemDeps()
} catch (e) {
  warn(`unexpected: ${e?.message ?? e}`)
}
log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
