import { printable } from "./Printable.ts"

/**
 * What the CLI shows while it waits: a bar redrawn in place on a terminal, one plain line per change
 * otherwise (logs, CI), nothing with --json (stdout carries only the document).
 */
export type Mode = "tty" | "plain" | "quiet"

export const modeFor = (json: boolean, stream: { readonly isTTY?: boolean } = process.stderr): Mode =>
  json ? "quiet" : stream.isTTY === true ? "tty" : "plain"

const width = 28

export const bar = (fraction: number) => {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0))
  const full = Math.round(f * width)
  return `[${"#".repeat(full)}${"-".repeat(width - full)}] ${String(Math.floor(f * 100)).padStart(3)}%`
}

export const bytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`

interface Reporter {
  /** `key` says what changed for plain output (a line is written only when it differs). */
  readonly update: (line: string, key?: string) => void
  /** Ends the line in place (terminal) so what follows starts on a new one. */
  readonly done: (line?: string) => void
}

/** Lines carry what the service said (statuses, ids): escaped (Printable.ts) before the reporter's own controls. */
export const reporter = (mode: Mode, out: { write: (s: string) => unknown } = process.stderr): Reporter => {
  let lastKey: string | undefined
  let lastLine: string | undefined
  let open = false
  return {
    update: (said, key = said) => {
      const line = printable(said)
      if (mode === "quiet") return
      if (mode === "tty") {
        out.write(`\r\x1b[2K${line}`)
        open = true
      } else if (key !== lastKey) {
        out.write(`${line}\n`)
        lastLine = line
      }
      lastKey = key
    },
    done: (said) => {
      const line = said === undefined ? undefined : printable(said)
      if (mode === "quiet") return
      if (mode === "tty") {
        if (line !== undefined) out.write(`\r\x1b[2K${line}`)
        if (open || line !== undefined) out.write("\n")
        open = false
      } else if (line !== undefined && line !== lastLine) {
        out.write(`${line}\n`)
      }
      lastKey = undefined
      lastLine = undefined
    }
  }
}
