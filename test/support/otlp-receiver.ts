import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * TEST CODE: a small OTLP/HTTP receiver standing in for an OpenTelemetry collector. It accepts
 * `POST /v1/traces` with the JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends),
 * answers 200 `{}` as a collector does, and keeps every span with its process's resource attributes.
 * It checks nothing itself; the tests read what arrived.
 */
export interface ReceivedSpan {
  readonly service: string
  readonly resource: Record<string, unknown>
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  readonly kind: number
  readonly startNanos: bigint
  readonly endNanos: bigint
  readonly attributes: Record<string, unknown>
}

export interface OtlpReceiver {
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** request bodies that were not OTLP JSON (content type, parse errors) */
  readonly rejected: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

type AnyValue = {
  stringValue?: string
  intValue?: string | number
  doubleValue?: number
  boolValue?: boolean
  arrayValue?: { values?: Array<AnyValue> }
}
const valueOf = (v: AnyValue | undefined): unknown =>
  v === undefined
    ? undefined
    : v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ??
      v.arrayValue?.values?.map(valueOf)
const attributesOf = (list: Array<{ key: string; value: AnyValue }> | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]))

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const spans: Array<ReceivedSpan> = []
  const rejected: Array<string> = []
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (d: Buffer) => chunks.push(d))
    req.on("end", () => {
      if (
        req.method !== "POST" || req.url !== "/v1/traces" ||
        !(req.headers["content-type"] ?? "").startsWith("application/json")
      ) {
        rejected.push(`${req.method} ${req.url} ${req.headers["content-type"]}`)
        res.writeHead(404).end()
        return
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes)
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                service: String(resource["service.name"]),
                resource,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? undefined : s.parentSpanId,
                name: s.name,
                kind: s.kind,
                startNanos: BigInt(s.startTimeUnixNano),
                endNanos: BigInt(s.endTimeUnixNano),
                attributes: attributesOf(s.attributes)
              })
            }
          }
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      } catch (e) {
        rejected.push(String(e))
        res.writeHead(400).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => spans,
    rejected: () => rejected,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

/** The spans of one trace as an indented tree: `service  name  duration`, children under parents. */
export const traceTree = (spans: ReadonlyArray<ReceivedSpan>): string => {
  const byParent = new Map<string | undefined, Array<ReceivedSpan>>()
  const ids = new Set(spans.map((s) => s.spanId))
  for (const s of spans) {
    const parent = s.parentSpanId !== undefined && ids.has(s.parentSpanId) ? s.parentSpanId : undefined
    byParent.set(parent, [...(byParent.get(parent) ?? []), s])
  }
  const lines: Array<string> = []
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of (byParent.get(parent) ?? []).sort((a, b) => (a.startNanos < b.startNanos ? -1 : 1))) {
      const ms = Number(s.endNanos - s.startNanos) / 1e6
      lines.push(`${"  ".repeat(depth)}${s.name}  [${s.service}]  ${ms.toFixed(1)} ms`)
      walk(s.spanId, depth + 1)
    }
  }
  walk(undefined, 0)
  return lines.join("\n")
}
