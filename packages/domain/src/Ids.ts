import { Schema } from "effect"
import { randomBase62 } from "./Random.ts"
import { Uuid } from "./Text.ts"

/** Ids the service hands out are opaque to clients; inside they are branded so they cannot be mixed up. */
export const WorkspaceId = Schema.String.pipe(Schema.brand("WorkspaceId"))
export type WorkspaceId = typeof WorkspaceId.Type
export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type
export const MediaId = Uuid.pipe(Schema.brand("MediaId"))
export type MediaId = typeof MediaId.Type
export const RenderId = Schema.String.check(Schema.isPattern(/^rnd_[0-9A-Za-z]{20,}$/)).pipe(Schema.brand("RenderId"))
export type RenderId = typeof RenderId.Type
export const ImportId = Schema.String.check(Schema.isPattern(/^imp_[0-9A-Za-z]{20,}$/)).pipe(Schema.brand("ImportId"))
export type ImportId = typeof ImportId.Type

export const newWorkspaceId = (): WorkspaceId => `ws_${randomBase62(20)}` as WorkspaceId
export const newApiKeyId = (): ApiKeyId => `key_${randomBase62(16)}` as ApiKeyId
export const newMediaId = (): MediaId => crypto.randomUUID() as MediaId
/** contract §6: `rnd_` plus at least 20 random base62 characters, never sequential. */
export const newRenderId = (): RenderId => `rnd_${randomBase62(24)}` as RenderId
export const newImportId = (): ImportId => `imp_${randomBase62(24)}` as ImportId

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A path id of the wrong shape is simply unknown (contract §4.8): these guards never throw. */
export const isMediaId = (s: string): s is MediaId => uuidPattern.test(s)
export const isRenderId = (s: string): s is RenderId => /^rnd_[0-9A-Za-z]{20,64}$/.test(s)
export const isImportId = (s: string): s is ImportId => /^imp_[0-9A-Za-z]{20,64}$/.test(s)
