import { Option } from "effect"
import { type Command, Param, Primitive } from "effect/cli"
import * as Launch from "./Launch.ts"

/**
 * `p2v --help` and `p2v COMMAND --help`, laid out for an 80-column terminal. effect/cli's own help
 * lists every flag under a usage of `[flags]` and names its types in its own words; this reads the
 * same definitions (each command's flags and arguments as given to `Command.make`, so the help
 * cannot drift from the options) and prints them as plain text: a usage that shows each option,
 * broken before an option, a description wrapped below it.
 */
export const width = 80

/**
 * A command, the flags and arguments it was made with, and the subcommands help can find under it
 * (the lists given to `withSubcommands`).
 */
export interface Node {
  readonly command: Command.Command.Any
  readonly config: Command.Command.Config
  readonly children: ReadonlyArray<Node>
}

const nameOf = (command: Node["command"]): string => command.name

/**
 * `text` in lines of at most `width` columns. Each line of it keeps its own leading spaces; a line
 * that is a row (`term  description`) continues under its description.
 */
export const wrap = (body: string, indent = ""): Array<string> => {
  const out: Array<string> = []
  for (const line of body.split("\n")) {
    if (line.trim() === "") {
      out.push("")
      continue
    }
    const row = /^\s*\S+\s{2,}/.exec(line)
    const lead = indent + (row?.[0] ?? /^\s*/.exec(line)?.[0] ?? "")
    const hang = row === null ? lead : indent + " ".repeat(row[0].length)
    let current = lead
    let fresh = true
    for (const word of line.slice(lead.length - indent.length).trim().split(/ +/)) {
      if (!fresh && current.length + 1 + word.length > width) {
        out.push(current)
        current = hang + word
      } else {
        current += fresh ? word : ` ${word}`
      }
      fresh = false
    }
    out.push(current)
  }
  return out
}

/** A usage's top-level pieces: `[--quote text]`, `--tag text...`, `<FILE>...`; brackets are never split. */
const pieces = (usage: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0
  let current = ""
  for (const word of usage.split(" ")) {
    const starts = depth === 0 && /^[[<-]/.test(word)
    if (current !== "" && (starts || (depth === 0 && out.length === 0 && !/^[[<-]/.test(current)))) {
      out.push(current)
      current = word
    } else {
      current = current === "" ? word : `${current} ${word}`
    }
    for (const c of word) {
      if (c === "[" || c === "(") depth++
      else if (c === "]" || c === ")") depth--
    }
  }
  if (current !== "") out.push(current)
  return out
}

/**
 * An option whose choices do not fit on a line (`--image-class person | doll_figurine | …`) is
 * shown as `--image-class CHOICE`; its help lists the choices.
 */
const fit = (piece: string, room: number) =>
  piece.length <= room ? piece : piece.replace(/^(\[?--\S+) ([^\]]+)(\]?)$/, "$1 CHOICE$3")

/** A usage broken only before a piece, later lines under the first piece after the command. */
const wrapUsage = (usage: string, prefix: string): Array<string> => {
  const all = pieces(usage)
  const names = all.filter((p) => !/^[[<-]/.test(p))
  const rest = all.slice(names.length)
  const head = `${prefix}${names.join(" ")}`
  const hang = " ".repeat(Math.min(head.length + 1, 24))
  const out: Array<string> = []
  let current = head
  for (const whole of rest) {
    const piece = fit(whole, width - hang.length - 1)
    if (current.trim() !== "" && current.length + 1 + piece.length > width) {
      out.push(current)
      current = hang + piece
    } else {
      current += ` ${piece}`
    }
  }
  out.push(current)
  return out
}

/** The usage shortened to fit one line: the command, `[options]`, its arguments. */
const shortUsage = (usage: string) => {
  const all = pieces(usage)
  const names = all.filter((p) => !/^[[<-]/.test(p))
  const args = all.filter((p) => p.startsWith("<"))
  return [...names, ...(all.length > names.length + args.length ? ["[options]"] : []), ...args].join(" ")
}

// ---- the flags and arguments, read from their definitions ----------------------------------------

/** One flag or argument as help shows it. */
interface Described {
  readonly kind: Param.ParamKind
  readonly name: string
  /** What its value is: `text`, `integer`, `file`, a metavar (`SECONDS`), the choices `a | b`; none for a switch. */
  readonly value: string | undefined
  readonly choices: ReadonlyArray<string> | undefined
  readonly description: string | undefined
  /** May be left out (optional, with a default, or a switch). */
  readonly optional: boolean
  /** May be given more than once: the fewest times it must be. */
  readonly repeated: { readonly min: number } | undefined
}

/** The words the usage has used for a value's type since Effect 3 (`--deadline integer`, `--out file`). */
const valueWord = (single: Param.Single<Param.ParamKind, unknown>): string | undefined => {
  if (single.typeName !== undefined) return single.typeName
  const primitive = single.primitiveType
  switch (primitive._tag) {
    case "Boolean":
      return undefined
    case "String":
    case "Redacted":
    case "KeyValuePair":
      return "text"
    case "Int":
      return "integer"
    case "Finite":
      return "float"
    case "Path": {
      const type = (primitive as { readonly pathType?: "file" | "directory" | "either" }).pathType
      return type === "either" || type === undefined ? "path" : type
    }
    case "Choice":
      return choicesOf(primitive)?.join(" | ")
    default:
      return Primitive.getTypeName(primitive)
  }
}

/** A choice's keys: what `Primitive.Choice` keeps of them (its accessor is internal to effect/cli). */
const choicesOf = (primitive: Primitive.Primitive<unknown>): ReadonlyArray<string> | undefined =>
  (primitive as { readonly choiceKeys?: ReadonlyArray<string> }).choiceKeys

const describeParam = (param: Param.Any): Described => {
  let optional = false
  let repeated: Described["repeated"]
  let node: Param.Any = param
  while (node._tag !== "Single") {
    const inner = node as Param.Any & { readonly _tag: string; readonly param: Param.Any }
    if (inner._tag === "Optional") optional = true
    if (inner._tag === "Variadic") {
      repeated = { min: Option.getOrElse((inner as unknown as Param.Variadic<Param.ParamKind, unknown>).min, () => 0) }
    }
    node = inner.param
  }
  const single = node as Param.Single<Param.ParamKind, unknown>
  const value = valueWord(single)
  return {
    kind: single.kind,
    name: single.name,
    value,
    choices: single.primitiveType._tag === "Choice" ? choicesOf(single.primitiveType) : undefined,
    description: Option.getOrUndefined(single.description),
    optional: optional || value === undefined,
    // key=value pairs repeat by nature (their flag is variadic inside): shown as one option, as before
    repeated: single.primitiveType._tag === "KeyValuePair" ? undefined : repeated
  }
}

/** A command's flags and arguments, in the order given. */
const paramsOf = (config: Command.Command.Config): Array<Described> => {
  const out: Array<Described> = []
  const visit = (value: Command.Command.Config[string]): void => {
    if (Param.isParam(value)) {
      const described = describeParam(value as Param.Any)
      if (!(value as { readonly hidden?: boolean }).hidden) out.push(described)
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v)
    } else {
      for (const v of Object.values(value as Command.Command.Config)) visit(v)
    }
  }
  visit(config)
  return out
}

/**
 * How the help names the value of the flag or argument `name` of a command on `path` (its own, or
 * its parents'): `integer`, `float`, `text`…, or the choices for a choice.
 */
export const valueOf = (
  path: ReadonlyArray<Node>,
  kind: Param.ParamKind,
  name: string
): { readonly word: string | undefined; readonly choices: ReadonlyArray<string> | undefined } | undefined => {
  for (const node of [...path].reverse()) {
    const found = paramsOf(node.config).find((p) => p.kind === kind && p.name === name)
    if (found !== undefined) return { word: found.value, choices: found.choices }
  }
  return undefined
}

/** `--quote text`, `--tag text...`, `<FILE>...` */
const term = (p: Described): string =>
  p.kind === "argument"
    ? `<${p.name}>${p.repeated !== undefined ? "..." : ""}`
    : `--${p.name}${p.value === undefined ? "" : ` ${p.value}`}${p.repeated !== undefined ? "..." : ""}`

/** The command's name, its options (flags first), then its arguments: `status [--wait] … <RENDER_ID>`. */
const usageOf = (node: Node, name: string): string => {
  const params = paramsOf(node.config)
  const flags = params.filter((p) => p.kind === "flag")
  const args = params.filter((p) => p.kind === "argument")
  const piece = (p: Described) => p.optional && p.repeated === undefined ? `[${term(p)}]` : term(p)
  return [name, ...flags.map(piece), ...args.map(piece)].join(" ")
}

/** A row of a list: the term, then what it does below it. */
const row = (name: string, said: ReadonlyArray<string>) => [
  `  ${name}`,
  ...(said.length === 0 ? [] : wrap(said.join(" "), "      "))
]

/** The usage rows of the commands under `node`, and of theirs, named from `node` down. */
const commandRows = (node: Node, prefix: string, path: ReadonlyArray<string> = []): Array<string> =>
  node.children.flatMap((child) => {
    const names = [...path, nameOf(child.command)]
    const usage = usageOf(child, names.join(" "))
    const line = `  ${prefix}${usage}`.length <= width ? usage : shortUsage(usage)
    const about = child.command.description ?? ""
    return [
      ...wrapUsage(line, `  ${prefix}`),
      ...(about === "" ? [] : wrap(about, "      ")),
      ...commandRows(child, prefix, names)
    ]
  })

/** A command's help, by section (`DESCRIPTION`, `ARGUMENTS`, `OPTIONS`, `COMMANDS`), as lines. */
const sections = (node: Node, prefix: string): Map<string, Array<string>> => {
  const found = new Map<string, Array<string>>()
  const add = (section: string, lines: Array<string>) =>
    lines.length === 0 ? undefined : found.set(section, [...(found.get(section) ?? []), ...lines])
  const description = node.command.description ?? ""
  if (description !== "") add("DESCRIPTION", wrap(description))
  const params = paramsOf(node.config)
  add(
    "ARGUMENTS",
    params.filter((p) => p.kind === "argument").flatMap((p) =>
      row(
        `<${p.name}>${p.repeated !== undefined && p.repeated.min > 0 ? ` ${p.repeated.min}+` : ""}`,
        p.description === undefined ? [] : [p.description]
      )
    )
  )
  add(
    "OPTIONS",
    params.filter((p) => p.kind === "flag").flatMap((p) => {
      const whole = term(p)
      const name = fit(whole, width - 2)
      // the choices are in the term, unless they did not fit there
      const choices = name !== whole && p.choices !== undefined
        ? [`One of the following: ${p.choices.join(", ")}`]
        : []
      return row(name, [...choices, ...(p.description === undefined ? [] : [p.description])])
    })
  )
  add("COMMANDS", commandRows(node, prefix))
  return found
}

const block = (title: string, lines: ReadonlyArray<string> | undefined) =>
  lines === undefined || lines.length === 0 ? [] : ["", `${title}:`, ...lines]

/** `p2v --help`: what it is, how to call it, its commands and options, then `footer`. */
export const root = (tree: Node, about: { readonly version: string; readonly footer: string }): string => {
  const name = nameOf(tree.command)
  const s = sections(tree, "")
  return [
    ...(s.get("DESCRIPTION") ?? []).map((line, i) => i === 0 ? `${name} ${about.version}: ${line}` : line),
    "",
    ...wrap(`Usage: ${name} [OPTIONS] COMMAND [ARGUMENTS] [COMMAND OPTIONS]`),
    `       ${name} COMMAND --help      a command's options`,
    `       ${name} --version`,
    ...block("Commands", s.get("COMMANDS")),
    ...block("Options (before the command)", s.get("OPTIONS")),
    "",
    ...wrap(about.footer)
  ].join("\n")
}

/** `p2v COMMAND --help` for the command at the end of `path` (from the root). */
export const command = (path: ReadonlyArray<Node>): string => {
  const names = path.map((n) => nameOf(n.command))
  const node = path[path.length - 1]
  const parents = names.slice(0, -1).join(" ")
  // a parent's rows go under its parents' names, as Effect 3's help had them ("p2v list …")
  const s = sections(node, `${parents} `)
  const usage = node.children.length > 0
    ? [`Usage: ${names.join(" ")} COMMAND`]
    : wrapUsage(usageOf(node, names[names.length - 1]), `Usage: ${parents} `)
  return [
    ...usage,
    ...(s.get("DESCRIPTION") === undefined ? [] : ["", ...s.get("DESCRIPTION")!]),
    ...block("Arguments", s.get("ARGUMENTS")),
    ...block("Options", s.get("OPTIONS")),
    ...block("Commands", s.get("COMMANDS")),
    "",
    `Options before the command, environment, limits and exit codes: ${names[0]} --help`
  ].join("\n")
}

/** The nodes from the root to the command these names (after the root's) lead to, as far as they go. */
export const find = (tree: Node, names: ReadonlyArray<string>): Array<Node> => {
  const path: Array<Node> = [tree]
  for (const name of names) {
    const child = path[path.length - 1].children.find((c) => c.command.name === name || c.command.alias === name)
    if (child === undefined) break
    path.push(child)
  }
  return path
}

/**
 * What the arguments ask for: the help of a command, of a command that needs a subcommand and was
 * given none (`missing`), or nothing (effect/cli runs the command); see `Launch.requested`, which
 * the bundled `p2v` runs on its ready-made table. `valued` lists the root's options that take a value.
 */
export const requested = (
  tree: Node,
  args: ReadonlyArray<string>,
  valued: ReadonlyArray<string>
): { readonly path: ReadonlyArray<Node>; readonly missing: boolean } | undefined =>
  Launch.requested(tree, (node, name) => node.command.name === name || node.command.alias === name, args, valued)
