/**
 * Server-rendered HTML: a tagged template that escapes every interpolated value unless it is itself
 * markup built here, so user text (labels, key names, captions) can never become markup.
 */
export class Markup {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString() {
    return this.value
  }
}

export type Interpolated = Markup | string | number | boolean | null | undefined | ReadonlyArray<Interpolated>

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }
export const escape = (text: string) => text.replace(/[&<>"']/g, (c) => escapes[c])

const render = (value: Interpolated): string =>
  value instanceof Markup
    ? value.value
    : Array.isArray(value)
    ? value.map(render).join("")
    : value === null || value === undefined || value === false
    ? ""
    : escape(String(value))

export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolated>): Markup => {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]
  return new Markup(out)
}

export const raw = (value: string) => new Markup(value)

/**
 * User text (labels, tags, captions, key, file, folder and workspace names, metadata) in an
 * element's content: isolated in a `<bdi>`, so its direction, or a bidi control it holds (a name
 * ending in U+202E RIGHT-TO-LEFT OVERRIDE), cannot reorder the service's text beside it.
 */
export const isolate = (text: string) => html`<bdi>${text}</bdi>`

/** Embeddings, overrides, isolates and marks: the controls that reorder text (Unicode bidi). */
const bidiControls = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * User text where no markup can isolate it and an accessible name or an `<option>` is made of it
 * (aria-label, title, option text): its bidi controls are removed, so it shows in its own order
 * without reordering what follows it (and reads without stray format characters).
 */
export const plain = (text: string) => text.replace(bidiControls, "")

/** A value as JSON text whose bidi controls are written as the escapes they stand for (`\u202e`): the same JSON, shown inertly. */
export const inertJson = (value: unknown) =>
  JSON.stringify(value, null, 2).replace(bidiControls, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * User text inside an attribute shown as text (alt, data-label, which becomes an alt): without its
 * own bidi controls (see `plain`), set apart from the text around it with Unicode's first-strong
 * isolate, as `<bdi>` does in content, so a right-to-left label cannot reorder it.
 */
export const isolated = (text: string) => `\u2068${plain(text)}\u2069`

/** An attribute that is present or absent (`checked`, `selected`, `disabled`). */
export const flag = (on: boolean, name: string) => (on ? raw(` ${name}`) : raw(""))

export const dateTime = (d: Date | null | undefined) =>
  d === null || d === undefined
    ? html`<span class="muted">—</span>`
    // a line may break between the date and the time, never inside either (not at a date's hyphens)
    : html`<time datetime="${d.toISOString()}"><span class="nowrap">${
      d.toISOString().slice(0, 10)
    }</span> <span class="nowrap">${d.toISOString().slice(11, 16)} UTC</span></time>`

export const bytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(1)} GB`
    : n >= 1024 ** 2
    ? `${(n / 1024 ** 2).toFixed(1)} MB`
    : n >= 1024
    ? `${(n / 1024).toFixed(0)} KB`
    : `${n} B`
