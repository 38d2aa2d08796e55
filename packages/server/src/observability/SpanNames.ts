import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base"

/**
 * Span names as the OpenTelemetry semantic conventions write them, fixed on the way out (the spans
 * are made by libraries whose names we do not choose):
 * - a statement's span (effect/sql names it after the database, `postgres`, or `sql.execute`: any span
 *   with a `db.query.text`) becomes `{db.operation.name} {db.collection.name}` (`SELECT renders`),
 *   with those two attributes set from the statement; the text stays in `db.query.text`, with
 *   placeholders (`$1`) and never the values;
 * - an entity's span (`Render(rnd_…).Start`, the cluster's name with the entity's id in it) becomes
 *   `Render.Start`: span names must have few values; the id stays in the `entity.id` attribute.
 * The HTTP server's span is named `{method} {route}` while the request runs (Observability.ts).
 */
const statement =
  /^\s*(?:WITH\b[\s\S]*?\)\s*)?(SELECT|INSERT|UPDATE|DELETE|MERGE|LOCK|BEGIN|COMMIT|ROLLBACK|CREATE|ALTER|DROP|TRUNCATE|SET|SHOW)\b/i
const target = /\b(?:FROM|INTO|UPDATE|TABLE|JOIN)\s+("?[A-Za-z_][A-Za-z0-9_]*"?(?:\."?[A-Za-z_][A-Za-z0-9_]*"?)?)/i
const entityCall = /^([A-Za-z]+)\([^)]*\)\.([A-Za-z]+)$/

const databaseName = (
  queryText: string
): { readonly operation: string; readonly collection: string | undefined } | undefined => {
  const op = statement.exec(queryText)?.[1]?.toUpperCase()
  if (op === undefined) return undefined
  const collection = target.exec(queryText)?.[1]?.replace(/"/g, "")
  return { operation: op, collection }
}

const renamed = (span: ReadableSpan): ReadableSpan => {
  const text = span.attributes["db.query.text"]
  if (typeof text === "string") {
    const db = databaseName(text)
    if (db === undefined) return span
    const attributes = {
      ...span.attributes,
      "db.operation.name": db.operation,
      ...(db.collection === undefined ? {} : { "db.collection.name": db.collection })
    }
    return Object.create(span, {
      name: { value: db.collection === undefined ? db.operation : `${db.operation} ${db.collection}` },
      attributes: { value: attributes }
    })
  }
  const entity = entityCall.exec(span.name)
  return entity === null ? span : Object.create(span, { name: { value: `${entity[1]}.${entity[2]}` } })
}

export class SemanticSpanNames implements SpanExporter {
  private readonly inner: SpanExporter
  constructor(inner: SpanExporter) {
    this.inner = inner
  }
  export(spans: Array<ReadableSpan>, resultCallback: Parameters<SpanExporter["export"]>[1]): void {
    this.inner.export(spans.map(renamed), resultCallback)
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown()
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve()
  }
}
