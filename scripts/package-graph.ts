/**
 * `npm run graph [ROOT]`: which package imports which (from the `@pic2video/*` imports of each package's
 * src/), printed as a list of edges; exits 1 when the graph has a cycle or a package's source
 * reaches into another package by a relative path. Tests and benches are left out: they may use
 * any package.
 */
import * as fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(process.argv[2] ?? Path.join(import.meta.dirname, ".."))
const packagesDir = Path.join(root, "packages")
const packages = fs.readdirSync(packagesDir).filter((p) => fs.existsSync(Path.join(packagesDir, p, "package.json")))
  .sort()

const sources = (dir: string): Array<string> =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sources(Path.join(dir, e.name)) : /\.(ts|js|mjs)$/.test(e.name) ? [Path.join(dir, e.name)] : []
    )
    : []

const imports = /(?:from|import)\s*\(?\s*["']([^"']+)["']/g
const edges = new Map<string, Set<string>>(packages.map((p) => [p, new Set()]))
const problems: Array<string> = []

for (const pkg of packages) {
  const src = Path.join(packagesDir, pkg, "src")
  for (const file of sources(src)) {
    for (const [, spec] of fs.readFileSync(file, "utf8").matchAll(imports)) {
      const named = /^@pic2video\/([^/]+)/.exec(spec)
      if (named !== null && named[1] !== pkg) edges.get(pkg)!.add(named[1])
      if (spec.startsWith(".")) {
        const target = Path.resolve(Path.dirname(file), spec)
        if (!target.startsWith(Path.join(packagesDir, pkg) + Path.sep)) {
          problems.push(`${Path.relative(root, file)} reaches into another package by a relative path: ${spec}`)
        }
      }
    }
  }
}

// a cycle: a package that reaches itself through its imports
const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
  [...edges.get(from)!].some((next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))))
for (const pkg of packages) if (reaches(pkg, pkg)) problems.push(`cycle: ${pkg} imports a package that imports it`)

for (const pkg of packages) console.log(`${pkg.padEnd(9)} → ${[...edges.get(pkg)!].sort().join(", ") || "(nothing)"}`)
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}
console.log("no cycle; no package reaches into another by a relative path")
