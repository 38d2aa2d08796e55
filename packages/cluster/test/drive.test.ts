import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import {
  Cause,
  ConfigProvider,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  Random,
  Redacted,
  Result,
  Schedule
} from "effect"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type DriveEmulator, startDriveEmulator } from "../../../test/support/drive-emulator.ts"
import { DriveApi, type DriveAuth, type DriveSession } from "../src/drive/DriveApi.ts"
import * as DriveApiModule from "../src/drive/DriveApi.ts"
import * as DriveConfig from "../src/drive/DriveConfig.ts"
import { DriveOAuth } from "../src/drive/DriveOAuth.ts"
import * as DriveOAuthModule from "../src/drive/DriveOAuth.ts"
import { backoff, DriveRetryPolicy, type DriveRetryPolicyShape } from "../src/drive/Retry.ts"
import type { Tokens } from "../src/drive/Tokens.ts"

const MiB = 1024 * 1024
const MAX_BYTES = 15 * MiB
const PUBLIC_BASE_URL = "http://localhost:8080"

const FastRetry: DriveRetryPolicyShape = {
  maxAttempts: 4,
  baseDelay: Duration.millis(10),
  maxDelay: Duration.millis(40),
  requestTimeout: Duration.seconds(5),
  downloadTimeout: Duration.seconds(20)
}

let emulator: DriveEmulator
let workDir: string

beforeAll(async () => {
  emulator = await startDriveEmulator({ redirectUris: [`${PUBLIC_BASE_URL}/oauth/cloud_drive/callback`] })
  workDir = mkdtempSync(join(tmpdir(), "drive-test-"))
})

afterAll(async () => {
  await emulator.close()
  rmSync(workDir, { recursive: true, force: true })
})

beforeEach(() => {
  emulator.resetFaults()
})

const configFor = (e: DriveEmulator) =>
  DriveConfig.make({
    clientId: e.clientId,
    clientSecret: e.clientSecret,
    authorizeUrl: e.authorizeUrl,
    tokenUrl: e.tokenUrl,
    revokeUrl: e.revokeUrl,
    driveApiUrl: e.driveApiUrl,
    publicBaseUrl: PUBLIC_BASE_URL
  })

const driveLayerFor = (e: () => DriveEmulator) =>
  Layer.provideMerge(
    DriveApiModule.layer,
    Layer.provideMerge(
      DriveOAuthModule.layer,
      Layer.mergeAll(
        Layer.suspend(() => DriveConfig.layer(configFor(e()))),
        NodeFileSystem.layer,
        Layer.succeed(DriveRetryPolicy, FastRetry)
      )
    )
  )

const DriveLive = driveLayerFor(() => emulator)

const run = <A, E>(effect: Effect.Effect<A, E, DriveApi | DriveOAuth | DriveConfig.DriveConfig>) =>
  Effect.provide(effect, DriveLive)

/** The consent round trip a browser would make, then the code exchange. */
const connect = Effect.gen(function*() {
  const oauth = yield* DriveOAuth
  const pkce = yield* oauth.newPkce
  const url = yield* oauth.authorizationUrl({ state: "state-1", codeChallenge: pkce.challenge })
  const redirect = yield* Effect.promise(() => emulator.consent(url))
  expect(redirect.state).toBe("state-1")
  return yield* oauth.exchangeCode({ code: redirect.code, codeVerifier: pkce.verifier })
})

const sessionWith = (tokens: Tokens, onRefresh?: DriveAuth["onRefresh"]) =>
  Effect.flatMap(DriveApi, (api) => api.session({ tokens, onRefresh }))

const connectedSession = Effect.gen(function*() {
  const tokens = yield* connect
  const refreshed: Array<Tokens> = []
  const session = yield* sessionWith(tokens, (fresh) => Effect.sync(() => refreshed.push(fresh)))
  return { session, tokens, refreshed }
})

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/** Config read from these variables only (an empty value reads as unset, as an empty env var does). */
const withEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("DriveConfig", () => {
  it.effect("reads the environment with the documented defaults", () =>
    Effect.gen(function*() {
      const config = yield* DriveConfig.config
      expect(Option.isNone(config.client)).toBe(true)
      expect(config.authorizeUrl).toBe("https://accounts.google.com/o/oauth2/v2/auth")
      expect(config.tokenUrl).toBe("https://oauth2.googleapis.com/token")
      expect(config.revokeUrl).toBe("https://oauth2.googleapis.com/revoke")
      expect(config.driveApiUrl).toBe("https://www.googleapis.com/")
      expect(config.redirectUri).toBe("http://localhost:9090/oauth/cloud_drive/callback")
      expect(config.scope).toBe("https://www.googleapis.com/auth/drive.readonly")
    }).pipe(withEnv({ PORT: "9090", GOOGLE_CLIENT_ID: "" })))

  it.effect("takes overrides; the client exists only with both id and secret", () =>
    Effect.gen(function*() {
      const config = yield* DriveConfig.config
      const client = Option.getOrThrow(config.client)
      expect(client.id).toBe("id-1")
      expect(String(client.secret)).not.toContain("s3cret")
      expect(Redacted.value(client.secret)).toBe("s3cret")
      expect(config.driveApiUrl).toBe("http://127.0.0.1:1234/prefix/")
      expect(config.redirectUri).toBe("https://p2v.example/oauth/cloud_drive/callback")
    }).pipe(withEnv({
      GOOGLE_CLIENT_ID: "id-1",
      GOOGLE_CLIENT_SECRET: "s3cret",
      GOOGLE_DRIVE_API_URL: "http://127.0.0.1:1234/prefix",
      PUBLIC_BASE_URL: "https://p2v.example/"
    })))

  it.effect("without a client, authorization fails with DriveNotConfigured", () =>
    Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      expect(oauth.isConfigured).toBe(false)
      const error = failureOf(yield* Effect.exit(oauth.authorizationUrl({ state: "s", codeChallenge: "c" })))
      expect(error._tag).toBe("DriveNotConfigured")
    }).pipe(Effect.provide(DriveOAuthModule.layer.pipe(
      Layer.provide(DriveConfig.layer(DriveConfig.make({ publicBaseUrl: PUBLIC_BASE_URL })))
    ))))
})

describe("retry schedule", () => {
  it.effect("exponential backoff with full jitter stays under the doubling cap and maxDelay", () =>
    Effect.gen(function*() {
      const policy = { ...FastRetry, maxAttempts: 8, baseDelay: Duration.millis(100), maxDelay: Duration.millis(1000) }
      // the schedule's steps, driven by hand (at time 0: the delays depend on the attempt only)
      const step = yield* Schedule.toStep(backoff(policy))
      const delays: Array<Duration.Duration> = []
      for (let i = 0; i < 20; i++) {
        const next = yield* Effect.result(step(0, 0))
        if (Result.isFailure(next)) break // done: the retries are spent
        delays.push(next.success[1])
      }
      const millis = delays.slice(0, policy.maxAttempts - 1).map(Duration.toMillis)
      expect(millis).toHaveLength(7)
      millis.forEach((ms, n) => {
        expect(ms).toBeGreaterThanOrEqual(0)
        expect(ms).toBeLessThan(Math.min(1000, 100 * 2 ** n))
      })
      expect(new Set(millis).size).toBeGreaterThan(1)
    }).pipe(Random.withSeed("seed")))
})

describe("OAuth against the emulator", () => {
  it.live("builds the authorization URL of contract §7", () =>
    run(Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      const pkce = yield* oauth.newPkce
      expect(pkce.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const url = new URL(yield* oauth.authorizationUrl({ state: "st", codeChallenge: pkce.challenge }))
      expect(url.origin + url.pathname).toBe(emulator.authorizeUrl)
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: "code",
        client_id: emulator.clientId,
        redirect_uri: `${PUBLIC_BASE_URL}/oauth/cloud_drive/callback`,
        scope: "https://www.googleapis.com/auth/drive.readonly",
        access_type: "offline",
        prompt: "consent",
        state: "st",
        code_challenge: pkce.challenge,
        code_challenge_method: "S256"
      })
    })))

  it.live("exchanges a code with PKCE, refreshes, and refuses a wrong verifier or a reused code", () =>
    run(Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      const tokens = yield* connect
      expect(tokens.scopes).toEqual(["https://www.googleapis.com/auth/drive.readonly"])
      expect(tokens.expiresAt).toBeGreaterThan(Date.now() + 3_000_000)
      expect(emulator.issuedTokens().accessTokens).toContain(Redacted.value(tokens.accessToken))

      const refreshed = yield* oauth.refresh(tokens.refreshToken)
      expect(Redacted.value(refreshed.accessToken)).not.toBe(Redacted.value(tokens.accessToken))
      expect(Redacted.value(refreshed.refreshToken)).toBe(Redacted.value(tokens.refreshToken))

      const pkce = yield* oauth.newPkce
      const other = yield* oauth.newPkce
      const url = yield* oauth.authorizationUrl({ state: "s2", codeChallenge: pkce.challenge })
      const { code } = yield* Effect.promise(() => emulator.consent(url))
      const wrong = failureOf(yield* Effect.exit(oauth.exchangeCode({ code, codeVerifier: other.verifier })))
      expect(wrong._tag).toBe("InvalidGrant")
      // The right verifier still works once, then the code is spent.
      yield* oauth.exchangeCode({ code, codeVerifier: pkce.verifier })
      const reused = failureOf(yield* Effect.exit(oauth.exchangeCode({ code, codeVerifier: pkce.verifier })))
      expect(reused._tag).toBe("InvalidGrant")
    })))

  it.live("the emulator's consent endpoint refuses malformed requests", () =>
    run(Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      const pkce = yield* oauth.newPkce
      const good = new URL(yield* oauth.authorizationUrl({ state: "v", codeChallenge: pkce.challenge }))
      const statusWith = (changes: Record<string, string | null>) => {
        const url = new URL(good)
        for (const [k, v] of Object.entries(changes)) {
          if (v === null) url.searchParams.delete(k)
          else url.searchParams.set(k, v)
        }
        return Effect.promise(() => fetch(url, { redirect: "manual" }).then((r) => r.status))
      }
      expect(yield* statusWith({})).toBe(302)
      expect(yield* statusWith({ client_id: "someone-else" })).toBe(401)
      expect(yield* statusWith({ redirect_uri: "http://evil.example/cb" })).toBe(400)
      expect(yield* statusWith({ response_type: "token" })).toBe(400)
      expect(yield* statusWith({ code_challenge_method: "plain" })).toBe(400)
      expect(yield* statusWith({ code_challenge: null })).toBe(400)
      expect(yield* statusWith({ scope: "https://www.googleapis.com/auth/nope" })).toBe(400)
    })))

  it.live("the consent can also be an HTML page, or a denial", () =>
    run(
      Effect.gen(function*() {
        const oauth = yield* DriveOAuth
        const pkce = yield* oauth.newPkce
        const url = yield* oauth.authorizationUrl({ state: "html", codeChallenge: pkce.challenge })
        emulator.setConsent("html")
        const page = yield* Effect.promise(() => fetch(url).then((r) => r.text()))
        expect(page).toContain("Allow")
        const viaPage = yield* Effect.promise(() => emulator.consent(url))
        yield* oauth.exchangeCode({ code: viaPage.code, codeVerifier: pkce.verifier })
        emulator.setConsent("deny")
        const denied = yield* Effect.promise(() => emulator.consent(url))
        expect(denied).toEqual({ error: "access_denied", state: "html" })
      }).pipe(Effect.ensuring(Effect.sync(() => emulator.setConsent("redirect"))))
    ))

  it.live("revoke ends the grant: refresh is invalid_grant, drive calls end in InvalidGrant", () =>
    run(Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      const { session, tokens } = yield* connectedSession
      yield* session.listFolders({ parent: "root" })
      yield* oauth.revoke(tokens.refreshToken)
      // Revoking again (already revoked) is not an error.
      yield* oauth.revoke(tokens.accessToken)
      expect(failureOf(yield* Effect.exit(oauth.refresh(tokens.refreshToken)))._tag).toBe("InvalidGrant")
      // The access token died with the grant: 401, then the refresh answers invalid_grant.
      expect(failureOf(yield* Effect.exit(session.listFolders({ parent: "root" })))._tag).toBe("InvalidGrant")
    })))

  it.live("revokeAll on the provider side surfaces as InvalidGrant too", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      emulator.revokeAll()
      expect(failureOf(yield* Effect.exit(session.getFolder("root")))._tag).toBe("InvalidGrant")
    })))

  it.live("token endpoint 503s are retried", () =>
    run(Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      const tokens = yield* connect
      emulator.failNext({ status: 503, count: 2, path: "/token" })
      yield* oauth.refresh(tokens.refreshToken)
      expect(emulator.requestCount({ path: "/token" })).toBe(4)
    })))

  it.live("a rotated refresh token is kept", () =>
    Effect.gen(function*() {
      const rotating = yield* Effect.acquireRelease(
        Effect.promise(() => startDriveEmulator({ rotateRefreshTokens: true })),
        (e) => Effect.promise(() => e.close())
      )
      const oauth = yield* DriveOAuthModule.make.pipe(
        Effect.provideService(DriveConfig.DriveConfig, configFor(rotating))
      )
      const pkce = yield* oauth.newPkce
      const url = yield* oauth.authorizationUrl({ state: "r", codeChallenge: pkce.challenge })
      const { code } = yield* Effect.promise(() => rotating.consent(url))
      const tokens = yield* oauth.exchangeCode({ code, codeVerifier: pkce.verifier })
      const refreshed = yield* oauth.refresh(tokens.refreshToken)
      expect(Redacted.value(refreshed.refreshToken)).not.toBe(Redacted.value(tokens.refreshToken))
      yield* oauth.refresh(refreshed.refreshToken)
    }).pipe(Effect.scoped))
})

describe("folders", () => {
  it.live("lists sub-folders by name across pages, including an empty page with a token", () =>
    run(Effect.gen(function*() {
      const parent = emulator.addFolder({ name: "Paging" })
      const names = ["delta", "Alpha", "charlie", "echo", "bravo", "golf", "foxtrot"]
      for (const name of names) emulator.addFolder({ name, parent })
      emulator.addFolder({ name: "zz-trashed", parent, trashed: true })
      emulator.addFile({ name: "not-a-folder.jpg", parent, mimeType: "image/jpeg", bytes: "x" })
      emulator.setPagePlan([2, 0, 3, 1])

      const { session } = yield* connectedSession
      const pages: Array<DriveApiModule.FolderPage> = []
      let pageToken: string | null = null
      do {
        const page: DriveApiModule.FolderPage = yield* session.listFolders({ parent, pageToken, pageSize: 2 })
        pages.push(page)
        pageToken = page.nextPageToken
      } while (pageToken !== null)

      expect(pages.map((p) => p.folders.length)).toEqual([2, 0, 3, 1, 1])
      expect(pages.flatMap((p) => p.folders.map((f) => f.name))).toEqual(
        ["Alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
      )
      const list = emulator.requests.filter((r) => r.path === "/drive/v3/files")
      expect(list[0].query).toMatchObject({
        q: `'${parent}' in parents and mimeType = 'application/vnd.google-apps.folder' and trashed = false`,
        orderBy: "name",
        supportsAllDrives: "true",
        includeItemsFromAllDrives: "true"
      })
    })))

  it.live("root is the default parent and shared-drive folders are reachable", () =>
    run(Effect.gen(function*() {
      const drive = emulator.addSharedDrive("Team")
      emulator.addFolder({ name: "Team photos", parent: drive })
      const { session } = yield* connectedSession
      const root = yield* session.getFolder("root")
      expect(root.id).toBe(emulator.rootId)
      const page = yield* session.listFolders({ parent: drive })
      expect(page).toEqual({ folders: [{ id: expect.any(String), name: "Team photos" }], nextPageToken: null })
      const sub = yield* session.getFolder(page.folders[0].id)
      expect(sub.name).toBe("Team photos")
    })))

  it.live("an unknown, trashed or non-folder id is UnknownFolder", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      const trashed = emulator.addFolder({ name: "old", trashed: true })
      const file = emulator.addFile({ name: "a.png", mimeType: "image/png", bytes: "png" })
      for (const id of ["does-not-exist", trashed, file]) {
        const viaGet = failureOf(yield* Effect.exit(session.getFolder(id)))
        expect(viaGet).toMatchObject({ _tag: "UnknownFolder", folderId: id })
        expect(failureOf(yield* Effect.exit(session.listFolders({ parent: id })))._tag).toBe("UnknownFolder")
        expect(failureOf(yield* Effect.exit(session.listChildren(id)))._tag).toBe("UnknownFolder")
      }
    })))

  it.live("listChildren gathers every page, short and empty ones included", () =>
    run(Effect.gen(function*() {
      const folder = emulator.addFolder({ name: "Import me" })
      for (let i = 0; i < 12; i++) {
        emulator.addFile({
          name: `img-${String(i).padStart(2, "0")}.jpg`,
          parent: folder,
          mimeType: "image/jpeg",
          bytes: "x".repeat(i + 1)
        })
      }
      emulator.addFile({ name: "trashed.jpg", parent: folder, mimeType: "image/jpeg", bytes: "x", trashed: true })
      emulator.addFile({ name: "notes", parent: folder, mimeType: "application/vnd.google-apps.document" })
      emulator.addFolder({ name: "sub", parent: folder })
      emulator.setPagePlan([3, 0, 1, 0, 0, 2])

      const { session } = yield* connectedSession
      const children = yield* session.listChildren(folder)
      expect(children).toHaveLength(14)
      expect(children.map((c) => c.name)).toEqual([
        ...Array.from({ length: 12 }, (_, i) => `img-${String(i).padStart(2, "0")}.jpg`),
        "notes",
        "sub"
      ])
      expect(children[0]).toEqual({ id: expect.any(String), name: "img-00.jpg", mimeType: "image/jpeg", size: 1 })
      expect(children.find((c) => c.name === "notes")?.size).toBeNull()
      expect(children.find((c) => c.name === "sub")?.mimeType).toBe("application/vnd.google-apps.folder")
      // 6 planned pages, then the rest in one page.
      expect(emulator.requestCount({ path: /^\/drive\/v3\/files$/ })).toBe(7)
    })))
})

describe("downloads", () => {
  const target = (name: string) => join(workDir, name)

  it.live("exactly 15 MiB is accepted; one byte more is FileTooLarge before the body is read", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      const exact = emulator.addFile({ name: "exact.jpg", mimeType: "image/jpeg", size: MAX_BYTES })
      const over = emulator.addFile({ name: "over.jpg", mimeType: "image/jpeg", size: MAX_BYTES + 1 })

      const ok = yield* session.download(exact, { maxBytes: MAX_BYTES, toPath: target("exact.jpg") })
      expect(ok.bytes).toBe(MAX_BYTES)
      expect(statSync(target("exact.jpg")).size).toBe(MAX_BYTES)

      const error = failureOf(
        yield* Effect.exit(session.download(over, { maxBytes: MAX_BYTES, toPath: target("over.jpg") }))
      )
      expect(error).toMatchObject({ _tag: "FileTooLarge", fileId: over, maxBytes: MAX_BYTES })
      expect(existsSync(target("over.jpg"))).toBe(false)
      yield* Effect.sleep("100 millis")
      const record = emulator.downloads.find((d) => d.fileId === over)!
      expect(record.completed).toBe(false)
      expect(record.closedEarly).toBe(true)
      // Not retried: the size will not change.
      expect(emulator.downloads.filter((d) => d.fileId === over)).toHaveLength(1)
    })))

  it.live("without Content-Length the stream is cut as soon as it passes maxBytes", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      const exact = emulator.addFile({ name: "exact-chunked.jpg", mimeType: "image/jpeg", size: MAX_BYTES })
      const huge = emulator.addFile({ name: "huge.jpg", mimeType: "image/jpeg", size: 64 * MiB })
      emulator.omitContentLength(true)
      const ok = yield* session.download(exact, { maxBytes: MAX_BYTES, toPath: target("exact-chunked.jpg") })
      expect(ok.bytes).toBe(MAX_BYTES)
      const error = failureOf(
        yield* Effect.exit(session.download(huge, { maxBytes: MAX_BYTES, toPath: target("huge.jpg") }))
      )
      expect(error._tag).toBe("FileTooLarge")
      yield* Effect.sleep("100 millis")
      const record = emulator.downloads.find((d) => d.fileId === huge)!
      expect(record.closedEarly).toBe(true)
      expect(record.sentBytes).toBeLessThan(40 * MiB)
      expect(existsSync(target("huge.jpg"))).toBe(false)
    })))

  it.live("a truncated body is retried, and fails as ProviderUnavailable once attempts are spent", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      const bytes = new Uint8Array(300_000).map((_, i) => i % 251)
      const file = emulator.addFile({ name: "photo.png", mimeType: "image/png", bytes })

      emulator.truncateNextDownloads({ fileId: file, count: 2 })
      const ok = yield* session.download(file, { maxBytes: MAX_BYTES, toPath: target("photo.png") })
      expect(ok.bytes).toBe(bytes.length)
      expect(emulator.downloads.map((d) => d.truncated)).toEqual([true, true, false])

      emulator.truncateNextDownloads({ fileId: file, count: 10, sendBytes: 1000 })
      const error = failureOf(
        yield* Effect.exit(session.download(file, { maxBytes: MAX_BYTES, toPath: target("photo2.png") }))
      )
      expect(error).toMatchObject({
        _tag: "ProviderUnavailable",
        reason: "truncated_body",
        attempts: FastRetry.maxAttempts
      })
      expect(existsSync(target("photo2.png"))).toBe(false)
    })))

  it.live("a vanished file is UnknownFile; a Google document is not downloadable", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      const doc = emulator.addFile({ name: "doc", mimeType: "application/vnd.google-apps.document" })
      const missing = failureOf(yield* Effect.exit(session.download("gone", { maxBytes: 10, toPath: target("gone") })))
      expect(missing).toMatchObject({ _tag: "UnknownFile", fileId: "gone" })
      const native = failureOf(yield* Effect.exit(session.download(doc, { maxBytes: 10, toPath: target("doc") })))
      expect(native).toMatchObject({ _tag: "ProviderRejected", status: 403, code: "fileNotDownloadable" })
    })))
})

describe("rate limits, server errors and refresh", () => {
  it.live("429, 403 rateLimitExceeded and 503 are retried with backoff and the call succeeds", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      emulator.resetFaults()
      emulator.failNext({ status: 429, path: "/drive/v3/files" })
      emulator.failNext({ status: 403, reason: "rateLimitExceeded", path: "/drive/v3/files" })
      emulator.failNext({ status: 503, path: "/drive/v3/files" })
      const page = yield* session.listFolders({ parent: "root" })
      expect(page.folders.length).toBeGreaterThan(0)
      expect(emulator.requests.map((r) => r.status)).toEqual([429, 403, 503, 200])

      emulator.resetFaults()
      emulator.failNext({ status: 403, reason: "userRateLimitExceeded", count: 2 })
      const file = emulator.addFile({ name: "r.jpg", mimeType: "image/jpeg", bytes: "abc" })
      const ok = yield* session.download(file, { maxBytes: 10, toPath: join(workDir, "r.jpg") })
      expect(ok.bytes).toBe(3)
    })))

  it.live("persistent rate limiting ends in ProviderUnavailable after maxAttempts", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      emulator.resetFaults()
      emulator.failNext({ status: 429, count: 100 })
      const error = failureOf(yield* Effect.exit(session.getFolder("root")))
      expect(error).toMatchObject({ _tag: "ProviderUnavailable", reason: "rate_limited", status: 429, attempts: 4 })
      expect(emulator.requestCount()).toBe(FastRetry.maxAttempts)
    })))

  it.live("other 403s are final", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      emulator.resetFaults()
      emulator.failNext({ status: 403, reason: "insufficientFilePermissions", count: 5 })
      const error = failureOf(yield* Effect.exit(session.getFolder("root")))
      expect(error).toMatchObject({ _tag: "ProviderRejected", status: 403, code: "insufficientFilePermissions" })
      expect(emulator.requestCount()).toBe(1)
    })))

  it.live("a 401 refreshes once (shared by concurrent calls), persists the tokens and retries", () =>
    run(Effect.gen(function*() {
      const { refreshed, session, tokens } = yield* connectedSession
      emulator.expireAccessTokens()
      emulator.resetFaults()
      const results = yield* Effect.all(
        [session.getFolder("root"), session.listFolders({ parent: "root" }), session.getFolder("root")],
        { concurrency: "unbounded" }
      )
      expect(results[0].id).toBe(emulator.rootId)
      expect(emulator.requestCount({ path: "/token" })).toBe(1)
      expect(refreshed).toHaveLength(1)
      const current = yield* session.tokens
      expect(Redacted.value(current.accessToken)).toBe(Redacted.value(refreshed[0].accessToken))
      expect(Redacted.value(current.accessToken)).not.toBe(Redacted.value(tokens.accessToken))
    })))

  it.live("a token about to expire is refreshed before the call", () =>
    run(Effect.gen(function*() {
      const tokens = yield* connect
      const refreshed: Array<Tokens> = []
      const session = yield* sessionWith(
        { ...tokens, expiresAt: Date.now() + 1000 },
        (fresh) => Effect.sync(() => refreshed.push(fresh))
      )
      emulator.resetFaults()
      yield* session.getFolder("root")
      expect(refreshed).toHaveLength(1)
      expect(emulator.requests.map((r) => `${r.path} ${r.status}`)).toEqual([
        "/token 200",
        `/drive/v3/files/root 200`
      ])
    })))

  it.live("without a refresh callback a 401 is Unauthorized", () =>
    run(Effect.gen(function*() {
      const tokens = yield* connect
      const session = yield* sessionWith(tokens)
      emulator.expireAccessTokens()
      expect(failureOf(yield* Effect.exit(session.getFolder("root")))._tag).toBe("Unauthorized")
    })))

  it.live("a slow download is interrupted by the download timeout and retried", () =>
    run(Effect.gen(function*() {
      const { session } = yield* connectedSession
      const file = emulator.addFile({ name: "slow.jpg", mimeType: "image/jpeg", size: 4096 })
      emulator.slowDownloads({ chunkBytes: 1024, delayMs: 200 })
      const fiber = yield* Effect.forkChild(
        session.download(file, { maxBytes: MAX_BYTES, toPath: join(workDir, "slow.jpg") }).pipe(
          Effect.provideService(DriveRetryPolicy, {
            ...FastRetry,
            maxAttempts: 2,
            downloadTimeout: Duration.millis(300)
          })
        )
      )
      const error = failureOf(yield* Fiber.await(fiber))
      expect(error).toMatchObject({ _tag: "ProviderUnavailable", reason: "timeout", attempts: 2 })
    })))
})

describe("provider behind a path prefix", () => {
  it.live("OAuth, listing and download keep the prefix of the configured URLs", () =>
    Effect.gen(function*() {
      const prefixed = yield* Effect.acquireRelease(
        Effect.promise(() => startDriveEmulator({ pathPrefix: "/google/" })),
        (e) => Effect.promise(() => e.close())
      )
      expect(prefixed.driveApiUrl).toMatch(/\/google\/$/)
      const folder = prefixed.addFolder({ name: "Prefixed" })
      const file = prefixed.addFile({ name: "a.jpg", parent: folder, mimeType: "image/jpeg", bytes: "jpeg" })
      yield* Effect.gen(function*() {
        const oauth = yield* DriveOAuth
        const pkce = yield* oauth.newPkce
        const url = yield* oauth.authorizationUrl({ state: "p", codeChallenge: pkce.challenge })
        const { code } = yield* Effect.promise(() => prefixed.consent(url))
        const tokens = yield* oauth.exchangeCode({ code, codeVerifier: pkce.verifier })
        const session = yield* sessionWith(tokens)
        expect((yield* session.listFolders({ parent: "root" })).folders.map((f) => f.name)).toEqual(["Prefixed"])
        expect((yield* session.listChildren(folder)).map((f) => f.name)).toEqual(["a.jpg"])
        const ok = yield* session.download(file, { maxBytes: 100, toPath: join(workDir, "prefixed.jpg") })
        expect(ok.bytes).toBe(4)
        yield* oauth.revoke(tokens.refreshToken)
      }).pipe(Effect.provide(driveLayerFor(() => prefixed)))
      expect(prefixed.requests.every((r) => r.status < 400)).toBe(true)
    }).pipe(Effect.scoped))
})

describe("secrecy", () => {
  it.live("no token, code or client secret appears in any error", () =>
    run(Effect.gen(function*() {
      const oauth = yield* DriveOAuth
      const { session, tokens } = yield* connectedSession
      const errors: Array<Cause.Cause<unknown>> = []
      const collect = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.flatMap(Effect.exit(effect), (exit) =>
          Effect.sync(() => {
            if (Exit.isFailure(exit)) errors.push(exit.cause)
          }))

      emulator.failNext({ status: 503, count: 100 })
      yield* collect(session.getFolder("root"))
      yield* collect(oauth.refresh(tokens.refreshToken))
      emulator.resetFaults()
      yield* collect(session.getFolder("missing"))
      const pkce = yield* oauth.newPkce
      yield* collect(oauth.exchangeCode({ code: "4/emu-bogus", codeVerifier: pkce.verifier }))
      yield* collect(oauth.revoke(Redacted.make("not-a-token")))
      emulator.revokeAll()
      yield* collect(session.getFolder("root"))
      yield* collect(oauth.refresh(tokens.refreshToken))
      const stranger = yield* sessionWith(tokens)
      yield* collect(stranger.getFolder("root"))

      expect(errors.length).toBeGreaterThanOrEqual(7)
      const rendered = errors.map((cause) =>
        [Cause.pretty(cause), JSON.stringify(Cause.squash(cause)), String(Cause.squash(cause))].join("\n")
      ).join("\n")
      const secrets = [
        ...emulator.issuedTokens().accessTokens,
        ...emulator.issuedTokens().refreshTokens,
        ...emulator.issuedTokens().codes,
        emulator.clientSecret
      ]
      for (const secret of secrets) expect(rendered).not.toContain(secret)
      // And the Tokens value itself logs redacted.
      expect(JSON.stringify(tokens)).not.toContain(Redacted.value(tokens.accessToken))
      expect(String(tokens.refreshToken)).toBe("<redacted>")
    })))
})

export type { DriveSession }
