import type { SchemaIssue } from "effect"
import { SchemaAST } from "effect"

/**
 * The first problem of a decode failure, worded as the service has always worded it (Effect 3's
 * `ArrayFormatter`, which clients and tests read): a missing field `is missing`, a field not in the
 * schema `is unexpected, expected: "a" | "b"`, a wrong type `Expected string`, a literal set
 * `Expected "quote"` (its first member, as Effect 3 reported it), a rule's own sentence as written
 * (`must be at most 500 characters`), and a schema's `message` annotation in place of whatever
 * lies under it. Never the value received (it can be a whole file, or a temp path).
 */
export interface First {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A message annotation on the node itself (`message`, or `messageMissingKey`/`messageUnexpectedKey`). */
const ownMessage = (annotations: { readonly [key: string]: unknown } | undefined, key = "message") => {
  const m = annotations?.[key]
  return typeof m === "string" ? m : undefined
}

const quoted = (u: unknown) => typeof u === "string" ? JSON.stringify(u) : String(u)

/** What Effect 3 said was expected of a value of this schema. */
const expected = (ast: SchemaAST.AST): string => {
  const a = ast.annotations
  const named = a?.identifier ?? a?.expected ?? a?.title
  if (typeof named === "string") return named
  switch (ast._tag) {
    case "Literal":
      return quoted(ast.literal)
    case "Union": {
      // Effect 3 tried the members in turn and reported the first one's mismatch
      const first = ast.types[0]
      return first === undefined ? "never" : expected(first)
    }
    case "String":
      return "string"
    case "Number":
      return "number"
    case "Boolean":
      return "boolean"
    case "BigInt":
      return "bigint"
    case "Symbol":
      return "symbol"
    case "Null":
      return "null"
    case "Undefined":
      return "undefined"
    case "Never":
      return "never"
    case "Arrays":
      return "ReadonlyArray<unknown>"
    case "Objects":
      return "{ readonly [x: string]: unknown }"
    default:
      return ast._tag
  }
}

const keysOf = (ast: SchemaAST.AST): ReadonlyArray<PropertyKey> =>
  SchemaAST.isObjects(ast) ? ast.propertySignatures.map((p) => p.name) : []

const leaf = (path: ReadonlyArray<PropertyKey>, message: string): First => ({ path, message })

export const first = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): First | undefined => {
  switch (issue._tag) {
    case "Pointer":
      return first(issue.issue, [...path, ...issue.path])
    case "Encoding":
      return ownMessage(issue.ast.annotations) !== undefined
        ? leaf(path, ownMessage(issue.ast.annotations)!)
        : first(issue.issue, path)
    case "Filter": {
      // a rule's sentence: its `message` annotation, or what it returned when it refused
      const own = ownMessage(issue.filter.annotations)
      if (own !== undefined) return leaf(path, own)
      const inner = issue.issue
      if (inner._tag === "InvalidValue") {
        const m = ownMessage(inner.annotations)
        if (m !== undefined) return leaf(path, m)
        const exp = inner.annotations?.expected ?? issue.filter.annotations?.expected ??
          issue.filter.annotations?.description
        if (typeof exp === "string") return leaf(path, `Expected ${exp}`)
        return leaf(path, "Expected a valid value")
      }
      return first(inner, path)
    }
    case "Composite": {
      const own = ownMessage(issue.ast.annotations)
      if (own !== undefined) return leaf(path, own)
      return first(issue.issues[0], path)
    }
    case "AnyOf": {
      const own = ownMessage(issue.ast.annotations)
      if (own !== undefined) return leaf(path, own)
      if (issue.issues.length > 0) return first(issue.issues[0]!, path)
      return leaf(path, `Expected ${expected(issue.ast)}`)
    }
    case "MissingKey":
      return leaf(path, ownMessage(issue.annotations, "messageMissingKey") ?? "is missing")
    case "UnexpectedKey": {
      const own = ownMessage(issue.ast.annotations, "messageUnexpectedKey")
      if (own !== undefined) return leaf(path, own)
      const keys = keysOf(issue.ast)
      return leaf(
        path,
        keys.length === 0 ? "is unexpected" : `is unexpected, expected: ${keys.map(quoted).join(" | ")}`
      )
    }
    case "InvalidType":
      return leaf(path, ownMessage(issue.ast.annotations) ?? `Expected ${expected(issue.ast)}`)
    case "InvalidValue": {
      const m = ownMessage(issue.annotations)
      if (m !== undefined) return leaf(path, m)
      const exp = issue.annotations?.expected
      return leaf(path, typeof exp === "string" ? `Expected ${exp}` : "Expected a valid value")
    }
    case "Forbidden":
      return leaf(path, ownMessage(issue.annotations) ?? "is forbidden")
    case "OneOf":
      return leaf(path, ownMessage(issue.ast.annotations) ?? `Expected ${expected(issue.ast)}`)
  }
}
