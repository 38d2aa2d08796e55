import * as Version from "./Version.ts"

/**
 * What `p2v` answers before it loads the CLI. `--version` and the help need neither Effect nor the
 * HTTP client nor the API's definition, so they are answered from text alone: the version
 * (Version.ts) and a `HelpTable`, which the bundled `p2v` carries ready-made (computed from the
 * command definitions when it is built, scripts/build-client.ts) and the source entry computes from
 * them (HelpTable.ts). Everything else loads the CLI (Main.ts). No import here but Version.ts.
 */

/** A command as help finds it by name: `p2v`, its commands, theirs. */
export interface Entry {
  readonly name: string
  readonly alias?: string | undefined
  readonly children: ReadonlyArray<Entry>
}

export interface HelpTable {
  readonly tree: Entry
  /** `p2v`'s own options that take a value (their value is not a command's name). */
  readonly valued: ReadonlyArray<string>
  /** Each command's help, by its names after `p2v` joined by a space ("" for `p2v --help`). */
  readonly texts: Readonly<Record<string, string>>
}

/**
 * What the arguments ask for: the help of a command (`--help` / `-h` anywhere before `--`), or the
 * help of a command that needs a subcommand and was given nothing (shown with exit 2), or nothing
 * (the CLI runs the command). `named`: whether a node is called by that name.
 */
export const requested = <T extends { readonly children: ReadonlyArray<T> }>(
  tree: T,
  named: (node: T, name: string) => boolean,
  args: ReadonlyArray<string>,
  valued: ReadonlyArray<string>
): { readonly path: ReadonlyArray<T>; readonly missing: boolean } | undefined => {
  const end = args.indexOf("--")
  const own = end === -1 ? args : args.slice(0, end)
  const help = own.includes("--help") || own.includes("-h")
  const path: Array<T> = [tree]
  let rest = 0
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]
    if (arg.startsWith("-")) {
      if (path.length === 1 && valued.includes(arg)) i++
      continue
    }
    const child = path[path.length - 1].children.find((c) => named(c, arg))
    if (child === undefined) break
    path.push(child)
    rest = i + 1
  }
  if (help) return { path, missing: false }
  const last = path[path.length - 1]
  if (last.children.length > 0 && own.slice(rest).length === 0 && (path.length > 1 || own.length === 0)) {
    return { path, missing: true }
  }
  return undefined
}

/** The help these arguments (after `p2v`) ask for, from the table; as `Cli.helpFor`. */
export const helpFor = (
  table: HelpTable,
  args: ReadonlyArray<string>
): { readonly text: string; readonly missing: boolean } | undefined => {
  const asked = requested(table.tree, (e, name) => e.name === name || e.alias === name, args, table.valued)
  if (asked === undefined) return undefined
  return { text: table.texts[asked.path.slice(1).map((e) => e.name).join(" ")], missing: asked.missing }
}

/** Whether the arguments are `--version` alone (`-v` is effect/cli's alias of it). */
const isVersion = (args: ReadonlyArray<string>) => args.length === 1 && (args[0] === "--version" || args[0] === "-v")

/**
 * Runs `p2v`: the version or the help at once, else `load`s the CLI and runs it. Ctrl-C while it
 * loads ends with 130 at once (nothing was sent); the CLI then handles it itself.
 */
export const start = (
  argv: ReadonlyArray<string>,
  table: () => Promise<HelpTable>,
  load: () => Promise<(argv: ReadonlyArray<string>) => void>
): Promise<void> => {
  const args = argv.slice(2)
  if (isVersion(args)) {
    process.stdout.write(`${Version.text}\n\n`)
    return Promise.resolve()
  }
  const early = () => process.exit(130)
  process.on("SIGINT", early)
  process.on("SIGTERM", early)
  return table().then((t) => {
    const help = helpFor(t, args)
    if (help !== undefined) {
      process.stdout.write(`${help.text}\n`)
      process.exitCode = help.missing ? 2 : 0
      process.off("SIGINT", early)
      process.off("SIGTERM", early)
      return
    }
    return load().then((main) => {
      process.off("SIGINT", early)
      process.off("SIGTERM", early)
      main(argv)
    })
  })
}
