/**
 * Keyset cursors for lists that page backward in time: the position is the last item's
 * (created_at, id); items added meanwhile sort before it and never shift a page. The cursor is
 * opaque to clients (base64url of a small JSON document); anything that does not decode is invalid.
 */
export interface Position {
  readonly createdAt: string // ISO 8601 with microseconds as stored
  readonly id: string
}

const toBase64Url = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text))).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    ""
  )

const fromBase64Url = (text: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"))
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)))
  } catch {
    return undefined
  }
}

// exactly what `Date.prototype.toISOString` writes for the years PostgreSQL can store
const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/

export const encodeCursor = (p: Position): string => toBase64Url(JSON.stringify({ t: p.createdAt, i: p.id }))

export const decodeCursor = (cursor: string): Position | undefined => {
  if (cursor.length === 0 || cursor.length > 512) return undefined
  const json = fromBase64Url(cursor)
  if (json === undefined) return undefined
  try {
    const v: unknown = JSON.parse(json)
    if (typeof v !== "object" || v === null) return undefined
    const { t, i } = v as Record<string, unknown>
    if (typeof t !== "string" || typeof i !== "string" || !isoInstant.test(t) || Number.isNaN(Date.parse(t))) {
      return undefined
    }
    if (i.length === 0 || i.length > 128) return undefined
    return { createdAt: t, id: i }
  } catch {
    return undefined
  }
}

/**
 * Drive page tokens are wrapped so a folder cursor is as opaque as ours, and carry the folder they
 * page through: a cursor sent with another `parent` is refused by us, whatever the drive would do.
 */
export interface FolderPage {
  readonly token: string
  readonly parent: string
}

export const encodePageToken = (page: FolderPage): string =>
  toBase64Url(JSON.stringify({ p: page.token, f: page.parent }))

export const decodePageToken = (cursor: string): FolderPage | undefined => {
  if (cursor.length === 0 || cursor.length > 4096) return undefined
  const json = fromBase64Url(cursor)
  if (json === undefined) return undefined
  try {
    const v: unknown = JSON.parse(json)
    if (typeof v !== "object" || v === null) return undefined
    const { f, p } = v as Record<string, unknown>
    return typeof p === "string" && p.length > 0 && typeof f === "string" ? { token: p, parent: f } : undefined
  } catch {
    return undefined
  }
}
