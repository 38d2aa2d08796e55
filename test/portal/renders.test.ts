import * as fs from "node:fs"
import * as Path from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Keyed, keyed } from "../foundation/admin.ts"
import {
  api,
  artifacts,
  check,
  expectError,
  fixture,
  heading,
  markDocument,
  noChromium,
  type Portal,
  sameDocument,
  startPortal,
  suite,
  until
} from "./support.ts"

const RENDER_SECONDS = 2

/** The page's render form, to send over HTTP as it stands (hidden fields included), fields replaced as asked. */
const renderFormOf = async (page: Page) => {
  const form = page.locator("form").filter({ has: page.getByRole("button", { name: "Create render" }) })
  const action = new URL((await form.getAttribute("action")) ?? "", page.url()).toString()
  const fields = await form.evaluate((f) =>
    [...new FormData(f as HTMLFormElement).entries()].map(([k, v]) => [k, String(v)] as [string, string])
  )
  const cookie = (await page.context().cookies()).filter((c) => c.path === "/portal").map((c) => `${c.name}=${c.value}`)
    .join("; ")
  const send = (replace: Record<string, string> = {}) =>
    fetch(action, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields.map(([k, v]) => [k, replace[k] ?? v]))
    })
  return { fields, send }
}

/**
 * The library and renders in the browser: upload two photos through the file input, render one
 * with a caption, watch it finish without reloading, play it, download it; archive a photo.
 * A key (from the operator CLI) reads the same workspace over /api/v1 to prove both sides agree.
 */
describe.skipIf(noChromium)(suite("portal: library and renders"), () => {
  let portal: Portal
  let ws: Keyed

  beforeAll(async () => {
    portal = await startPortal({ env: { RENDER_SECONDS: String(RENDER_SECONDS) } })
    ws = await keyed(portal.admin, "studio")
  })
  afterAll(async () => {
    await portal?.close()
  })

  it("uploads two photos, renders one with a caption, watches it complete live, plays and downloads it", async () => {
    const client = api(portal.baseUrl, ws.secret)
    const page = await portal.signIn(ws.workspace.id)
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Library" }).click()
    await page.waitForURL(/\/portal\/library$/)
    expect(await heading(page)).toBe("Library")
    await check(page, "library-empty")

    // two files at once, through the labelled file input
    // (the grid is named "Photos" too: the file input is the labelled <input type=file>)
    const input = page.locator("input[type=\"file\"]").and(page.getByLabel("Photos", { exact: true }))
    expect(await input.getAttribute("multiple")).not.toBeNull()
    await input.setInputFiles([fixture("chelsea.png"), fixture("rocket.jpg")])
    await page.getByRole("button", { name: "Upload" }).click()
    for (const name of ["chelsea.png", "rocket.jpg"]) {
      await page.getByText(`Uploaded ${name}`).waitFor({ timeout: 60_000 })
      expect(await page.locator(`progress[aria-label="Uploading ${name}"]`).count(), `progress for ${name}`).toBe(1)
    }

    // the same library over the API (one upload path)
    const listed = await (await client.get("/api/v1/media")).json()
    expect(listed.data.map((m: { readonly mime_type: string }) => m.mime_type).sort()).toEqual([
      "image/jpeg",
      "image/png"
    ])

    // the grid shows both with a loaded preview and their dimensions (filled within seconds)
    await until(async () => {
      await page.goto(`${portal.baseUrl}/portal/library`)
      const text = await page.getByRole("list", { name: "Photos" }).innerText()
      return text.includes("451 × 300") && text.includes("640 × 427")
    }, "dimensions in the grid")
    const grid = page.getByRole("list", { name: "Photos" })
    expect(await grid.getByRole("listitem").count()).toBe(2)
    const images = grid.locator("img")
    expect(await images.count()).toBe(2)
    for (const img of await images.all()) {
      expect(await img.getAttribute("loading")).toBe("lazy")
      expect(await img.getAttribute("alt")).not.toBeNull()
      await img.scrollIntoViewIfNeeded()
      await until(
        () => img.evaluate((e) => (e as HTMLImageElement).complete && (e as HTMLImageElement).naturalWidth > 0),
        "a preview loaded"
      )
    }
    await check(page, "library")

    // an unsupported file is refused with the API's code, and nothing is added
    const bogus = Path.join(artifacts, "not-a-photo.txt")
    fs.mkdirSync(artifacts, { recursive: true })
    fs.writeFileSync(bogus, "plain text, not an image")
    await input.setInputFiles(bogus)
    await page.getByRole("button", { name: "Upload" }).click()
    await page.getByRole("alert").filter({ hasText: "unsupported_media_type" }).waitFor({ timeout: 30_000 })
    await check(page, "library-upload-refused")
    expect((await (await client.get("/api/v1/media")).json()).data).toHaveLength(2)

    // render the cat with a caption, from its "Render" link
    const cat = listed.data.find((m: { readonly id: string; readonly mime_type: string }) =>
      m.mime_type === "image/png"
    )
    await page.goto(`${portal.baseUrl}/portal/library`)
    await page.locator(`a[href$="/portal/renders/new?media_id=${cat.id}"]`).click()
    await page.waitForURL(/\/portal\/renders\/new\?media_id=/)
    expect(await heading(page)).toBe("New render")
    expect(await page.getByLabel("Photo", { exact: true }).inputValue()).toBe(cat.id)
    await check(page, "render-new")
    const caption = "Hello from the portal"
    await page.getByLabel("Quote").fill(caption)
    await page.getByLabel("Text colour").selectOption("yellow")
    await page.getByLabel("Metadata (JSON)").fill(JSON.stringify({ source: "browser-suite" }))
    await page.getByRole("button", { name: "Create render" }).click()
    await page.waitForURL(/\/portal\/renders\/rnd_[A-Za-z0-9]+$/)
    const renderId = new URL(page.url()).pathname.split("/").pop()!
    expect(await heading(page)).toBe(`Render ${renderId}`)
    expect(await page.locator("main").innerText()).toContain(caption)

    // live: the status reaches completed without a reload
    await markDocument(page)
    const status = page.getByTestId("render-status")
    const seen = new Set<string>()
    await until(
      async () => {
        const s = (await status.innerText()).trim().toLowerCase()
        seen.add(s)
        return s.includes("completed")
      },
      "the render to complete on the page",
      120_000
    ).catch(async (e) => {
      // what the page showed, what the API says, and what the service logged: which side stalled
      const doc = await (await client.get(`/api/v1/renders/${renderId}`)).text()
      throw new Error(
        `${e.message}; the page showed ${[...seen].join(" → ")}; the API says ${doc}\n${
          portal.service.output().slice(-6000)
        }`
      )
    })
    expect(await sameDocument(page), "completed shown without a reload").toBe(true)

    // play it: the <video> loads, lasts RENDER_SECONDS, and plays
    const video = page.locator("video")
    await video.waitFor()
    expect(await video.getAttribute("controls")).not.toBeNull()
    await until(() => video.evaluate((v) => (v as HTMLVideoElement).readyState >= 2), "video readyState >= 2", 30_000)
    const duration = await video.evaluate((v) => (v as HTMLVideoElement).duration)
    expect(Math.abs(duration - RENDER_SECONDS), `duration ${duration}`).toBeLessThan(0.2)
    await video.evaluate((v) => {
      const el = v as HTMLVideoElement
      el.muted = true
      return el.play()
    })
    await until(() => video.evaluate((v) => (v as HTMLVideoElement).currentTime > 0.2), "the video to play", 30_000)
    await video.evaluate((v) => (v as HTMLVideoElement).pause())
    await check(page, "render-completed")

    // another workspace's session gets 404 for this render's page, video and download
    const videoSrc = new URL((await video.getAttribute("src"))!, page.url()).toString()
    const downloadHref = new URL((await page.getByRole("link", { name: "Download" }).getAttribute("href"))!, page.url())
      .toString()
    const stranger = await portal.signIn((await keyed(portal.admin, "studio")).workspace.id)
    const strangerCookie = (await stranger.context().cookies()).filter((c) => c.path === "/portal").map((c) =>
      `${c.name}=${c.value}`
    ).join("; ")
    for (const url of [page.url(), videoSrc, downloadHref]) {
      const r = await fetch(url, { headers: { cookie: strangerCookie }, redirect: "manual" })
      expect(r.status, url).toBe(404)
      expect(r.headers.get("content-type") ?? "", url).not.toContain("video/mp4")
    }
    // and without any session: no bytes either
    for (const url of [videoSrc, downloadHref]) {
      const r = await fetch(url, { redirect: "manual" })
      expect([303, 401, 403, 404], `${url}: ${r.status}`).toContain(r.status)
      expect(r.headers.get("content-type") ?? "", url).not.toContain("video/mp4")
    }

    // download: an MP4 named after the render
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download" }).click()
    ])
    expect(download.suggestedFilename()).toBe(`${renderId}.mp4`)
    const file = Path.join(artifacts, `${renderId}.mp4`)
    await download.saveAs(file)
    const bytes = fs.readFileSync(file)
    expect(bytes.length).toBeGreaterThan(1000)
    expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp")
    fs.rmSync(file)

    // the same render over the API: the caption and metadata the form sent, charged once
    const doc = await (await client.get(`/api/v1/renders/${renderId}`)).json()
    expect(doc).toMatchObject({ status: "completed", metadata: { source: "browser-suite" } })
    expect(doc.asset.duration_sec).toBeCloseTo(RENDER_SECONDS, 1)
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes).toEqual({ used: 1, included: 100 })

    // the list: newest first, filterable by status
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Renders" }).click()
    await page.waitForURL(/\/portal\/renders$/)
    expect(await heading(page)).toBe("Renders")
    const table = page.getByRole("table", { name: "Renders" })
    const row = table.getByRole("row").filter({ hasText: renderId })
    expect(await row.count()).toBe(1)
    expect((await row.innerText()).toLowerCase()).toContain("completed")
    await check(page, "renders")
    // the select submits its form: wait for that page (and its script) before the next change
    await Promise.all([page.waitForURL(/status=failed/), page.getByLabel("Status").selectOption("failed")])
    await until(
      async () =>
        (await page.getByRole("table", { name: "Renders" }).getByRole("row").filter({ hasText: renderId }).count()) ===
          0,
      "the filter to hide it"
    )
    await Promise.all([page.waitForURL(/status=completed/), page.getByLabel("Status").selectOption("completed")])
    await until(
      async () =>
        (await page.getByRole("table", { name: "Renders" }).getByRole("row").filter({ hasText: renderId }).count()) ===
          1,
      "the filter to show it"
    )

    // the Overview counts it
    await page.goto(`${portal.baseUrl}/portal`)
    const bar = page.getByRole("progressbar", { name: "Renders used this cycle" })
    expect(await bar.getAttribute("value")).toBe("1")
    expect(await bar.getAttribute("max")).toBe("100")
    const completedRow = page.getByRole("row").filter({ hasText: "completed" })
    expect(await completedRow.count()).toBe(1)
    expect((await completedRow.innerText()).trim()).toMatch(/^completed\s+1$/)
    await check(page, "overview-after-render")
  }, 240_000) // uploads, a render and a video on a 2-core machine running other suites beside it

  it("uploads a photo dropped on the drop zone", async () => {
    const client = api(portal.baseUrl, ws.secret)
    const count = async () => (await (await client.get("/api/v1/media?limit=100")).json()).data.length
    const before = await count()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const bytes = fs.readFileSync(fixture("coffee.png")).toString("base64")
    // a real drop event carrying a File, on the zone that holds the "Photos" input
    const dataTransfer = await page.evaluateHandle((b64) => {
      const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
      const dt = new DataTransfer()
      dt.items.add(new File([raw], "dropped-coffee.png", { type: "image/png" }))
      return dt
    }, bytes)
    const zone = page.locator("[data-dropzone]").filter({ has: page.locator("input[type=\"file\"]") })
    await zone.dispatchEvent("dragenter", { dataTransfer })
    await zone.dispatchEvent("dragover", { dataTransfer })
    await zone.dispatchEvent("drop", { dataTransfer })
    await page.getByText("Uploaded dropped-coffee.png").waitFor({ timeout: 60_000 })
    expect(await count()).toBe(before + 1)
  })

  it("a render form with invalid fields shows the API's own message and charges nothing", async () => {
    const client = api(portal.baseUrl, ws.secret)
    const up = await client.upload("coffee.png", "coffee")
    expect(up.status).toBe(201)
    const media = await up.json()
    const before = (await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used
    const page = await portal.signIn(ws.workspace.id)
    const cases: Array<
      { readonly name: string; readonly fill: () => Promise<void>; readonly body: Record<string, unknown> }
    > = [
      {
        name: "metadata",
        fill: () => page.getByLabel("Metadata (JSON)").fill(JSON.stringify({ nested: { not: "scalar" } })),
        body: { metadata: { nested: { not: "scalar" } } }
      },
      {
        // the input's maxlength stops a person, not a script: the server's rule still answers
        name: "sub_prompt",
        fill: async () => {
          await page.getByLabel("Sub prompt").evaluate((e) => e.removeAttribute("maxlength"))
          await page.getByLabel("Sub prompt").fill("x".repeat(151))
        },
        body: { sub_prompt: "x".repeat(151) }
      }
    ]
    for (const c of cases) {
      const refused = await client.postJson("/api/v1/renders", { media_id: media.id, ...c.body })
      const text = await refused.text()
      expect(refused.status, text).toBe(422)
      const message: string = JSON.parse(text).error.message
      await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${media.id}`)
      await c.fill()
      await page.getByRole("button", { name: "Create render" }).click()
      const alert = page.getByRole("alert").filter({ hasText: message })
      await alert.first().waitFor()
      expect(new URL(page.url()).pathname, c.name).not.toMatch(/rnd_/)
      await check(page, `render-new-invalid-${c.name}`)
    }
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used).toBe(before)
  })

  it("a double submit of the render form charges once (the form carries its own idempotency key)", async () => {
    const client = api(portal.baseUrl, ws.secret)
    const media = await (await client.upload("chelsea.png", "twice")).json()
    const before = (await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${media.id}`)
    await page.getByLabel("Quote").fill("only once")
    // the browser's form, sent twice over HTTP exactly as it stands (hidden fields included)
    const { send } = await renderFormOf(page)
    const [first, second] = await Promise.all([send(), send()])
    const third = await send()
    // at once: one creates, the other replays it or is told the first is still in progress (409)
    for (const r of [first, second]) expect([303, 409], `${r.status}`).toContain(r.status)
    expect(third.status, "a later resubmit replays the render").toBe(303)
    const locations = [first, second, third].filter((r) => r.status === 303).map((r) => r.headers.get("location"))
    expect(locations.length).toBeGreaterThan(0)
    expect(new Set(locations).size, JSON.stringify(locations)).toBe(1)
    expect(locations[0]).toMatch(/\/portal\/renders\/rnd_[A-Za-z0-9]+$/)
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used).toBe(before + 1)
  })

  it("the form's key sent again with other values is 409 idempotency_conflict, said in the form's words, nothing charged", async () => {
    const client = api(portal.baseUrl, ws.secret)
    const media = await (await client.upload("chelsea.png", "edited")).json()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${media.id}`)
    await page.getByLabel("Quote").fill("first words")
    const form = await renderFormOf(page)
    const send = (quote: string) => form.send({ quote })
    const fields = form.fields
    expect((await send("first words")).status).toBe(303)
    const before = (await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used
    const edited = await send("other words")
    expect(edited.status).toBe(409)
    const text = await edited.text()
    expect(text).toContain("This form was already sent with other values")
    // the page hands a fresh key, so sending these values again is a new render
    const key = fields.find(([k]) => k === "idempotency_key")?.[1]
    expect(text).toMatch(/name="idempotency_key" value="[^"]+"/)
    expect(text).not.toContain(`value="${key}"`)
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used).toBe(before)
    expect((await send("first words")).status, "the same values still replay").toBe(303)
  })

  it("each photo in the library says what the service saw in it, in the New render form's words", async () => {
    const client = api(portal.baseUrl, ws.secret)
    for (const [file, label] of [["astronaut.png", "crew portrait"], ["coffee.png", "espresso"]]) {
      expect((await client.upload(file, label)).status).toBe(201)
    }
    const page = await portal.signIn(ws.workspace.id)
    const card = (label: string) =>
      page.getByRole("list", { name: "Photos" }).getByRole("listitem").filter({ hasText: label })
    // the model looks right after the upload has answered: "Being looked at…" until then
    await until(
      async () => {
        await page.goto(`${portal.baseUrl}/portal/library`)
        return !(await card("crew portrait").innerText()).includes("Being looked at") &&
          !(await card("espresso").innerText()).includes("Being looked at")
      },
      "both photos looked at",
      60_000
    )
    expect(await card("crew portrait").innerText()).toContain("Seen as person")
    expect(await card("espresso").innerText()).toContain("Seen as product_object")
    // the same words as the form's Image class field, which overrides it; its Photo list says it too
    await page.goto(`${portal.baseUrl}/portal/renders/new`)
    const offered = await page.getByLabel("Image class").locator("option").allInnerTexts()
    expect(offered).toContain("person")
    expect(offered).toContain("product_object")
    const photos = await page.getByLabel("Photo", { exact: true }).locator("option").allInnerTexts()
    expect(photos).toContain("crew portrait — 512 × 512 — seen as person")
    expect(photos).toContain("espresso — 600 × 400 — seen as product_object")
    await check(page, "render-new-seen-as")
    await page.goto(`${portal.baseUrl}/portal/library`)
    await check(page, "library-seen-as")
  })

  it("archives a photo after a confirmation; it leaves the grid and the API's library", async () => {
    const client = api(portal.baseUrl, ws.secret)
    const up = await client.upload("rocket.jpg", "to archive")
    expect(up.status).toBe(201)
    const media = await up.json()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const item = page.getByRole("list", { name: "Photos" }).getByRole("listitem").filter({ hasText: "to archive" })
    expect(await item.count()).toBe(1)
    await item.getByRole("button", { name: /Archive/ }).click()
    const confirm = page.getByRole("button", { name: "Archive photo" })
    await confirm.waitFor()
    await check(page, "library-archive-confirm")
    await confirm.click()
    await until(
      async () =>
        (await page.getByRole("list", { name: "Photos" }).getByRole("listitem").filter({ hasText: "to archive" })
          .count()) === 0,
      "the photo to leave the grid"
    )
    await page.goto(`${portal.baseUrl}/portal/library`)
    expect(
      await page.getByRole("list", { name: "Photos" }).getByRole("listitem").filter({ hasText: "to archive" }).count()
    ).toBe(0)
    const ids = (await (await client.get("/api/v1/media?limit=100")).json()).data.map((m: { readonly id: string }) =>
      m.id
    )
    expect(ids).not.toContain(media.id)
    await expectError(await client.get(`/api/v1/media/${media.id}/preview`), 404, "unknown_media")
  })
})
