import * as fs from "node:fs"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyed } from "../foundation/admin.ts"
import { api, check, fixture, heading, noChromium, type Portal, startPortal, suite, until } from "./support.ts"

/**
 * What a new user's walk through the portal found (2026-11-25), each pinned by a test that failed
 * before its fix: an import's skipped files said only a code; a New render link to a photo that had
 * left the library quietly preselected another photo, and one to a photo older than the newest 100
 * could not preselect it; the upload list kept every earlier batch (and a stale "choose first"); the
 * library's Render links were all named just "Render"; a connected drive still offered "Connect
 * drive"; the revoked-key notice named only the id; a plan holding no photos let one try to upload
 * before saying so.
 */
describe.skipIf(noChromium)(suite("portal: findings of the new-user walk"), () => {
  let portal: Portal

  beforeAll(async () => {
    portal = await startPortal({ drive: true })
  })
  afterAll(async () => {
    await portal?.close()
  })

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

  it("an import's skipped file says why in a sentence, with its code; a connected drive offers Reconnect", async () => {
    const emulator = portal.emulator!
    const folder = emulator.addFolder({ name: "Findings" })
    emulator.addFile({ name: "photo.jpg", parent: folder, mimeType: "image/jpeg", bytes: await noisy() })
    emulator.addFile({ name: "notes.txt", parent: folder, mimeType: "text/plain", bytes: "not a photo" })
    const ws = await keyed(portal.admin, "studio")
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/drive`)
    await page.getByRole("button", { name: "Connect drive", exact: true }).click()
    await page.waitForURL(/\/portal\/drive(\?.*)?$/, { timeout: 30_000 })
    await page.getByRole("list", { name: "Folders" }).waitFor()
    // connected: the same form now says what it does again
    expect(await page.getByRole("button", { name: "Reconnect drive", exact: true }).count()).toBe(1)
    expect(await page.getByRole("button", { name: "Connect drive", exact: true }).count()).toBe(0)

    await page.getByRole("list", { name: "Folders" }).getByRole("link", { name: "Findings" }).click()
    await page.getByRole("link", { name: "Up" }).waitFor()
    await page.getByRole("button", { name: "Import this folder" }).click()
    await page.waitForURL(/\/portal\/imports\/imp_/)
    const files = page.getByRole("table", { name: "Files" })
    await until(
      async () =>
        (await files.innerText().catch(() => "")).includes("notes.txt") &&
        !(await page.locator("main").innerText()).includes("pending"),
      "the import's items",
      60_000
    )
    const row = await files.getByRole("row").filter({ hasText: "notes.txt" }).innerText()
    expect(row).toContain("Not a photo the service can use (JPEG, PNG, WebP or GIF)")
    expect(row).toContain("(unsupported_media_type)")
    await check(page, "findings-import-reasons")
  })

  it("a New render link to a photo no longer in the library preselects nothing and says so", async () => {
    const ws = await keyed(portal.admin, "studio")
    const client = api(portal.baseUrl, ws.secret)
    const kept = await (await client.upload("chelsea.png", "kept")).json()
    const gone = await (await client.upload("rocket.jpg", "gone")).json()
    await portal.admin.ok("media", "archive", gone.id)
    const page = await portal.signIn(ws.workspace.id)

    await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${gone.id}`)
    expect(await heading(page)).toBe("New render")
    const photo = page.getByLabel("Photo", { exact: true })
    // before: the select fell back to the newest photo, and Create render would have rendered it
    expect(await photo.inputValue()).toBe("")
    expect(await page.getByRole("status").filter({ hasText: "no longer in the library" }).count()).toBe(1)
    await check(page, "findings-render-photo-gone")
    // nothing chosen: the browser keeps the form (required), no render is made
    await page.getByRole("button", { name: "Create render" }).click()
    expect(new URL(page.url()).pathname).toBe("/portal/renders/new")
    expect((await (await client.get("/api/v1/usage")).json()).aesthetic_quotes.used).toBe(0)
    // choosing a photo shows it
    await photo.selectOption(kept.id)
    await until(
      async () => (await page.locator("#r-photo-thumb").getAttribute("src")) === `/portal/media/${kept.id}/preview`,
      "the chosen photo's preview"
    )

    // a photo still in the library is preselected as before, with no notice
    await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${kept.id}`)
    expect(await photo.inputValue()).toBe(kept.id)
    expect(await page.getByRole("status").filter({ hasText: "no longer in the library" }).count()).toBe(0)
  })

  it("a New render link to a photo older than the newest 100 preselects that photo, not the newest", async () => {
    const ws = await keyed(portal.admin, "studio", ["--uploads-per-minute", "1000"])
    const client = api(portal.baseUrl, ws.secret)
    const upload = async (label: string, i: number) => {
      const png = await sharp({
        create: { width: 64 + i, height: 64, channels: 3, background: { r: i % 256, g: 80, b: 160 } }
      }).png().toBuffer()
      const form = new FormData()
      form.append("file", new Blob([new Uint8Array(png)], { type: "image/png" }), `${label}.png`)
      form.append("label", label)
      const r = await fetch(`${portal.baseUrl}/api/v1/media`, {
        method: "POST",
        headers: { authorization: `Bearer ${ws.secret}` },
        body: form
      })
      expect(r.status, await r.clone().text()).toBe(201)
      return (await r.json()).id as string
    }
    const oldest = await upload("The oldest", 0)
    for (let i = 1; i <= 100; i++) await upload(`Newer ${i}`, i)
    expect((await (await client.get("/api/v1/media?limit=100")).json()).data.map((m: { readonly id: string }) => m.id))
      .not.toContain(
        oldest
      )

    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/renders/new?media_id=${oldest}`)
    // before: the newest 100 only, and the select showed "Newer 100"
    expect(await page.getByLabel("Photo", { exact: true }).inputValue()).toBe(oldest)
    expect(await page.getByRole("status").filter({ hasText: "no longer in the library" }).count()).toBe(0)
  })

  it("the library's Render links name their photo; a new upload batch replaces the last batch's outcomes", async () => {
    const ws = await keyed(portal.admin, "studio")
    const client = api(portal.baseUrl, ws.secret)
    const cat = await (await client.upload("chelsea.png", "Cat")).json()
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const grid = page.getByRole("list", { name: "Photos" })
    const render = grid.getByRole("link", { name: "Render Cat", exact: true })
    expect(await render.count()).toBe(1)
    expect(await render.getAttribute("href")).toBe(`/portal/renders/new?media_id=${cat.id}`)

    // Upload with nothing chosen says so; the next batch's outcome replaces that message
    const uploads = page.getByRole("list", { name: "Uploads" })
    await page.getByRole("button", { name: "Upload" }).click()
    await uploads.getByRole("alert").filter({ hasText: "Choose one or more photos first." }).waitFor()
    await page.locator("#photos").setInputFiles(fixture("rocket.jpg"))
    await page.getByRole("button", { name: "Upload" }).click()
    await uploads.getByText("Uploaded rocket.jpg").waitFor({ timeout: 60_000 })
    expect(await uploads.getByText("Choose one or more photos first.").count()).toBe(0)
    expect(await uploads.getByRole("listitem").count()).toBe(1)
    await check(page, "findings-upload-batch")
  })

  it("a plan that holds no photos says so on the Library before an upload is refused", async () => {
    const ws = await portal.admin.ok("workspace", "create", "--name", "Free", "--plan", "free")
    const page = await portal.signIn(ws.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const note = page.getByRole("note").filter({ hasText: "holds no photos" })
    expect(await note.innerText()).toContain(
      "This workspace's plan (free) holds no photos: an upload is refused (quota_exceeded)."
    )
    expect(await page.locator("main").innerText()).not.toContain("Upload some above")
    await check(page, "findings-library-free")
  })

  it("the revoked-key notice names the key, and its confirmation quotes the name", async () => {
    const ws = await keyed(portal.admin, "studio", ["--name", "Build server"])
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/keys`)
    await page.getByRole("button", { name: "Revoke Build server" }).click()
    await page.waitForURL(/\/revoke$/)
    expect(await heading(page)).toBe("Revoke key “Build server”?")
    await page.getByRole("button", { name: "Revoke key" }).click()
    await page.waitForURL(/\/portal\/keys\?revoked=/)
    const notice = await page.getByRole("status").filter({ hasText: "was revoked" }).innerText()
    expect(notice).toContain(`Key “Build server” (${ws.key.id}) was revoked.`)
  })
  it("user text with bidi controls is shown inertly: isolated runs, and none in options or attributes (issue 24, item 6)", async () => {
    const rlo = "\u202E"
    const emulator = portal.emulator!
    const folder = emulator.addFolder({ name: `Holiday ${rlo}` })
    emulator.addFile({ name: `beach${rlo}.jpg`, parent: folder, mimeType: "image/jpeg", bytes: await noisy() })
    const ws = await portal.admin.ok("workspace", "create", "--name", `Studio${rlo}`, "--plan", "studio")
    const key = await portal.admin.ok(
      "key",
      "create",
      ws.id,
      "--scopes",
      "media:read,media:write,renders:create,renders:read",
      "--name",
      `deploy${rlo}`
    )
    const form = new FormData()
    form.append("file", new Blob([fs.readFileSync(fixture("rocket.jpg"))]), "rocket.jpg")
    form.append("label", `launch${rlo}`)
    form.append("tags", `night${rlo}`)
    const up = await fetch(`${portal.baseUrl}/api/v1/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}` },
      body: form
    })
    expect(up.status).toBe(201)
    const media = await up.json()
    const created = await api(portal.baseUrl, key.secret).postJson("/api/v1/renders", {
      media_id: media.id,
      quote: `Go ${rlo}up`,
      metadata: { [`team${rlo}`]: `blue${rlo}` }
    })
    expect(created.status).toBe(202)
    const render = await created.json()

    const page = await portal.signIn(ws.id)
    await page.goto(`${portal.baseUrl}/portal/drive`)
    await page.getByRole("button", { name: "Connect drive", exact: true }).click()
    await page.waitForURL(/\/portal\/drive(\?.*)?$/, { timeout: 30_000 })
    await page.getByRole("list", { name: "Folders" }).getByRole("link", { name: "Holiday" }).click()
    await page.getByRole("link", { name: "Up" }).waitFor()
    const folderPage = page.url()
    await page.getByRole("button", { name: "Import this folder" }).click()
    await page.waitForURL(/\/portal\/imports\/imp_/)
    await until(async () => (await page.locator("main").innerText()).includes("completed"), "the import to end", 60_000)
    const importPage = page.url()

    /** Every text node holding a bidi control sits alone in an isolating element; no option or attribute holds one. */
    const leaks = () =>
      page.evaluate(() => {
        const controls = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/
        const found: Array<string> = []
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
        for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
          if (!controls.test(node.textContent ?? "")) continue
          const parent = node.parentElement!
          const isolating = ["isolate", "isolate-override", "plaintext"].includes(getComputedStyle(parent).unicodeBidi)
          if (parent.tagName === "OPTION" || !isolating || parent.textContent !== node.textContent) {
            found.push(`<${parent.tagName.toLowerCase()}> ${JSON.stringify(parent.textContent)}`)
          }
        }
        // in an attribute, the only controls allowed are a first-strong isolate around text that has none
        const wrapped = /\u2068[^\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*\u2069/g
        for (const element of document.querySelectorAll("*")) {
          for (const attribute of element.attributes) {
            if (controls.test(attribute.value.replace(wrapped, ""))) {
              found.push(`${element.tagName.toLowerCase()}[${attribute.name}] ${JSON.stringify(attribute.value)}`)
            }
          }
        }
        if (controls.test(document.title)) found.push(`title ${JSON.stringify(document.title)}`)
        return found
      })
    for (
      const [path, name] of [
        ["/portal", "overview"],
        ["/portal/keys", "keys"],
        ["/portal/library", "library"],
        ["/portal/renders", "renders"],
        [`/portal/renders/new?media_id=${media.id}`, "render-new"],
        [`/portal/renders/${render.id}`, "render"],
        [`/portal/media/${media.id}/archive`, "archive"],
        [`/portal/keys/${key.id}/revoke`, "revoke"],
        [folderPage, "drive-folder"],
        [importPage, "import"]
      ] as const
    ) {
      await page.goto(path.startsWith("http") ? path : `${portal.baseUrl}${path}`)
      expect(await leaks(), `${name}: user text with bidi controls not isolated`).toEqual([])
      await check(page, `bidi-${name}`)
    }
    // the text is still there, only isolated: the label and the file's name as sent
    await page.goto(`${portal.baseUrl}/portal/library`)
    expect(await page.locator("bdi").allTextContents()).toContain(`launch${rlo}`)
    await page.goto(importPage)
    expect(await page.locator("bdi").allTextContents()).toContain(`beach${rlo}.jpg`)
  })
})
