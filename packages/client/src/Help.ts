import { CliConfig, Command, type HelpDoc, Usage } from "@effect/cli"
import type * as Span from "@effect/cli/HelpDoc/Span"
import { HashSet } from "effect"

/**
 * `p2v --help` and `p2v COMMAND --help`, laid out for an 80-column terminal. @effect/cli's own help
 * pads every command's usage to the longest one (hundreds of columns) and repeats each option's type
 * in words; this reads the same definitions (the commands' HelpDoc and Usage, so the help cannot
 * drift from the options) and prints them as plain text: a usage broken before an option, a
 * description wrapped below it.
 */
export const width = 80

/** A command and the subcommands help can find under it (the lists given to `withSubcommands`). */
export interface Node {
  readonly command: Command.Command<any, any, any, any>
  readonly children: ReadonlyArray<Node>
}

const config = CliConfig.make({ showBuiltIns: false })

const nameOf = (command: Node["command"]): string => Array.from(Command.getNames(command))[0] ?? ""

const text = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return text(span.left) + text(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return text(span.value)
  }
}

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
export const wrapUsage = (usage: string, prefix: string): Array<string> => {
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

/** @effect/cli's words for an option's type and optionality: the usage shows both. */
const restated =
  /^(A true or false value|A user-defined piece of text|An integer|A floating point number|An existing file|A file|An existing file or directory|A directory|This setting is optional|One of the following: .*|This option may be repeated .*|This argument must be repeated .*|This option can be set from environment variables|This setting is a property argument which:)\.?$/

const paragraphs = (doc: HelpDoc.HelpDoc): Array<string> => {
  switch (doc._tag) {
    case "Paragraph":
      return [text(doc.value)]
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    default:
      return []
  }
}

/** A command's help, by section (`DESCRIPTION`, `ARGUMENTS`, `OPTIONS`, `COMMANDS`), as lines. */
const sections = (command: Node["command"], prefix: string): Map<string, Array<string>> => {
  const found = new Map<string, Array<string>>()
  let section = ""
  const add = (lines: Array<string>) => found.set(section, [...(found.get(section) ?? []), ...lines])
  const walk = (doc: HelpDoc.HelpDoc): void => {
    switch (doc._tag) {
      case "Sequence":
        walk(doc.left)
        walk(doc.right)
        return
      case "Header":
        section = text(doc.value)
        return
      case "Paragraph":
        add(wrap(text(doc.value)))
        return
      case "DescriptionList":
        for (const [term, about] of doc.definitions) {
          const name = fit(text(term), width - 2)
          // the choices are in the term, unless they did not fit there
          const said = paragraphs(about).filter((p) =>
            !restated.test(p.trim()) || (name !== text(term) && p.startsWith("One of"))
          )
          add([`  ${name}`, ...(said.length === 0 ? [] : wrap(said.join(" "), "      "))])
        }
        return
      case "Enumeration":
        // a subcommand: its usage padded to the longest, then its description
        for (const element of doc.elements) {
          const row = paragraphs(element).join(" ")
          const gap = /\s{2,}/.exec(row)
          const usage = gap === null ? row : row.slice(0, gap.index)
          const about = gap === null ? "" : row.slice(gap.index + gap[0].length)
          const line = `  ${prefix}${usage}`.length <= width ? usage : shortUsage(usage)
          add([...wrapUsage(line, `  ${prefix}`), ...(about === "" ? [] : wrap(about, "      "))])
        }
        return
      case "Empty":
        return
    }
  }
  walk(Command.getHelp(command, config))
  return found
}

const block = (title: string, lines: ReadonlyArray<string> | undefined) =>
  lines === undefined || lines.length === 0 ? [] : ["", `${title}:`, ...lines]

/** `p2v --help`: what it is, how to call it, its commands and options, then `footer`. */
export const root = (tree: Node, about: { readonly version: string; readonly footer: string }): string => {
  const name = nameOf(tree.command)
  const s = sections(tree.command, "")
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
  // a parent's rows name it already ("media list …"): the root's name goes before them
  const s = sections(node.command, `${parents} `)
  const usage = node.children.length > 0
    ? [`Usage: ${names.join(" ")} COMMAND`]
    : wrapUsage(text(usageSpan(node.command)), `Usage: ${parents} `)
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

const usageSpan = (command: Node["command"]): Span.Span => {
  const doc = Usage.getHelp(Command.getUsage(command))
  return doc._tag === "Paragraph" ? doc.value : { _tag: "Text", value: paragraphs(doc).join(" ") }
}

/**
 * What the arguments ask for: the help of a command (`--help` / `-h` anywhere before `--`), or the
 * help of a command that needs a subcommand and was given nothing (shown with exit 2), or nothing
 * (@effect/cli runs the command). `valued` lists the root's options that take a value.
 */
export const requested = (
  tree: Node,
  args: ReadonlyArray<string>,
  valued: ReadonlyArray<string>
): { readonly path: ReadonlyArray<Node>; readonly missing: boolean } | undefined => {
  const end = args.indexOf("--")
  const own = end === -1 ? args : args.slice(0, end)
  const help = own.includes("--help") || own.includes("-h")
  const path: Array<Node> = [tree]
  let rest = 0
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]
    if (arg.startsWith("-")) {
      if (path.length === 1 && valued.includes(arg)) i++
      continue
    }
    const child = path[path.length - 1].children.find((c) => HashSet.has(Command.getNames(c.command), arg))
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
