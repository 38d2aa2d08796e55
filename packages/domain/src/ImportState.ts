import type { ImportStatus } from "./Resources.ts"

/**
 * Import outcomes (contract §7). An import stays `pending` until it ends; then:
 * `completed` when nothing failed and nothing stopped it, `partial` when at least one file was
 * imported and a failure or a stop happened, `failed` when nothing was imported and a failure or a
 * stop happened (including a folder or connection that went away after creation).
 */
export const stoppedReasons = [
  "file_limit_reached",
  "storage_budget_exceeded",
  "integration_not_connected",
  "unknown_folder"
] as const
export type StoppedReason = (typeof stoppedReasons)[number]

export const itemReasons = [
  "unsupported_media_type",
  "already_imported",
  "payload_too_large",
  "download_failed"
] as const

export const maxFilesPerImport = 500

export interface Tally {
  readonly imported: number
  readonly skipped: number
  readonly failed: number
}

export const finalStatus = (t: Tally, stopped: StoppedReason | null): Exclude<ImportStatus, "pending"> => {
  if (t.failed === 0 && stopped === null) return "completed"
  return t.imported > 0 ? "partial" : "failed"
}

/** Every import starts here and stays until it ends. */
export const initialStatus: ImportStatus = "pending"
export const isTerminal = (s: ImportStatus): boolean => s !== initialStatus
/** The statuses an import ends in (a client treats any other, unknown ones included, as still going). */
export const terminalStatuses: ReadonlyArray<ImportStatus> = ["completed", "partial", "failed"]

export const itemStatuses = ["imported", "skipped", "failed"] as const

/** An import as the state machine sees it (the `imports` row without its identity). */
export interface State {
  readonly status: ImportStatus
  readonly discovered: number
  readonly stoppedReason: StoppedReason | null
}

export type Event =
  /** the folder was listed: this many non-folder entries */
  | { readonly _tag: "Discovered"; readonly discovered: number }
  /** every considered file has its item, or a stop left the rest without one */
  | { readonly _tag: "Ended"; readonly tally: Tally; readonly stopped: StoppedReason | null }

/**
 * pending → completed | partial | failed, once. The imports repository decides every change here
 * and writes it with an UPDATE guarded on the status it decided from; undefined: refused (the
 * import already ended), the row stays as it is.
 */
export const transition = (s: State, e: Event): State | undefined => {
  if (isTerminal(s.status)) return undefined
  switch (e._tag) {
    case "Discovered":
      return { ...s, discovered: e.discovered }
    case "Ended":
      return { ...s, status: finalStatus(e.tally, e.stopped), stoppedReason: e.stopped }
  }
}

/** Name order, not the drive's: the first 500 non-folder entries are considered, whatever their type. */
/** Code-point order (JS `<` compares UTF-16 units, which misorders astral characters). */
const compareCodePoints = (a: string, b: string): number => {
  const x = [...a]
  const y = [...b]
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!
    if (d !== 0) return d
  }
  return x.length - y.length
}

/**
 * The folder list's name order: case folded first, as a person reads a folder list (and as the
 * drive's `orderBy=name` sorts), then code points, then ids, so the order is total.
 */
export const compareFolderNames = (
  a: { readonly name: string; readonly id: string },
  b: { readonly name: string; readonly id: string }
): number =>
  compareCodePoints(a.name.toLowerCase(), b.name.toLowerCase()) || compareCodePoints(a.name, b.name) ||
  compareCodePoints(a.id, b.id)

export const considered = <A extends { readonly name: string; readonly id: string }>(files: ReadonlyArray<A>) => {
  const sorted = [...files].sort((a, b) => compareCodePoints(a.name, b.name) || compareCodePoints(a.id, b.id))
  return { considered: sorted.slice(0, maxFilesPerImport), limitReached: sorted.length > maxFilesPerImport }
}
