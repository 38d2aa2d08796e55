import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyed } from "../foundation/admin.ts"
import { admin as adminCli, freePort, startService } from "../support/service.ts"
import {
  api,
  check,
  expectError,
  heading,
  noChromium,
  type Portal,
  sessionCookie,
  startPortal,
  suite,
  until
} from "./support.ts"

/**
 * Sign-in links, sessions and the portal's security rules: the browser where a person would use
 * one, plain HTTP where the test plays an attacker (a forged POST, a cookie sent to /api/v1).
 */
describe.skipIf(noChromium)(suite("portal: sign-in, sessions, security"), () => {
  let portal: Portal

  beforeAll(async () => {
    portal = await startPortal()
  })
  afterAll(async () => {
    await portal?.close()
  })

  /** Test-side time travel on the service's database (rows the portal owns: links, sessions). */
  const sql = async (text: string, params: Array<unknown>) => {
    const db = new pg.Client({ connectionString: portal.shared.databaseUrl })
    await db.connect()
    try {
      return (await db.query(text, params)).rowCount
    } finally {
      await db.end()
    }
  }

  const workspace = (plan = "studio") =>
    portal.admin.ok("workspace", "create", "--name", `Portal ${plan}`, "--plan", plan)

  it("the operator CLI prints a single-use sign-in link; opening it signs in (its page POSTs the token: 303 to /portal, HttpOnly, SameSite=Strict, Path=/portal)", async () => {
    const ws = await workspace()
    const before = Date.now()
    const r = await adminCli(portal.service.env, "portal", "link", ws.id)
    expect(r.code, r.stderr).toBe(0)
    expect(Object.keys(r.json).sort()).toEqual(["expires_at", "object", "url"])
    expect(r.json.object).toBe("portal_link")
    const url = new URL(r.json.url)
    expect(`${url.origin}${url.pathname}`).toBe(`${portal.baseUrl}/portal/sign-in`)
    expect(url.searchParams.get("token")?.length ?? 0).toBeGreaterThanOrEqual(32)
    const expires = Date.parse(r.json.expires_at)
    expect(expires).toBeGreaterThanOrEqual(before + 15 * 60_000 - 60_000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 15 * 60_000 + 5_000)

    const page = await portal.newPage()
    const posted = page.waitForResponse((res) =>
      new URL(res.url()).pathname === "/portal/sign-in" && res.request().method() === "POST"
    )
    const opened = await page.goto(r.json.url)
    // the link opens a page (nothing is spent by fetching it); its script sends the sign-in form
    expect(opened!.status()).toBe(200)
    const signInResponse = await posted
    expect(signInResponse.request().postData()).toBe(`token=${url.searchParams.get("token")}`)
    expect(signInResponse.status()).toBe(303)
    expect(new URL(signInResponse.headers()["location"]!, portal.baseUrl).pathname).toBe("/portal")
    await page.waitForURL(`${portal.baseUrl}/portal`)
    // the session cookie is the Strict one, and the only cookie the sign-in sets
    const setCookies = (await signInResponse.headersArray()).filter((h) => h.name.toLowerCase() === "set-cookie").map((
      h
    ) => h.value)
    const strict = setCookies.filter((c) => /;\s*SameSite=Strict/i.test(c))
    expect(strict, setCookies.join("\n")).toHaveLength(1)
    expect(setCookies).toHaveLength(1)
    const setCookie = strict[0]!
    expect(setCookie).toMatch(/;\s*HttpOnly/i)
    expect(setCookie).toMatch(/;\s*Path=\/portal(;|$)/i)
    expect(setCookie, "no Secure on an http PUBLIC_BASE_URL").not.toMatch(/;\s*Secure/i)
    expect(setCookie.split(";")[0]!.split("=")[1]!.length, "a high-entropy session id").toBeGreaterThanOrEqual(32)
    const cookie = await sessionCookie(page)
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/portal" })
    expect(await heading(page)).toBe("Overview")
    await check(page, "overview")

    // the link is single-use: a second browser gets the refusal page and no session
    const again = await portal.newPage()
    const refused = await again.goto(r.json.url)
    expect(refused!.status()).toBe(400)
    expect(await heading(again)).toBe("This sign-in link cannot be used")
    const text = await again.locator("main").innerText()
    expect(text).toMatch(/used|expired|not valid/i)
    expect(text).toMatch(/operator/i)
    expect(text).toMatch(/new link/i)
    expect(await again.context().cookies()).toEqual([])
    await check(again, "sign-in-refused", { signedIn: false })
    const after = await again.goto(`${portal.baseUrl}/portal`)
    expect(new URL(after!.url()).pathname).toBe("/portal/signed-out")
  })

  it("a sign-in link clicked on another site still signs in (the sign-in is this site's own POST, so the Strict cookie goes with the landing)", async () => {
    const ws = await workspace()
    const { url } = await portal.link(ws.id)
    const page = await portal.newPage()
    // a page of another site (localhost is not 127.0.0.1) holding the link, as a mail client would
    await page.goto(`${portal.baseUrl.replace("127.0.0.1", "localhost")}/portal/signed-out`)
    await page.evaluate((href) => {
      const a = document.createElement("a")
      a.href = href
      a.textContent = "Open the portal"
      document.body.append(a)
    }, url)
    const landings: Array<Promise<string>> = []
    page.on("request", (r) => {
      if (r.isNavigationRequest() && new URL(r.url()).pathname === "/portal") {
        landings.push(r.allHeaders().then((h) => h["cookie"] ?? ""))
      }
    })
    await page.getByRole("link", { name: "Open the portal" }).click()
    await page.waitForURL(`${portal.baseUrl}/portal`)
    await until(
      async () => (await page.locator("h1").innerText().catch(() => "")) === "Overview",
      "the Overview after a cross-site sign-in",
      30_000
    )
    await check(page, "overview-cross-site")
    // the landing carried the new session at once: no reload dance
    const session = await sessionCookie(page)
    const sent = await Promise.all(landings)
    expect(sent.length, JSON.stringify(sent)).toBe(1)
    expect(sent[0]).toContain(session.value)
    expect((await page.context().cookies()).filter((c) => c.sameSite !== "Strict"), "no cookie but the session")
      .toEqual([])
  })

  it("an expired link and an unknown token are refused with the same page and start nothing", async () => {
    const ws = await workspace()
    const expired = await portal.link(ws.id, "--ttl-minutes", "1")
    expect(Date.parse(expired.expires_at) - Date.now()).toBeLessThanOrEqual(60_000)
    // time travel instead of a minute's wait: the link's expiry moves into the past
    expect(
      await sql(
        `UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE workspace_id = $1 AND used_at IS NULL`,
        [ws.id]
      )
    ).toBe(1)
    for (
      const url of [
        expired.url,
        `${portal.baseUrl}/portal/sign-in?token=${"x".repeat(43)}`,
        `${portal.baseUrl}/portal/sign-in`
      ]
    ) {
      const page = await portal.newPage()
      const r = await page.goto(url)
      expect(r!.status(), url).toBe(400)
      expect(await heading(page)).toBe("This sign-in link cannot be used")
      expect(await page.context().cookies()).toEqual([])
    }
  })

  it("without a session every page redirects (303) to the signed-out page; signing out ends the session", async () => {
    const anonymous = await portal.newPage()
    for (
      const path of [
        "/portal",
        "/portal/keys",
        "/portal/library",
        "/portal/renders",
        "/portal/renders/new",
        "/portal/drive"
      ]
    ) {
      const r = await fetch(`${portal.baseUrl}${path}`, { redirect: "manual" })
      expect(r.status, path).toBe(303)
      expect(new URL(r.headers.get("location")!, portal.baseUrl).pathname, path).toBe("/portal/signed-out")
    }
    await anonymous.goto(`${portal.baseUrl}/portal/keys`)
    expect(new URL(anonymous.url()).pathname).toBe("/portal/signed-out")
    expect(await heading(anonymous)).toBe("You are signed out")
    expect(await anonymous.locator("main").innerText()).toMatch(/operator/i)
    await check(anonymous, "signed-out", { signedIn: false })

    const ws = await workspace()
    const page = await portal.signIn(ws.id)
    const cookie = await sessionCookie(page)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL(/\/portal\/signed-out$/)
    expect(await heading(page)).toBe("You are signed out")
    // the old cookie, replayed by hand, opens nothing
    const replay = await fetch(`${portal.baseUrl}/portal`, {
      redirect: "manual",
      headers: { cookie: `${cookie.name}=${cookie.value}` }
    })
    expect(replay.status).toBe(303)
    expect(new URL(replay.headers.get("location")!, portal.baseUrl).pathname).toBe("/portal/signed-out")
  })

  it("a session ends after its idle time and at its absolute expiry", async () => {
    for (
      const age of [
        // idle: unused for longer than the idle expiry (30 minutes)
        `UPDATE portal_sessions SET last_seen_at = now() - interval '31 minutes' WHERE workspace_id = $1`,
        // absolute: past its end however busy
        `UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE workspace_id = $1`
      ]
    ) {
      const ws = await workspace()
      const page = await portal.signIn(ws.id)
      expect(await sql(age, [ws.id])).toBe(1)
      await page.goto(`${portal.baseUrl}/portal/keys`)
      expect(new URL(page.url()).pathname, age).toBe("/portal/signed-out")
    }
  })

  it("a portal cookie sent to /api/v1 is ignored: 401 missing_api_key without Bearer", async () => {
    const ws = await workspace()
    const page = await portal.signIn(ws.id)
    const cookie = await sessionCookie(page)
    const jar = `${cookie.name}=${cookie.value}`
    for (const path of ["/api/v1/usage", "/api/v1/media"]) {
      await expectError(await api(portal.baseUrl, undefined, jar).get(path), 401, "missing_api_key")
    }
    await expectError(
      await api(portal.baseUrl, undefined, jar).postJson("/api/v1/renders", { media_id: crypto.randomUUID() }),
      401,
      "missing_api_key"
    )
    // and the OpenAPI document lists no portal route
    const doc = await (await fetch(`${portal.baseUrl}/openapi.json`)).json()
    expect(Object.keys(doc.paths).filter((p) => p.includes("portal"))).toEqual([])
  })

  it("a POST without the CSRF token is refused (403 'This form has expired') and changes nothing", async () => {
    const ws = await workspace()
    const page = await portal.signIn(ws.id)
    const cookie = await sessionCookie(page)
    const jar = `${cookie.name}=${cookie.value}`
    const keysBefore = (await portal.admin.ok("key", "list", ws.id)).data.length

    // forged by hand: the session cookie but no token, then a wrong token
    for (const csrf of [undefined, "0".repeat(43)]) {
      const body = new URLSearchParams({
        name: "forged",
        scopes: "renders:read",
        ...(csrf === undefined ? {} : { csrf })
      })
      const r = await fetch(`${portal.baseUrl}/portal/keys`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: jar, "content-type": "application/x-www-form-urlencoded" },
        body
      })
      expect(r.status, `csrf=${csrf}`).toBe(403)
      expect(await r.text()).toContain("This form has expired")
      const out = await fetch(`${portal.baseUrl}/portal/sign-out`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: jar, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(csrf === undefined ? {} : { csrf })
      })
      expect(out.status).toBe(403)
    }

    // in the browser: the real forms with their token removed
    await page.goto(`${portal.baseUrl}/portal/keys`)
    const form = page.getByRole("form", { name: "Create a key" })
    await form.getByLabel("Name", { exact: true }).fill("no token")
    await form.getByRole("checkbox", { name: "renders:read", exact: true }).check()
    await form.locator("input[name=\"csrf\"]").evaluate((e) => e.remove())
    const [refused] = await Promise.all([
      page.waitForNavigation(),
      form.getByRole("button", { name: "Create key" }).click()
    ])
    expect(refused!.status()).toBe(403)
    expect(await heading(page)).toBe("This form has expired")
    await check(page, "csrf-refused", { signedIn: false })
    expect((await portal.admin.ok("key", "list", ws.id)).data.length).toBe(keysBefore)

    await page.goto(`${portal.baseUrl}/portal`)
    await page.locator("form:has(button:text-is(\"Sign out\")) input[name=\"csrf\"]").evaluate((e) => e.remove())
    const [kept] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign out" }).click()])
    expect(kept!.status()).toBe(403)
    // still signed in
    const r = await page.goto(`${portal.baseUrl}/portal`)
    expect(r!.status()).toBe(200)
    expect(await heading(page)).toBe("Overview")
  })

  it("another workspace's render is 404 'Not found' in the portal", async () => {
    const [mine, theirs] = await Promise.all([keyed(portal.admin, "studio"), keyed(portal.admin, "studio")])
    const theirApi = api(portal.baseUrl, theirs.secret)
    const up = await theirApi.upload("rocket.jpg")
    expect(up.status).toBe(201)
    const media = await up.json()
    const created = await theirApi.postJson("/api/v1/renders", { media_id: media.id, quote: "theirs" })
    expect(created.status, await created.clone().text()).toBe(202)
    const render = await created.json()

    const page = await portal.signIn(mine.workspace.id)
    const r = await page.goto(`${portal.baseUrl}/portal/renders/${render.id}`)
    expect(r!.status()).toBe(404)
    expect(await heading(page)).toBe("Not found")
    expect(await page.content()).not.toContain("theirs")
    await check(page, "not-found")
    // an id that exists nowhere looks the same
    const none = await page.goto(`${portal.baseUrl}/portal/renders/rnd_${"A".repeat(22)}`)
    expect(none!.status()).toBe(404)
    // and their photo cannot be rendered from my new-render form either
    const form = await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${media.id}`)
    expect(form!.status()).toBeLessThan(500)
    expect(await page.locator(`option[value="${media.id}"]`).count()).toBe(0)
  })

  it("an inactive workspace cannot sign in, and its open session stops working at once", async () => {
    const ws = await workspace()
    const page = await portal.signIn(ws.id)
    const unused = await portal.link(ws.id)
    await portal.admin.ok("workspace", "update", ws.id, "--status", "inactive")

    const r = await page.goto(`${portal.baseUrl}/portal/keys`)
    const path = new URL(page.url()).pathname
    expect(path === "/portal/signed-out" || r!.status() === 403, `${r!.status()} ${page.url()}`).toBe(true)
    expect(await heading(page)).not.toBe("API keys")

    const other = await portal.newPage()
    const refused = await other.goto(unused.url)
    expect(refused!.status()).toBe(400)
    expect(await heading(other)).toBe("This sign-in link cannot be used")
    expect(await other.context().cookies()).toEqual([])
  })

  it("pages are readable on a phone-width screen (no sideways scrolling of the page)", async () => {
    const ws = await workspace()
    const key = await portal.admin.ok(
      "key",
      "create",
      ws.id,
      "--scopes",
      "media:read,media:write,renders:create,renders:read",
      "--name",
      "a-rather-long-key-name-for-a-phone",
      "--spend-cap-24h",
      "10"
    )
    // pages with content: a photo with a long label, and a render of it
    const client = api(portal.baseUrl, key.secret)
    const up = await client.upload(
      "rocket.jpg",
      "A launch pad at dusk, seen from the far side of the service structure"
    )
    expect(up.status).toBe(201)
    const created = await client.postJson("/api/v1/renders", { media_id: (await up.json()).id, quote: "Phone-sized" })
    expect(created.status).toBe(202)
    const render = await created.json()
    const page = await portal.signIn(ws.id)
    await page.setViewportSize({ width: 390, height: 844 })
    const pages = [
      ["/portal", "overview"],
      ["/portal/keys", "keys"],
      ["/portal/library", "library"],
      ["/portal/renders", "renders"],
      [`/portal/renders/${render.id}`, "render"],
      ["/portal/renders/new", "render-new"],
      ["/portal/drive", "drive"]
    ] as const
    for (const [path, name] of pages) {
      await page.goto(`${portal.baseUrl}${path}`)
      await check(page, `phone-${name}`)
      const { scroll, width } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        width: document.documentElement.clientWidth
      }))
      expect(scroll, `${path} is ${scroll}px wide on a ${width}px screen`).toBeLessThanOrEqual(width)
    }
  })

  it("the session cookie is Secure when PUBLIC_BASE_URL is https", async () => {
    // the same database behind a second API process that believes it is served over https (a proxy)
    const port = await freePort()
    const tls = await startService(portal.shared, {
      PORT: String(port),
      PUBLIC_BASE_URL: "https://portal.example.test"
    }, "api")
    try {
      const ws = await workspace()
      const link = await portal.link(ws.id)
      const token = new URL(link.url).searchParams.get("token")!
      // as a program signs in (docs/portal.md): the link's token POSTed as a form
      const r = await fetch(`${tls.baseUrl}/portal/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token })
      })
      expect(r.status, await r.text()).toBe(303)
      const cookie = r.headers.get("set-cookie") ?? ""
      expect(cookie).toMatch(/;\s*Secure/i)
      expect(cookie).toMatch(/;\s*HttpOnly/i)
      expect(cookie).toMatch(/;\s*SameSite=Strict/i)
    } finally {
      expect(await tls.stop(), tls.output().slice(-2000)).toBe(0)
    }
  })

  it("changes are rate limited per workspace (docs/portal.md: 120 a minute): then a 429 page with Retry-After, nothing changed", async () => {
    const ws = await workspace()
    const page = await portal.signIn(ws.id)
    await page.goto(`${portal.baseUrl}/portal/keys`)
    const csrf = await page.getByRole("form", { name: "Create a key" }).locator("input[name=\"csrf\"]").inputValue()
    const cookie = await sessionCookie(page)
    const statuses: Array<number> = []
    let limited: Response | undefined
    // a mint without scopes: refused by validation, so it changes nothing even when admitted
    for (let i = 0; i < 125 && limited === undefined; i++) {
      const r = await fetch(`${portal.baseUrl}/portal/keys`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: `${cookie.name}=${cookie.value}`, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, name: `n${i}` })
      })
      statuses.push(r.status)
      if (r.status === 429) limited = r
      else await r.arrayBuffer()
    }
    expect(statuses.indexOf(429), JSON.stringify(statuses)).toBe(120)
    expect(limited!.headers.get("retry-after") ?? "").toMatch(/^[1-9]\d*$/)
    const body = await limited!.text()
    expect(body).toMatch(/<h1[^>]*>/)
    expect(body).not.toMatch(/\bat [\w.]+ \(|node_modules/)
    expect((await portal.admin.ok("key", "list", ws.id)).data).toEqual([])
    // another workspace's changes are still admitted
    const other = await portal.signIn((await workspace()).id)
    await other.goto(`${portal.baseUrl}/portal/keys`)
    const otherCsrf = await other.getByRole("form", { name: "Create a key" }).locator("input[name=\"csrf\"]")
      .inputValue()
    const otherCookie = await sessionCookie(other)
    const admitted = await fetch(`${portal.baseUrl}/portal/keys`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: `${otherCookie.name}=${otherCookie.value}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({ csrf: otherCsrf, name: "other" })
    })
    expect(admitted.status).not.toBe(429)
    expect(statuses[0]).toBe(admitted.status)
  })

  it("pages carry a CSP without inline script, frame-ancestors 'none' and nosniff", async () => {
    const ws = await workspace()
    const page = await portal.signIn(ws.id)
    const cookie = await sessionCookie(page)
    const jar = `${cookie.name}=${cookie.value}`
    const targets: Array<[string, Record<string, string>]> = [
      ["/portal", { cookie: jar }],
      ["/portal/keys", { cookie: jar }],
      ["/portal/library", { cookie: jar }],
      ["/portal/signed-out", {}],
      ["/portal/sign-in?token=nope", {}]
    ]
    for (const [path, headers] of targets) {
      const r = await fetch(`${portal.baseUrl}${path}`, { headers, redirect: "manual" })
      const csp = r.headers.get("content-security-policy") ?? ""
      expect(csp, `CSP on ${path}`).not.toBe("")
      const directives = new Map(
        csp.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0] !== "").map((
          d
        ) => [d[0]!.toLowerCase(), d.slice(1)])
      )
      const scripts = directives.get("script-src") ?? directives.get("default-src")
      expect(scripts, `script-src or default-src on ${path}: ${csp}`).toBeDefined()
      expect(scripts, csp).not.toContain("'unsafe-inline'")
      expect(scripts, csp).not.toContain("'unsafe-eval'")
      expect(scripts, csp).not.toContain("*")
      expect(directives.get("frame-ancestors"), csp).toEqual(["'none'"])
      expect(r.headers.get("x-content-type-options"), path).toBe("nosniff")
      // the sign-in URL holds a token: no page sends it on as a referrer (docs/portal.md)
      expect(r.headers.get("referrer-policy"), path).toBe("no-referrer")
      if (headers.cookie !== undefined) expect(r.headers.get("cache-control") ?? "", path).toContain("no-store")
      expect(await r.text(), path).not.toMatch(/\bat [\w.]+ \(|node_modules/)
    }
  })
})
