import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { image } from "../drive/support.ts"
import { keyed } from "../foundation/admin.ts"
import { api, check, expectError, heading, noChromium, type Portal, startPortal, suite } from "./support.ts"

/**
 * API keys in the portal: minted and shown once, used over HTTP, revoked; the plans' rules. Also the
 * library's paging (this file's service renders nothing, so it has room for 25 uploads).
 */
describe.skipIf(noChromium)(suite("portal: API keys, library paging"), () => {
  let portal: Portal

  beforeAll(async () => {
    portal = await startPortal()
  })
  afterAll(async () => {
    await portal?.close()
  })

  const SCOPES = ["media:read", "media:write", "renders:create", "renders:read"]

  it("mints a key whose secret is shown once and works against /api/v1; revoking it makes the next call 401 api_key_revoked", async () => {
    const ws = await portal.admin.ok("workspace", "create", "--name", "Keys", "--plan", "studio")
    const page = await portal.signIn(ws.id)
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: portal.baseUrl })
    await page.getByRole("navigation", { name: "Portal" }).getByRole("link", { name: "API keys" }).click()
    await page.waitForURL(/\/portal\/keys$/)
    expect(await heading(page)).toBe("API keys")
    await check(page, "keys")

    const form = page.getByRole("form", { name: "Create a key" })
    // default-deny: no scope preselected
    for (const scope of SCOPES) {
      expect(await form.getByRole("checkbox", { name: scope, exact: true }).isChecked(), scope).toBe(false)
    }
    await form.getByLabel("Name", { exact: true }).fill("ci-reader")
    await form.getByRole("checkbox", { name: "renders:read", exact: true }).check()
    await form.getByLabel("Spend cap (renders per 24 hours)").fill("7")
    await form.getByLabel("Reads per minute").fill("120")
    await form.getByRole("button", { name: "Create key" }).click()

    const region = page.getByRole("region", { name: "New key secret" })
    await region.waitFor()
    const secret = (await region.getByTestId("new-key-secret").innerText()).trim()
    expect(secret).toMatch(/^p2v_/)
    expect(await region.innerText()).toContain("Copy this key now. It will not be shown again.")
    await check(page, "keys-new-secret")
    await region.getByRole("button", { name: "Copy key" }).click()
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(secret)

    // the secret works over HTTP, with exactly the scope ticked
    const client = api(portal.baseUrl, secret)
    const usage = await client.get("/api/v1/usage")
    expect(usage.status, await usage.clone().text()).toBe(200)
    expect(await usage.json()).toMatchObject({ object: "usage", aesthetic_quotes: { used: 0, included: 100 } })
    await expectError(await client.get("/api/v1/media"), 403, "insufficient_scope")

    // the stored key has what the form said
    const keys = (await portal.admin.ok("key", "list", ws.id)).data
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({
      name: "ci-reader",
      scopes: ["renders:read"],
      spend_cap_24h: 7,
      reads_per_minute: 120,
      revoked_at: null
    })

    // reload: listed, never the secret
    await page.goto(`${portal.baseUrl}/portal/keys`)
    expect(await page.getByRole("region", { name: "New key secret" }).count()).toBe(0)
    expect(await page.getByTestId("new-key-secret").count()).toBe(0)
    expect(await page.content()).not.toContain(secret)
    const table = page.getByRole("table", { name: "Keys" })
    const row = table.getByRole("row").filter({ hasText: "ci-reader" })
    expect(await row.count()).toBe(1)
    const rowText = await row.innerText()
    expect(rowText).toContain(keys[0].id)
    expect(rowText).toContain("renders:read")
    expect(rowText).toContain("7")

    // revoke: a confirmation, then the row says revoked and the very next API call is refused
    await row.getByRole("button", { name: /Revoke/ }).click()
    const confirm = page.getByRole("button", { name: "Revoke key" })
    await confirm.waitFor()
    await check(page, "keys-revoke-confirm")
    await confirm.click()
    await expect.poll(async () =>
      (await page.getByRole("table", { name: "Keys" }).getByRole("row").filter({ hasText: "ci-reader" }).innerText())
        .toLowerCase()
    ).toContain("revoked")
    expect(
      await page.getByRole("table", { name: "Keys" }).getByRole("row").filter({ hasText: "ci-reader" }).getByRole(
        "button",
        { name: /Revoke/ }
      ).count()
    ).toBe(0)
    await check(page, "keys-revoked")
    await expectError(await client.get("/api/v1/usage"), 401, "api_key_revoked")
    expect((await portal.admin.ok("key", "list", ws.id)).data[0].revoked_at).not.toBeNull()
  })

  it("a key can be minted with the keyboard alone, every stop showing where the focus is", async () => {
    const ws = await portal.admin.ok("workspace", "create", "--name", "Keyboard", "--plan", "studio")
    const page = await portal.signIn(ws.id)
    await page.goto(`${portal.baseUrl}/portal/keys`)
    /** Presses Tab until the focused element matches, checking that each stop draws a focus indicator. */
    const tabTo = async (what: string, matches: () => boolean) => {
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press("Tab")
        const stop = await page.evaluate(() => {
          const e = document.activeElement!
          const style = getComputedStyle(e)
          const label = (e as HTMLInputElement).labels?.[0]?.textContent?.trim() ?? ""
          return {
            tag: e.tagName,
            text: (e.textContent ?? "").trim(),
            label,
            aria: e.getAttribute("aria-label") ?? "",
            type: e.getAttribute("type") ?? "",
            indicated: (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) ||
              style.boxShadow !== "none"
          }
        })
        // (date and time inputs highlight the focused segment themselves)
        if (!/^(datetime-local|date|time)$/.test(stop.type)) {
          expect(stop.indicated, `focus indicator on ${JSON.stringify(stop)}`).toBe(true)
        }
        if (await page.evaluate(matches)) return
      }
      throw new Error(`Tab never reached ${what}`)
    }
    await tabTo("Name", () => (document.activeElement as HTMLInputElement).labels?.[0]?.textContent?.trim() === "Name")
    await page.keyboard.type("typed-key")
    await tabTo(
      "renders:read",
      () => (document.activeElement as HTMLInputElement).labels?.[0]?.textContent?.trim() === "renders:read"
    )
    await page.keyboard.press("Space")
    await tabTo("Create key", () => document.activeElement?.textContent?.trim() === "Create key")
    await page.keyboard.press("Enter")
    const secret = (await page.getByTestId("new-key-secret").innerText()).trim()
    expect(secret).toMatch(/^p2v_/)
    expect((await portal.admin.ok("key", "list", ws.id)).data).toMatchObject([{
      name: "typed-key",
      scopes: ["renders:read"]
    }])
  })

  it("a key needs a name and at least one scope; the error is shown and nothing is minted", async () => {
    const ws = await portal.admin.ok("workspace", "create", "--name", "Keys invalid", "--plan", "studio")
    const page = await portal.signIn(ws.id)
    await page.goto(`${portal.baseUrl}/portal/keys`)
    const form = page.getByRole("form", { name: "Create a key" })
    await form.getByLabel("Name", { exact: true }).fill("no scopes")
    await form.getByRole("button", { name: "Create key" }).click()
    await page.getByRole("alert").first().waitFor()
    expect((await page.getByRole("alert").first().innerText()).trim()).not.toBe("")
    expect(await page.getByTestId("new-key-secret").count()).toBe(0)
    expect(await page.content()).not.toMatch(/\bat [\w.]+ \(|node_modules/)
    await check(page, "keys-invalid")
    expect((await portal.admin.ok("key", "list", ws.id)).data).toEqual([])
  })

  it("lists keys minted elsewhere with their limits, never a secret; the Overview shows each key's 24 h window", async () => {
    const ws = await portal.admin.ok("workspace", "create", "--name", "Keys list", "--plan", "agency")
    const capped = await portal.admin.ok(
      "key",
      "create",
      ws.id,
      "--scopes",
      "renders:create,renders:read",
      "--name",
      "capped",
      "--spend-cap-24h",
      "5",
      "--creates-per-minute",
      "9"
    )
    const open = await portal.admin.ok("key", "create", ws.id, "--scopes", "media:read", "--name", "uncapped")
    const page = await portal.signIn(ws.id)
    const overview = await page.locator("main").innerText()
    expect(overview).toMatch(/agency/i)
    expect(overview).toContain("0 of 5")
    expect(overview).toContain("no cap")
    await page.goto(`${portal.baseUrl}/portal/keys`)
    const html = await page.content()
    expect(html).not.toContain(capped.secret)
    expect(html).not.toContain(open.secret)
    const row = page.getByRole("table", { name: "Keys" }).getByRole("row").filter({ hasText: "capped" }).filter({
      hasNotText: "uncapped"
    })
    const text = await row.innerText()
    expect(text).toContain(capped.id)
    expect(text).toContain("renders:create")
    expect(text).toContain("5")
    expect(text).toContain("9")
  })

  it("a free plan sees why it cannot mint; a starter plan may mint but is told renders cannot be created", async () => {
    const free = await portal.admin.ok("workspace", "create", "--name", "Free", "--plan", "free")
    const page = await portal.signIn(free.id)
    await page.goto(`${portal.baseUrl}/portal/keys`)
    expect(await heading(page)).toBe("API keys")
    const text = await page.locator("main").innerText()
    expect(text).toContain("Your plan (free) cannot hold API keys")
    expect(text).toContain("tier_not_eligible")
    expect(await page.getByRole("form", { name: "Create a key" }).count()).toBe(0)
    await check(page, "keys-free")

    const starter = await portal.admin.ok("workspace", "create", "--name", "Starter", "--plan", "starter")
    const s = await portal.signIn(starter.id)
    await s.goto(`${portal.baseUrl}/portal/keys`)
    expect(await s.locator("main").innerText()).toContain("renders cannot be created")
    const form = s.getByRole("form", { name: "Create a key" })
    await form.getByLabel("Name", { exact: true }).fill("starter-key")
    await form.getByRole("checkbox", { name: "renders:create", exact: true }).check()
    await form.getByRole("checkbox", { name: "media:write", exact: true }).check()
    await form.getByRole("button", { name: "Create key" }).click()
    const secret = (await s.getByTestId("new-key-secret").innerText()).trim()
    await check(s, "keys-starter")
    const client = api(portal.baseUrl, secret)
    const up = await client.upload("rocket.jpg")
    expect(up.status, await up.clone().text()).toBe(201)
    await expectError(
      await client.postJson("/api/v1/renders", { media_id: (await up.json()).id }),
      402,
      "quota_exceeded"
    )
  })

  it("the library pages newest first with a Next page link", async () => {
    const ws = await keyed(portal.admin, "studio")
    const client = api(portal.baseUrl, ws.secret)
    for (let i = 0; i < 25; i++) {
      const form = new FormData()
      form.append("file", new Blob([await image("png", i)]), `p${i}.png`)
      form.append("label", `photo-${String(i).padStart(2, "0")}`)
      const r = await fetch(`${portal.baseUrl}/api/v1/media`, {
        method: "POST",
        headers: { authorization: `Bearer ${ws.secret}` },
        body: form
      })
      expect(r.status, await r.clone().text()).toBe(201)
    }
    expect((await (await client.get("/api/v1/media?limit=100")).json()).data).toHaveLength(25)
    const page = await portal.signIn(ws.workspace.id)
    await page.goto(`${portal.baseUrl}/portal/library`)
    const labels = async () =>
      (await page.getByRole("list", { name: "Photos" }).getByRole("listitem").allInnerTexts()).map((t) =>
        t.match(/photo-\d\d/)?.[0]
      )
    const first = await labels()
    expect(first.length).toBeGreaterThan(0)
    expect(first.length).toBeLessThan(25)
    expect(first[0]).toBe("photo-24")
    await check(page, "library-page-1")
    const seen = [...first]
    while (await page.getByRole("link", { name: "Next page" }).count() > 0) {
      await page.getByRole("link", { name: "Next page" }).click()
      await page.waitForLoadState("load")
      seen.push(...(await labels()))
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `photo-${String(24 - i).padStart(2, "0")}`))
  })
})
