import * as Path from "node:path"
import pg from "pg"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Keyed, keyed } from "../foundation/admin.ts"
import { api, artifacts, check, heading, noChromium, type Portal, startPortal, suite, until } from "./support.ts"

/**
 * "Render selected" and posters in the browser: photos ticked in the Library open one form; its post
 * makes one render per photo (same service path, charge and allowance as the API), and the renders
 * list filtered to the batch shows each render's poster as it completes. Without JavaScript it is
 * the same forms; the form sent twice charges nothing more; a batch the allowance cannot cover is
 * refused whole; a render with no poster (completed before posters) shows a neutral box.
 */
const photos = [["astronaut.png", "crew portrait"], ["chelsea.png", "tabby"], ["coffee.png", "espresso"], [
  "rocket.jpg",
  "launch pad"
]] as const

const cookieOf = async (page: Page) =>
  (await page.context().cookies()).filter((c) => c.path === "/portal").map((c) => `${c.name}=${c.value}`).join("; ")

/** The page's batch form, to send over HTTP as it stands (hidden fields included). */
const batchFormOf = async (page: Page) => {
  const form = page.locator("form[action='/portal/renders/batch']")
  const fields = await form.evaluate((f) =>
    [...new FormData(f as HTMLFormElement).entries()].map(([k, v]) => [k, String(v)] as [string, string])
  )
  const cookie = await cookieOf(page)
  return () =>
    fetch(new URL("/portal/renders/batch", page.url()), {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields)
    })
}

describe.skipIf(noChromium)(suite("portal: render selected, posters"), () => {
  let portal: Portal
  let db: pg.Client

  beforeAll(async () => {
    portal = await startPortal({ env: { RENDER_SECONDS: "1" } })
    db = new pg.Client({ connectionString: portal.shared.databaseUrl })
    await db.connect()
  })
  afterAll(async () => {
    await db?.end()
    await portal?.close()
  })

  /** A workspace with the four test photos in its library, and its key's API client. */
  const stocked = async (workspaceArgs: Array<string> = []) => {
    const ws: Keyed = await keyed(portal.admin, "studio", [], workspaceArgs)
    const client = api(portal.baseUrl, ws.secret)
    const media: Record<string, { id: string }> = {}
    for (const [file, label] of photos) {
      const r = await client.upload(file, label)
      expect(r.status).toBe(201)
      media[label] = await r.json()
    }
    const used = async () => (await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used as number
    return { ws, client, media, used }
  }

  it("selects 4 photos in the Library, renders them, and sees 4 posters on the batch's list", async () => {
    const { ws, client, media, used } = await stocked()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const grid = page.getByRole("list", { name: "Photos" })
    await until(async () => (await grid.locator("img").count()) === 4, "the four photos in the grid")
    for (const img of await grid.locator("img").all()) {
      await img.scrollIntoViewIfNeeded()
      await until(
        () => img.evaluate((e) => (e as HTMLImageElement).complete && (e as HTMLImageElement).naturalWidth > 0),
        "a preview loaded"
      )
    }
    await page.evaluate(() => window.scrollTo(0, 0))
    // with script: "Select all on this page" and a count
    const count = page.locator("[data-select-count]")
    expect(await count.innerText()).toBe("No photos selected")
    const all = page.getByLabel("Select all on this page")
    await all.check()
    expect(await count.innerText()).toBe("4 photos selected")
    await all.uncheck()
    expect(await count.innerText()).toBe("No photos selected")
    // nothing ticked: the form says so rather than open an empty one
    await page.getByRole("button", { name: "Render selected" }).click()
    expect(await count.innerText()).toBe("Select one or more photos first.")
    expect(new URL(page.url()).pathname).toBe("/portal/library")
    for (const [, label] of photos) await page.getByLabel(`Select ${label}`).check()
    expect(await count.innerText()).toBe("4 photos selected")
    expect(await all.isChecked()).toBe(true)
    await check(page, "library-selection")

    await page.getByRole("button", { name: "Render selected" }).click()
    await page.waitForURL(/\/portal\/renders\/batch\?/)
    const formUrl = page.url()
    expect(await heading(page)).toBe("Render selected")
    const chosen = page.getByRole("list", { name: "Selected photos" })
    expect(await chosen.getByRole("listitem").count()).toBe(4)
    expect(await page.locator("main").innerText()).toContain(
      "This workspace has 100 of its 100 renders left this billing cycle."
    )
    await page.getByLabel("Quote", { exact: true }).fill("Made in one go")
    // one photo gets its own caption
    await page.getByText("A caption per photo").click()
    await page.getByLabel("Quote for espresso").fill("Coffee first")
    await page.getByLabel("Text colour").selectOption("yellow")
    await check(page, "render-selected")
    await page.getByRole("button", { name: "Create 4 renders" }).click()
    await page.waitForURL(/\/portal\/renders\?batch=[0-9a-f-]{36}$/)
    const batchUrl = page.url()
    expect(await page.getByRole("heading", { name: "Batch of 4 photos" }).count()).toBe(1)
    expect(await used()).toBe(4)

    // live: every render completes, and its poster replaces the box, without a reload
    const table = page.getByRole("table", { name: "Renders" })
    expect(await table.getByRole("row").count()).toBe(5) // the header and four renders
    await until(
      async () => (await page.getByTestId("batch-progress").innerText()).startsWith("4 of 4 completed"),
      "the batch to complete",
      240_000
    )
    const posters = table.locator("img.poster-thumb[src$='/poster.jpg']")
    await until(async () => (await posters.count()) === 4, "four posters")
    const cookie = await cookieOf(page)
    const alts: Array<string> = []
    for (const img of await posters.all()) {
      expect(await img.getAttribute("loading")).toBe("lazy")
      alts.push((await img.getAttribute("alt")) ?? "")
      await img.scrollIntoViewIfNeeded()
      await until(
        () => img.evaluate((e) => (e as HTMLImageElement).complete && (e as HTMLImageElement).naturalWidth === 360),
        "a poster loaded"
      )
      const r = await fetch(new URL((await img.getAttribute("src"))!, page.url()), { headers: { cookie } })
      expect(r.status).toBe(200)
      expect(r.headers.get("content-type")).toBe("image/jpeg")
      expect(r.headers.get("cache-control")).toMatch(/^private/)
      const bytes = new Uint8Array(await r.arrayBuffer())
      expect([bytes[0], bytes[1], bytes[2]]).toEqual([0xff, 0xd8, 0xff])
    }
    // alt text from the caption, the user's words isolated (FSI … PDI)
    expect(alts.sort()).toEqual([
      "Poster: “\u2068Coffee first\u2069”",
      ...Array(3).fill("Poster: “\u2068Made in one go\u2069”")
    ])
    await page.evaluate(() => window.scrollTo(0, 0))
    await check(page, "renders-batch")

    // on a phone-width screen too (no sideways scrolling)
    await page.setViewportSize({ width: 390, height: 844 })
    for (
      const [url, name] of [[`${portal.baseUrl}/portal/library`, "phone-library-selection"], [
        formUrl,
        "phone-render-selected"
      ], [batchUrl, "phone-renders-batch"]]
    ) {
      await page.goto(url)
      if (name === "phone-library-selection") await page.getByLabel("Select tabby").check()
      await check(page, name)
      const { scroll, width } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        width: document.documentElement.clientWidth
      }))
      expect(scroll, `${name} is ${scroll}px wide on a ${width}px screen`).toBeLessThanOrEqual(width)
    }
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(batchUrl)

    // the same four over the API: each with its own idempotency key, the espresso with its own caption
    const renders = await Promise.all((await table.locator("a[href^='/portal/renders/rnd_']").all()).map(async (a) => {
      const id = (await a.getAttribute("href"))!.split("/").pop()!
      return (await client.get(`/api/v1/renders/${id}`)).json()
    }))
    expect(renders.map((r) => r.status)).toEqual(["completed", "completed", "completed", "completed"])
    expect(new Set(renders.map((r) => r.idempotency_key)).size).toBe(4)
    for (const r of renders) {
      expect(r.idempotency_key).toMatch(/^portal-batch:[0-9a-f-]{36}:[0-9a-f-]{36}$/)
      // the public render object is unchanged: no poster, no batch
      expect(Object.keys(r).sort()).toEqual([
        "asset",
        "completed_at",
        "created_at",
        "error",
        "id",
        "idempotency_key",
        "metadata",
        "object",
        "progress",
        "status",
        "type",
        "updated_at"
      ])
      expect(r.metadata).toEqual({})
    }
    const espresso = renders.find((r) => r.idempotency_key.endsWith(media["espresso"].id))
    expect(espresso).toBeDefined()

    // the render page uses the poster for its player
    const first = renders[0]
    await page.goto(`${portal.baseUrl}/portal/renders/${first.id}`)
    expect(await page.locator("video").getAttribute("poster")).toBe(`/portal/renders/${first.id}/poster.jpg`)
    await check(page, "render-with-poster")

    // another workspace's session, or none, gets no poster: the portal's 404 page, or sign-in
    const stranger = await portal.signIn((await keyed(portal.admin, "studio")).workspace.id)
    const posterUrl = `${portal.baseUrl}/portal/renders/${first.id}/poster.jpg`
    const foreign = await fetch(posterUrl, { headers: { cookie: await cookieOf(stranger) }, redirect: "manual" })
    expect(foreign.status).toBe(404)
    expect(foreign.headers.get("content-type")).toContain("text/html")
    expect(await foreign.text()).toContain("There is nothing here, or it belongs to another workspace.")
    expect(
      (await fetch(`${portal.baseUrl}/portal/renders/rnd_${"x".repeat(24)}/poster.jpg`, {
        headers: { cookie },
        redirect: "manual"
      })).status
    ).toBe(404)
    const anonymous = await fetch(posterUrl, { redirect: "manual" })
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get("content-type") ?? "").not.toContain("image/jpeg")
    // and no batch of another workspace either
    expect((await fetch(batchUrl, { headers: { cookie: await cookieOf(stranger) }, redirect: "manual" })).status).toBe(
      404
    )

    // a render completed before posters has none: a neutral box in the list, no poster on its player
    await db.query("UPDATE renders SET poster_blob_key = NULL WHERE id = $1", [first.id])
    await page.goto(batchUrl)
    expect(await posters.count()).toBe(3)
    const row = table.getByRole("row").filter({ hasText: first.id })
    expect(await row.locator("span.poster-thumb.none[aria-hidden='true']").count()).toBe(1)
    await check(page, "renders-batch-no-poster")
    await page.goto(`${portal.baseUrl}/portal/renders/${first.id}`)
    expect(await page.locator("video").getAttribute("poster")).toBeNull()
    expect((await fetch(posterUrl, { headers: { cookie }, redirect: "manual" })).status).toBe(404)
  }, 360_000)

  it("works without JavaScript: the selection and the batch form are plain form posts", async () => {
    const { ws, media, used } = await stocked()
    const { url } = await portal.link(ws.workspace.id)
    const context = await portal.browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 1280, height: 800 }
    })
    try {
      const page = await context.newPage()
      await page.goto(url)
      // without script the link's page signs in with its one button (docs/portal.md)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.waitForURL(/\/portal$/)
      await page.goto(`${portal.baseUrl}/portal/library`)
      // the script's helpers stay hidden; the ticks and the button work alone
      expect(await page.getByLabel("Select all on this page").isVisible()).toBe(false)
      await page.getByLabel("Select tabby").check()
      await page.getByLabel("Select launch pad").check()
      await page.getByRole("button", { name: "Render selected" }).click()
      await page.waitForURL(/\/portal\/renders\/batch\?/)
      expect(new URL(page.url()).searchParams.getAll("media_id").sort()).toEqual(
        [media["tabby"].id, media["launch pad"].id].sort()
      )
      expect(await page.getByRole("list", { name: "Selected photos" }).getByRole("listitem").count()).toBe(2)
      await page.getByLabel("Quote", { exact: true }).fill("No script needed")
      await page.screenshot({ path: Path.join(artifacts, "render-selected-no-js.png"), fullPage: true })
      await page.getByRole("button", { name: "Create 2 renders" }).click()
      await page.waitForURL(/\/portal\/renders\?batch=/)
      expect(await page.getByRole("heading", { name: "Batch of 2 photos" }).count()).toBe(1)
      expect(await page.getByRole("table", { name: "Renders" }).getByRole("row").count()).toBe(3)
      expect(await used()).toBe(2)
      // no live updates without script: a reload shows the posters once the renders are done
      await until(
        async () => {
          await page.reload()
          return (await page.locator("img.poster-thumb[src$='/poster.jpg']").count()) === 2
        },
        "two posters after reloads",
        180_000
      )
      await page.screenshot({ path: Path.join(artifacts, "renders-batch-no-js.png"), fullPage: true })
    } finally {
      await context.close()
    }
  }, 240_000)

  it("the batch form sent twice, at once and again later, charges each photo once", async () => {
    const { ws, used } = await stocked()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    await page.getByLabel("Select all on this page").check()
    await page.getByRole("button", { name: "Render selected" }).click()
    await page.waitForURL(/\/portal\/renders\/batch\?/)
    await page.getByLabel("Quote", { exact: true }).fill("Only once")
    const send = await batchFormOf(page)
    const [a, b] = await Promise.all([send(), send()])
    const c = await send()
    for (const r of [a, b, c]) expect(r.status, await r.text()).toBe(303)
    const locations = new Set([a, b, c].map((r) => r.headers.get("location")))
    expect(locations.size).toBe(1)
    expect([...locations][0]).toMatch(/^\/portal\/renders\?batch=[0-9a-f-]{36}$/)
    expect(await used()).toBe(4)
    await page.goto(`${portal.baseUrl}${[...locations][0]}`)
    expect(await page.getByRole("heading", { name: "Batch of 4 photos" }).count()).toBe(1)
    expect(await page.getByRole("table", { name: "Renders" }).getByRole("row").count()).toBe(5)
    expect(await page.locator("main").innerText()).toContain("4 renders created.")
  }, 120_000)

  it("a photo archived after the form opened is refused on its own; the others are rendered", async () => {
    const { ws, media, used } = await stocked()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    await page.getByLabel("Select tabby").check()
    await page.getByLabel("Select espresso").check()
    await page.getByRole("button", { name: "Render selected" }).click()
    await page.waitForURL(/\/portal\/renders\/batch\?/)
    await portal.admin.ok("media", "archive", media["tabby"].id)
    await page.getByRole("button", { name: "Create 2 renders" }).click()
    await page.waitForURL(/\/portal\/renders\?batch=/)
    expect(await page.locator("main").innerText()).toContain("1 render created, 1 not.")
    const refused = page.getByRole("list", { name: "Photos not rendered" })
    expect(await refused.innerText()).toMatch(
      /^A photo no longer in the library: No media [0-9a-f-]{36} in this library \(unknown_media\)$/
    )
    expect(await page.getByRole("table", { name: "Renders" }).getByRole("row").count()).toBe(2)
    expect(await used()).toBe(1)
    await check(page, "renders-batch-one-refused")
  }, 120_000)

  it("a batch the allowance cannot cover is refused whole, in words, and charges nothing", async () => {
    const { ws, used } = await stocked(["--included", "3"])
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    await page.getByLabel("Select all on this page").check()
    await page.getByRole("button", { name: "Render selected" }).click()
    await page.waitForURL(/\/portal\/renders\/batch\?/)
    // said before sending
    expect(await page.getByRole("note").filter({ hasText: "the batch will be refused whole" }).count()).toBe(1)
    await page.getByRole("button", { name: "Create 4 renders" }).click()
    const alert = page.getByRole("alert").filter({
      hasText: "has room for 3 more renders, and 4 were asked for: nothing was created (quota_exceeded)"
    })
    await alert.waitFor()
    await check(page, "render-selected-refused")
    expect(await used()).toBe(0)
  }, 120_000)
})
