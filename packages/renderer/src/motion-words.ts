/**
 * `sub_prompt` / `render_prompt` are advisory free text. We recognise plain camera words only and
 * ignore everything else (no model reads these prompts, so guessing at more would be noise).
 */
export type MotionMove = "zoom-in" | "zoom-out" | "pan-left" | "pan-right" | "pan-up" | "pan-down" | "still"
export type MotionSpeed = "slow" | "normal" | "fast"

export interface MotionWords {
  readonly move: MotionMove | undefined
  readonly speed: MotionSpeed | undefined
}

// Order matters only for readability; the earliest match in the text wins (see `firstMatch`).
const MOVES: ReadonlyArray<readonly [RegExp, MotionMove]> = [
  [/\bzoom(?:s|ing)?[\s-]*in\b|\bpush(?:es|ing)?[\s-]*in\b|\bdolly[\s-]*in\b|\bken[\s-]*burns\b/, "zoom-in"],
  [/\bzoom(?:s|ing)?[\s-]*out\b|\bpull(?:s|ing)?[\s-]*(?:out|back)\b|\bdolly[\s-]*out\b/, "zoom-out"],
  [/\bpan(?:s|ning)?[\s-]*(?:to[\s-]*the[\s-]*)?left(?:wards?)?\b/, "pan-left"],
  [/\bpan(?:s|ning)?[\s-]*(?:to[\s-]*the[\s-]*)?right(?:wards?)?\b/, "pan-right"],
  [/\bpan(?:s|ning)?[\s-]*up(?:wards?)?\b|\btilt(?:s|ing)?[\s-]*up\b/, "pan-up"],
  [/\bpan(?:s|ning)?[\s-]*down(?:wards?)?\b|\btilt(?:s|ing)?[\s-]*down\b/, "pan-down"],
  [/\bstill\b|\bstatic\b|\bno[\s-]*motion\b|\bno[\s-]*movement\b|\blocked[\s-]*off\b/, "still"]
]

const SPEEDS: ReadonlyArray<readonly [RegExp, MotionSpeed]> = [
  [/\bslow(?:ly|er)?\b|\bgentle\b|\bsubtle\b|\bcalm\b/, "slow"],
  [/\bfast(?:er)?\b|\bquick(?:ly)?\b|\brapid(?:ly)?\b|\bdramatic\b/, "fast"]
]

const firstMatch = <A>(text: string, table: ReadonlyArray<readonly [RegExp, A]>): A | undefined => {
  let best: { index: number; value: A } | undefined
  for (const [re, value] of table) {
    const m = re.exec(text)
    if (m && (best === undefined || m.index < best.index)) best = { index: m.index, value }
  }
  return best?.value
}

export const parseMotionWords = (text: string | undefined): MotionWords => {
  const t = (text ?? "").toLowerCase()
  return { move: firstMatch(t, MOVES), speed: firstMatch(t, SPEEDS) }
}

/** render_prompt replaces the generated description, so it wins; sub_prompt fills the gaps. */
export const combineMotionWords = (renderPrompt: string | undefined, subPrompt: string | undefined): MotionWords => {
  const r = parseMotionWords(renderPrompt)
  const s = parseMotionWords(subPrompt)
  return { move: r.move ?? s.move, speed: r.speed ?? s.speed }
}
