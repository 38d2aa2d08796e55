import * as http from "node:http"

/**
 * A plain node:http client for the cases fetch hides: a request on its own connection (so an upload
 * the server cuts off cannot poison the shared keep-alive pool), or on a given keep-alive agent (to
 * see what the server does with the connection afterwards).
 */
export interface RawResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
}

export const rawRequest = (
  url: string,
  opts: {
    method?: string
    headers?: Record<string, string>
    body?: Uint8Array | string
    agent?: http.Agent | false
    timeoutMs?: number
  } = {}
) =>
  new Promise<RawResponse>((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? "GET", headers: opts.headers, agent: opts.agent ?? false },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c) => chunks.push(c))
        res.on(
          "end",
          () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") })
        )
        res.on("error", reject)
      }
    )
    req.setTimeout(
      opts.timeoutMs ?? 30_000,
      () => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 30_000} ms`))
    )
    // the server may answer and close before the whole upload is sent: that is not an error here
    req.on("error", (e) => reject(e))
    if (opts.body !== undefined) req.end(opts.body)
    else req.end()
  })

/** A multipart/form-data body built by hand. */
export const multipart = (
  parts: Array<{ name: string; value: string } | { name: string; filename: string; type?: string; bytes: Uint8Array }>
) => {
  const boundary = `----p2v${Math.random().toString(36).slice(2)}`
  const chunks: Array<Buffer> = []
  for (const p of parts) {
    if ("value" in p) {
      chunks.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`)
      )
    } else {
      chunks.push(Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\n` +
          `Content-Type: ${p.type ?? "application/octet-stream"}\r\n\r\n`
      ))
      chunks.push(Buffer.from(p.bytes))
      chunks.push(Buffer.from("\r\n"))
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) }
}

/** A RawResponse as a fetch Response, for the shared assertions. */
export const asResponse = (r: RawResponse) => {
  const headers = new Headers()
  for (const [k, v] of Object.entries(r.headers)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one)
  }
  return new Response(r.text, { status: r.status, headers })
}

/** POST /api/v1/media on a connection of its own (big bodies the server may stop reading). */
export const uploadAlone = async (
  baseUrl: string,
  secret: string,
  file: { bytes: Uint8Array; filename: string; type?: string }
) => {
  const form = multipart([{ name: "file", ...file }])
  return asResponse(
    await rawRequest(`${baseUrl}/api/v1/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": form.contentType },
      body: form.body
    })
  )
}
