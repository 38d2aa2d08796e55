import { randomBytes } from "node:crypto"
import { expect, it } from "vitest"
import { adminOk, startService, waitFor } from "../support/service.ts"
import { keyedWithPhoto, useDeployment } from "./support.ts"

/**
 * Spans: a server span records only an allow-list of query parameter names with
 * their values; any other parameter's value is REDACTED, a name that is not a plain word is too, and
 * a value that looks like a secret (an API key, a sign-in token, a long random string) is never
 * recorded whatever its name. The probes that once put a live secret in `url.query`: `?api_key=`,
 * `?amp;token=`, `?%20token=`, `?token%00=`. Header values are cut to 256 characters.
 */
const deployment = useDeployment()

it(
  "url.query keeps allow-listed parameters only and never a secret; url.path drops secret segments; the User-Agent is cut to 256",
  async () => {
    const svc = await startService(deployment.shared, {
      API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      OTEL_EXPORTER_OTLP_ENDPOINT: deployment.receiver.endpoint,
      OTEL_TRACES_SAMPLER: "always_on",
      OTEL_BSP_SCHEDULE_DELAY: "200"
    })
    deployment.services.push(svc)
    const { secret } = await keyedWithPhoto(svc, "coffee.png")
    const ws = await adminOk(svc.env, "workspace", "create", "--name", "Probed", "--plan", "studio")
    const token = new URL((await adminOk(svc.env, "portal", "link", ws.id)).url).searchParams.get("token")!
    // a random token (as a sign-in token or an OAuth code is), with every character class for certain
    const random = `Ab1${randomBytes(30).toString("base64url")}`
    const hexKey = randomBytes(32).toString("hex")

    // each probe names itself in its User-Agent, so its span can be found
    const probes: Array<{ readonly name: string; readonly path: string; readonly query?: string }> = [
      { name: "api_key", path: "/api/v1/usage", query: `api_key=${secret}` },
      { name: "amp-token", path: "/portal/sign-in", query: `amp;token=${token}` },
      { name: "space-token", path: "/portal/sign-in", query: `%20token=${token}` },
      { name: "nul-token", path: "/portal/sign-in", query: `token%00=${token}` },
      { name: "token", path: "/portal/sign-in", query: `token=${token}` },
      {
        name: "encoded",
        path: "/portal/sign-in",
        query: `t%6Fken=${encodeURIComponent(token)}&x=${encodeURIComponent(secret)}`
      },
      {
        name: "oauth",
        path: "/oauth/cloud_drive/callback",
        query: `code=4/0A${random}&state=${random}&error=access_denied`
      },
      { name: "allowed", path: "/api/v1/media", query: "limit=5&foo=bar&Secret=plain" },
      { name: "allowed-but-random", path: "/api/v1/media", query: `limit=${random}&cursor=${hexKey}&status=${secret}` },
      { name: "key-as-name", path: "/api/v1/media", query: `${secret}&${token}=1` },
      { name: "in-path", path: `/api/v1/renders/${secret}` },
      { name: "token-in-path", path: `/portal/${token}/x` }
    ]
    for (const p of probes) {
      const url = `${svc.baseUrl}${p.path}${p.query === undefined ? "" : `?${p.query}`}`
      // whatever the answer (a 400, a 404): the request's span is what is checked
      await fetch(url, {
        headers: { authorization: `Bearer ${secret}`, "user-agent": `probe-${p.name}` },
        redirect: "manual"
      })
    }
    const longAgent = `Mozilla/5.0 ${"x".repeat(12_000)}`
    expect((await fetch(`${svc.baseUrl}/healthz`, { headers: { "user-agent": longAgent } })).status).toBe(200)
    const keyAgent = `curl/8.0 (${secret})`
    expect((await fetch(`${svc.baseUrl}/healthz?probe=agent`, { headers: { "user-agent": keyAgent } })).status).toBe(
      200
    )

    const serverSpans = () => deployment.receiver.spans().filter((s) => s.kind === 2)
    const spanOf = (agent: string) => serverSpans().find((s) => s.attributes["user_agent.original"] === agent)
    await waitFor(
      async () =>
        probes.every((p) => spanOf(`probe-${p.name}`) !== undefined) &&
        serverSpans().some((s) =>
          s.attributes["url.path"] === "/healthz" && s.attributes["url.query"] === "probe=REDACTED"
        ),
      30_000,
      "every probe's server span"
    )
    const query = (name: string) => spanOf(`probe-${name}`)!.attributes["url.query"]
    console.log(
      probes.map((p) =>
        `${p.name}: ${p.path}${p.query ? `?${p.query}` : ""}\n  → url.path ${
          spanOf(`probe-${p.name}`)!.attributes["url.path"]
        } url.query ${query(p.name)}`
      ).join("\n")
    )

    expect(query("api_key")).toBe("api_key=REDACTED")
    expect(query("amp-token")).toBe("REDACTED=REDACTED")
    expect(query("space-token")).toBe("REDACTED=REDACTED")
    expect(query("nul-token")).toBe("REDACTED=REDACTED")
    expect(query("token")).toBe("token=REDACTED")
    expect(query("encoded")).toBe("token=REDACTED&x=REDACTED")
    expect(query("oauth")).toBe("code=REDACTED&state=REDACTED&error=access_denied")
    expect(query("allowed")).toBe("limit=5&foo=REDACTED&Secret=REDACTED")
    expect(query("allowed-but-random")).toBe("limit=REDACTED&cursor=REDACTED&status=REDACTED")
    expect(query("key-as-name")).toBe("REDACTED=REDACTED&REDACTED=REDACTED")
    expect(spanOf("probe-in-path")!.attributes["url.path"]).toBe("/api/v1/renders/REDACTED")
    expect(spanOf("probe-token-in-path")!.attributes["url.path"]).toBe("/portal/REDACTED/x")

    const long = serverSpans().find((s) => String(s.attributes["user_agent.original"]).startsWith("Mozilla/5.0 xxx"))
    expect(String(long?.attributes["user_agent.original"]).length).toBe(256)
    const keyed = serverSpans().find((s) => s.attributes["url.query"] === "probe=REDACTED")
    expect(keyed?.attributes["user_agent.original"]).toBe("curl/8.0 (REDACTED)")

    // and nowhere in anything exported: the key, the token, their secret parts, the random values
    const exported = JSON.stringify(deployment.receiver.spans(), (_k, v) => (typeof v === "bigint" ? String(v) : v))
    for (
      const [what, value] of Object.entries({
        secret,
        token,
        random,
        hexKey,
        "the key's secret part": secret.slice(25)
      })
    ) {
      for (const form of [value, encodeURIComponent(value)]) {
        expect(exported.includes(form), `${what} in a span`).toBe(false)
      }
    }
    expect(deployment.receiver.rejected()).toEqual([])
  },
  180_000
)
