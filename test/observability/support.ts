import { afterAll, beforeAll, expect } from "vitest"
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.ts"
import { client, makeShared, photo, type Service, type Shared, workspaceWithKey } from "../support/service.ts"

/**
 * What the observability suites share: a database made for the file, an OTLP receiver (test code:
 * test/support/otlp-receiver.ts), every service started killed at the end; and a keyed client with a
 * photo in its library.
 */
export const useDeployment = () => {
  const state = {
    shared: undefined as unknown as Shared,
    receiver: undefined as unknown as OtlpReceiver,
    services: [] as Array<Service>
  }
  beforeAll(async () => {
    state.shared = await makeShared()
    state.receiver = await startOtlpReceiver()
  })
  afterAll(async () => {
    for (const s of state.services) await s.stop("SIGKILL").catch(() => {})
    await state.receiver?.close()
  })
  return state
}

/** A studio workspace's key with every scope, its client, and one photo uploaded through it. */
export const keyedWithPhoto = async (service: Service, fixture: string) => {
  const { secret } = await workspaceWithKey(service.env)
  const http = client(service.baseUrl, secret)
  const upload = await http.upload(photo(fixture), { filename: fixture })
  expect(upload.status).toBe(201)
  return { secret, http, mediaId: (await upload.json()).id as string }
}
