import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { check, heading, noChromium, type Portal, sessionCookie, startPortal, suite, until } from "../portal/support.ts"

/**
 * The portal's sign-in and sign-out against another site and against link scanners, in a
 * real browser where a person would be (another site is `localhost`, the portal `127.0.0.1`: two
 * sites, so the browser applies SameSite exactly as it would for a stranger's page).
 * - item 1, login CSRF: a page of another site that sends the browser to *its own* sign-in link
 *   does not silently replace the person's session: they are asked first;
 * - item 2, logout CSRF: another site's POST to /portal/sign-out changes nothing;
 * - item 7, link scanners: HEAD, and a GET that runs no script, use nothing up; the person's click
 *   still signs in (with script at once; without, by one button).
 */
describe.skipIf(noChromium)(suite("adversarial: the portal's sign-in and sign-out"), () => {
  let portal: Portal

  beforeAll(async () => {
    portal = await startPortal()
  })
  afterAll(async () => {
    await portal?.close()
  })

  const workspace = (name: string) => portal.admin.ok("workspace", "create", "--name", name, "--plan", "studio")
  const otherSite = () => portal.baseUrl.replace("127.0.0.1", "localhost")

  /** The browser of `page` on a page of another site (the test then puts a link or a form on it). */
  const toOtherSite = (page: Page) => page.goto(`${otherSite()}/portal/signed-out`)

  /** Whose portal this browser is in (the workspace named in the signed-in header), or undefined. */
  const signedInAs = async (page: Page) => {
    const r = await page.context().request.get(`${portal.baseUrl}/portal`, { maxRedirects: 0 })
    if (r.status() !== 200) return undefined
    return /<span class="workspace"[^>]*>(?:<bdi>)?([^<]*)/.exec(await r.text())?.[1]
  }

  it("login CSRF: another site sending a signed-in browser to its own link is asked about, never switched silently", async () => {
    const [mine, theirs] = await Promise.all([workspace("Victim studio"), workspace("Attacker studio")])
    const page = await portal.signIn(mine.id)
    const before = await sessionCookie(page)
    const { url } = await portal.link(theirs.id)

    // a link on the other site (what a page, a mail or a chat shows), clicked
    await toOtherSite(page)
    await page.evaluate((href) => {
      const a = document.createElement("a")
      a.href = href
      a.textContent = "Open"
      document.body.append(a)
    }, url)
    await page.getByRole("link", { name: "Open" }).click()
    await until(
      async () => (await heading(page).catch(() => "")).includes("instead?"),
      "the question whether to switch",
      30_000
    )
    expect(await heading(page)).toBe("Sign in to Attacker studio instead?")
    expect(await page.locator("main").innerText()).toContain("You are signed in to Victim studio")
    await check(page, "sign-in-switch", { signedIn: false })
    // nothing changed: the same session, the same workspace
    expect((await sessionCookie(page)).value).toBe(before.value)
    expect(await signedInAs(page)).toBe("Victim studio")

    // another site's form that POSTs the token itself (no script of ours in between): not switched either
    await toOtherSite(page)
    const token = new URL(url).searchParams.get("token")!
    await page.evaluate(({ action, token }) => {
      const form = document.createElement("form")
      form.method = "post"
      form.action = action
      const input = document.createElement("input")
      input.type = "hidden"
      input.name = "token"
      input.value = token
      form.append(input)
      document.body.append(form)
      form.submit()
    }, { action: `${portal.baseUrl}/portal/sign-in`, token })
    await page.waitForURL(`${portal.baseUrl}/portal/sign-in`)
    await page.waitForLoadState("load")
    expect((await sessionCookie(page)).value).toBe(before.value)
    expect(await signedInAs(page)).toBe("Victim studio")

    // the person may still choose to switch: the link was not used up by any of this
    await page.goto(url)
    await until(async () => (await heading(page).catch(() => "")).includes("instead?"), "the question again", 30_000)
    await page.getByRole("button", { name: "Sign in to Attacker studio" }).click()
    await page.waitForURL(`${portal.baseUrl}/portal`)
    expect(await heading(page)).toBe("Overview")
    expect(await signedInAs(page)).toBe("Attacker studio")
    // and the session it replaced is over, not just forgotten by the browser
    const old = await fetch(`${portal.baseUrl}/portal`, {
      redirect: "manual",
      headers: { cookie: `${before.name}=${before.value}` }
    })
    expect(old.status).toBe(303)
  })

  it("logout CSRF: another site's POST to /portal/sign-out neither clears the cookie nor ends the session", async () => {
    const ws = await workspace("Kept signed in")
    const page = await portal.signIn(ws.id)
    const before = await sessionCookie(page)
    await toOtherSite(page)
    await page.evaluate((action) => {
      const form = document.createElement("form")
      form.method = "post"
      form.action = action
      document.body.append(form)
      form.submit()
    }, `${portal.baseUrl}/portal/sign-out`)
    // (this site's signed-out page: the other site's page has the same path)
    await page.waitForURL(`${portal.baseUrl}/portal/signed-out`)
    expect((await sessionCookie(page)).value).toBe(before.value)
    expect(await signedInAs(page)).toBe("Kept signed in")
    // over plain HTTP: without the cookie (as another site's request comes) nothing is cleared
    const r = await fetch(`${portal.baseUrl}/portal/sign-out`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: ""
    })
    expect(r.status).toBe(303)
    expect(r.headers.get("set-cookie")).toBeNull()
    // with the cookie but not the token: 403, still signed in (the portal's own Sign out still works)
    const forged = await fetch(`${portal.baseUrl}/portal/sign-out`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: `${before.name}=${before.value}`, "content-type": "application/x-www-form-urlencoded" },
      body: ""
    })
    expect(forged.status).toBe(403)
    expect(await signedInAs(page)).toBe("Kept signed in")
    await page.goto(`${portal.baseUrl}/portal`)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL(/\/portal\/signed-out$/)
    const replay = await fetch(`${portal.baseUrl}/portal`, {
      redirect: "manual",
      headers: { cookie: `${before.name}=${before.value}` }
    })
    expect(replay.status, "the session ended on the server").toBe(303)
  })

  it("link scanners: HEAD and a GET without script use nothing up; the person's browser then signs in", async () => {
    const ws = await workspace("Scanned link")
    const { url } = await portal.link(ws.id)
    const head = await fetch(url, { method: "HEAD", redirect: "manual" })
    expect(head.status).toBe(200)
    expect(head.headers.get("set-cookie")).toBeNull()
    // what a mail scanner (or curl -L) gets: a page whose form POSTs the token; no session
    const scanned = await fetch(url, { redirect: "manual" })
    expect(scanned.status).toBe(200)
    expect(scanned.headers.get("set-cookie")).toBeNull()
    const html = await scanned.text()
    expect(html).toMatch(/<form method="post" action="\/portal\/sign-in"/)
    expect(html).toContain(`value="${new URL(url).searchParams.get("token")}"`)

    // the person's click, with script: signed in with no extra click
    const page = await portal.newPage()
    await page.goto(url)
    await page.waitForURL(`${portal.baseUrl}/portal`)
    expect(await heading(page)).toBe("Overview")
    expect(await signedInAs(page)).toBe("Scanned link")

    // without script: one button
    const second = await portal.link(ws.id)
    expect((await fetch(second.url, { method: "HEAD" })).status).toBe(200)
    const context = await portal.browser.newContext({ javaScriptEnabled: false })
    try {
      const plain = await context.newPage()
      const opened = await plain.goto(second.url)
      expect(opened!.status()).toBe(200)
      expect(await heading(plain)).toBe("Sign in")
      expect(await plain.locator("main").innerText()).toContain("Scanned link")
      await plain.screenshot({ path: "test-results/portal/sign-in-no-script.png", fullPage: true })
      await plain.getByRole("button", { name: "Sign in" }).click()
      await plain.waitForURL(`${portal.baseUrl}/portal`)
      expect(await heading(plain)).toBe("Overview")
    } finally {
      await context.close()
    }
    // spent now: a third opening is refused
    expect((await fetch(second.url)).status).toBe(400)
  })

  it("the sign-in page passes the page checks (axe, landmarks, no CSP violation)", async () => {
    const ws = await workspace("Checked sign-in")
    const { url } = await portal.link(ws.id)
    const page = await portal.newPage()
    // held on the page: the script's own POST is answered 204 (a navigation that leaves the page as
    // it is), so the page can be looked at
    await page.route(
      `${portal.baseUrl}/portal/sign-in`,
      (route) => (route.request().method() === "POST" ? route.fulfill({ status: 204 }) : route.continue())
    )
    const posted = page.waitForRequest((r) => r.method() === "POST")
    await page.goto(url, { waitUntil: "commit" })
    await posted
    expect(await heading(page)).toBe("Sign in")
    await check(page, "sign-in", { signedIn: false })
  })
})
