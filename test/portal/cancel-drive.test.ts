import type { Page } from "playwright-core"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyed } from "../foundation/admin.ts"
import {
  api,
  check,
  heading,
  markDocument,
  noChromium,
  type Portal,
  sameDocument,
  startPortal,
  suite,
  until
} from "./support.ts"

/**
 * Renders long enough to cancel (RENDER_SECONDS=60: the cancel always lands while the render
 * runs) and the drive emulator (TEST CODE, a fake of the provider) for connect and import.
 */
describe.skipIf(noChromium)(suite("portal: cancel a render, drive import"), () => {
  let portal: Portal

  beforeAll(async () => {
    portal = await startPortal({ drive: true, env: { RENDER_SECONDS: "60" } })
  })
  afterAll(async () => {
    await portal?.close()
  })

  /** A JPEG of noise (about 15 KB: big enough to download slowly). */
  const noisy = () =>
    sharp({
      create: {
        width: 200,
        height: 150,
        channels: 3,
        background: "#808080",
        noise: { type: "gaussian", mean: 128, sigma: 40 }
      }
    }).jpeg().toBuffer().then((b) => new Uint8Array(b))

  const usageBar = async (page: Page) => {
    await page.goto(`${portal.baseUrl}/portal`)
    return page.getByRole("progressbar", { name: "Renders used this cycle" }).getAttribute("value")
  }

  it("cancels a running render after a confirmation; the Overview shows the render refunded", async () => {
    const ws = await keyed(portal.admin, "studio")
    const client = api(portal.baseUrl, ws.secret)
    const up = await client.upload("chelsea.png", "cat")
    expect(up.status).toBe(201)
    const media = await up.json()

    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${media.id}`)
    await page.getByLabel("Quote").fill("to be canceled")
    await page.getByRole("button", { name: "Create render" }).click()
    await page.waitForURL(/\/portal\/renders\/rnd_[A-Za-z0-9]+$/)
    const detail = page.url()
    const renderId = new URL(detail).pathname.split("/").pop()!
    expect((await page.getByTestId("render-status").innerText()).toLowerCase()).toMatch(/queued|processing/)
    await check(page, "render-running")

    expect(await usageBar(page)).toBe("1")
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used).toBe(1)

    await page.goto(detail)
    await page.getByRole("button", { name: "Cancel render" }).click()
    await page.waitForLoadState("load")
    // a <dialog>, a confirmation page, or a single confirm form (contract allows each)
    const dialog = page.getByRole("dialog")
    if (await dialog.isVisible()) {
      await check(page, "render-cancel-confirm")
      await dialog.getByRole("button", { name: "Cancel render" }).click()
    } else if (page.url() !== detail) {
      await check(page, "render-cancel-confirm")
      await page.getByRole("button", { name: "Cancel render" }).click()
    }
    await page.waitForURL(detail)
    await until(
      async () => (await page.getByTestId("render-status").innerText()).toLowerCase().includes("canceled"),
      "canceled on the page"
    )
    expect(await page.getByRole("button", { name: "Cancel render" }).count()).toBe(0)
    // (the contract asks for the error code on failed renders; a canceled one may say it in words)
    expect(await page.locator("main").innerText()).toMatch(/render_canceled|refunded/)
    await check(page, "render-canceled")

    const doc = await (await client.get(`/api/v1/renders/${renderId}`)).json()
    expect(doc).toMatchObject({ status: "canceled", error: { code: "render_canceled" } })
    expect(await usageBar(page)).toBe("0")
    expect((await page.getByRole("row").filter({ hasText: "canceled" }).innerText()).trim()).toMatch(/^canceled\s+1$/)
    await check(page, "overview-after-cancel")
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used).toBe(0)
  })

  it("the renders list and a render's page follow a change made elsewhere without a reload", async () => {
    const ws = await keyed(portal.admin, "studio")
    const client = api(portal.baseUrl, ws.secret)
    const media = await (await client.upload("coffee.png")).json()
    const created = await client.postJson("/api/v1/renders", { media_id: media.id, quote: "canceled by the operator" })
    expect(created.status, await created.clone().text()).toBe(202)
    const { id } = await created.json()

    const list = await portal.signIn(ws.workspace.id)
    await list.goto(`${portal.baseUrl}/portal/renders`)
    const row = () => list.getByRole("table", { name: "Renders" }).getByRole("row").filter({ hasText: id }).innerText()
    expect((await row()).toLowerCase()).toMatch(/queued|processing/)
    const detail = await portal.signIn(ws.workspace.id)
    await detail.goto(`${portal.baseUrl}/portal/renders/${id}`)
    expect((await detail.getByTestId("render-status").innerText()).toLowerCase()).toMatch(/queued|processing/)
    await markDocument(list)
    await markDocument(detail)

    // a 60 s render is still running: the operator cancels it, both pages notice by polling
    await portal.admin.ok("render", "cancel", id)
    await until(async () => (await row()).toLowerCase().includes("canceled"), "the list row to say canceled")
    await until(
      async () => (await detail.getByTestId("render-status").innerText()).toLowerCase().includes("canceled"),
      "the detail to say canceled"
    )
    expect(await sameDocument(list), "list updated without a reload").toBe(true)
    expect(await sameDocument(detail), "detail updated without a reload").toBe(true)
  })

  it("connects the drive through the provider's consent, browses to a folder and imports it (items shown live)", async () => {
    const emulator = portal.emulator!
    const holiday = emulator.addFolder({ name: "Holiday" })
    emulator.addFolder({ name: "Work" })
    emulator.addFile({ name: "a-beach.jpg", parent: holiday, mimeType: "image/jpeg", bytes: await noisy() })
    emulator.addFile({ name: "b-hill.jpg", parent: holiday, mimeType: "image/jpeg", bytes: await noisy() })
    emulator.addFile({ name: "c-notes.txt", parent: holiday, mimeType: "text/plain", bytes: "not a photo" })

    const ws = await keyed(portal.admin, "studio")
    const client = api(portal.baseUrl, ws.secret)
    const page = await portal.signIn(ws.workspace.id)
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "Drive" }).click()
    await page.waitForURL(/\/portal\/drive$/)
    expect(await heading(page)).toBe("Drive")
    expect(await page.locator("main").innerText()).toContain("Not connected")
    await check(page, "drive-not-connected")

    // consent at the provider (the emulator redirects straight back), then back in the portal
    await page.getByRole("button", { name: "Connect drive" }).click()
    await page.waitForURL(/\/portal\/drive(\?.*)?$/, { timeout: 30_000 })
    expect(emulator.lastAuthorizeRequest()).toBeDefined()
    const main = await page.locator("main").innerText()
    expect(main).toContain("Connected")
    expect(main).not.toContain("Not connected")
    expect((await (await client.get("/api/v1/integrations/cloud")).json()).connected).toBe(true)
    for (const t of [...emulator.issuedTokens().accessTokens, ...emulator.issuedTokens().refreshTokens]) {
      expect(await page.content()).not.toContain(t)
    }

    const folders = page.getByRole("list", { name: "Folders" })
    await folders.waitFor()
    expect(await folders.getByRole("link", { name: "Work" }).count()).toBe(1)
    await check(page, "drive-connected")
    await folders.getByRole("link", { name: "Holiday" }).click()
    await page.getByRole("link", { name: "Up" }).waitFor()
    expect(await page.locator("main").innerText()).toContain("Holiday")
    await check(page, "drive-folder")

    // slow downloads (about 2 s a file) keep the import running while its page is watched
    emulator.slowDownloads({ chunkBytes: 1024, delayMs: 150 })
    await page.getByRole("button", { name: "Import this folder" }).click()
    await page.waitForLoadState("load")
    // wherever the import lands (its own page or back on Drive), the Drive page lists it
    await page.goto(`${portal.baseUrl}/portal/drive`)
    const imports = page.getByRole("table", { name: "Imports" })
    await imports.waitFor()
    const link = imports.getByRole("link").first()
    const href = await link.getAttribute("href")
    expect(href).toMatch(/\/portal\/imports\/imp_[A-Za-z0-9_]+$/)
    const importId = href!.split("/").pop()!
    await check(page, "drive-imports")
    await link.click()
    await page.waitForURL(/\/portal\/imports\/imp_/)
    expect(await heading(page)).toBe(`Import ${importId}`)
    expect((await page.locator("main").innerText()).toLowerCase(), "the import is still running when its page opens")
      .toContain("pending")
    await markDocument(page)
    const files = page.getByRole("table", { name: "Files" })
    await until(
      async () => {
        const text = (await files.innerText().catch(() => "")).toLowerCase()
        return text.includes("a-beach.jpg") && text.includes("b-hill.jpg") && text.includes("c-notes.txt") &&
          !/pending/.test((await page.locator("main").innerText()).toLowerCase())
      },
      "the import's items",
      60_000
    )
    expect(await sameDocument(page), "items and counts arrived without a reload").toBe(true)
    emulator.slowDownloads(null)
    const row = (name: string) => files.getByRole("row").filter({ hasText: name }).innerText()
    expect((await row("a-beach.jpg")).toLowerCase()).toContain("imported")
    expect((await row("b-hill.jpg")).toLowerCase()).toContain("imported")
    expect((await row("c-notes.txt")).toLowerCase()).toMatch(/skipped[\s\S]*unsupported_media_type/)
    await check(page, "import")

    const api1 = await (await client.get(`/api/v1/media/imports/${importId}`)).json()
    expect(api1).toMatchObject({ status: "completed", counts: { discovered: 3, imported: 2, skipped: 1, failed: 0 } })

    // another workspace cannot see this import
    const stranger = await portal.signIn((await keyed(portal.admin, "studio")).workspace.id)
    const foreign = await stranger.goto(`${portal.baseUrl}/portal/imports/${importId}`)
    expect(foreign!.status()).toBe(404)
    expect(await heading(stranger)).toBe("Not found")
    expect(await stranger.content()).not.toContain("a-beach.jpg")

    // the imported photos are in the library
    await page.goto(`${portal.baseUrl}/portal/library`)
    expect(await page.getByRole("list", { name: "Photos" }).getByRole("listitem").count()).toBe(2)

    // disconnect
    await page.goto(`${portal.baseUrl}/portal/drive`)
    await page.getByRole("button", { name: "Disconnect" }).click()
    await until(
      async () => (await page.locator("main").innerText()).includes("Not connected"),
      "Not connected after disconnect"
    )
    expect((await (await client.get("/api/v1/integrations/cloud")).json()).connected).toBe(false)
  })
})
