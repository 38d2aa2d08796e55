import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyed } from "../foundation/admin.ts"
import { api, check, fixture, noChromium, type Portal, startPortal, suite } from "./support.ts"

/**
 * The Library's upload of photos named in any script, as Chromium sends them (the name as UTF-8 in
 * the part's quoted `filename`): each is accepted, the service's own answer names it exactly, and
 * the photo is labelled with it.
 */
describe.skipIf(noChromium)(suite("portal: file names in any script"), () => {
  let portal: Portal

  beforeAll(async () => {
    portal = await startPortal()
  })
  afterAll(async () => {
    await portal?.close()
  })

  it("the Library uploads photos named 日本.jpg, 東京タワー.jpg, €.jpg, 한.jpg and 😀.jpg; the service reads each name exactly", async () => {
    const ws = await keyed(portal.admin, "studio", ["--uploads-per-minute", "1000"])
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const names = ["日本.jpg", "東京タワー.jpg", "€.jpg", "한.jpg", "😀.jpg"]
    // the service's line for each upload, as the page received it
    const answers: Array<Promise<string>> = []
    page.on("response", (r) => {
      if (new URL(r.url()).pathname === "/portal/library/upload") answers.push(r.text())
    })
    const buffer = fs.readFileSync(fixture("rocket.jpg"))
    const input = page.locator("input[type=\"file\"]").and(page.getByLabel("Photos", { exact: true }))
    await input.setInputFiles(names.map((name) => ({ name, mimeType: "image/jpeg", buffer })))
    await page.getByRole("button", { name: "Upload" }).click()
    const uploads = page.getByRole("list", { name: "Uploads" })
    for (const name of names) await uploads.getByText(`Uploaded ${name}`).waitFor({ timeout: 60_000 })
    expect(await uploads.getByRole("alert").count()).toBe(0)
    expect((await Promise.all(answers)).map((a) => a.trim())).toEqual(names.map((n) => `Uploaded ${n}`))
    const listed = await (await api(portal.baseUrl, ws.secret).get("/api/v1/media")).json()
    expect(listed.data.map((m: { readonly label: string }) => m.label).sort()).toEqual([...names].sort())
    await check(page, "library-upload-names")
  })
})
