/**
 * For the classify benches that cross-validate many feature variants: scene-model.ts's fit (class
 * weights, λ, 300 gradient steps of 0.5 from zero) run in the dual on a precomputed Gram matrix of
 * every photo against every photo, so one matrix serves all the folds. `tr`: the training photos'
 * rows; `y`: their class indices (0..K-1). Returns a photo's class probabilities by its row.
 */
import { classWeights } from "../src/vision/scene-model.ts"

export const softmax = (z: ReadonlyArray<number>): Array<number> => {
  const t = Math.max(...z)
  const e = z.map((v) => Math.exp(v - t))
  const s = e.reduce((a, b) => a + b, 0)
  return e.map((v) => v / s)
}

export const fitDual = (G: ReadonlyArray<ArrayLike<number>>, tr: ReadonlyArray<number>, y: ReadonlyArray<number>, K: number, lambda: number) => {
  const n = tr.length
  const w = classWeights(y, K)
  const A = tr.map(() => new Array<number>(K).fill(0))
  const b = new Array<number>(K).fill(0)
  for (let step = 0; step < 300; step++) {
    const g = tr.map(() => new Array<number>(K).fill(0))
    for (let j = 0; j < n; j++) {
      const z = b.slice()
      for (let m = 0; m < n; m++) {
        const gm = G[tr[m]][tr[j]]
        for (let k = 0; k < K; k++) z[k] += A[m][k] * gm
      }
      const p = softmax(z)
      for (let k = 0; k < K; k++) g[j][k] = ((p[k] - (y[j] === k ? 1 : 0)) * w[j]) / n
    }
    for (let k = 0; k < K; k++) {
      b[k] -= 0.5 * g.reduce((s, r) => s + r[k], 0)
      for (let m = 0; m < n; m++) A[m][k] -= 0.5 * (g[m][k] + lambda * A[m][k])
    }
  }
  return (i: number): Array<number> => {
    const z = b.slice()
    for (let m = 0; m < n; m++) for (let k = 0; k < K; k++) z[k] += A[m][k] * G[tr[m]][i]
    return softmax(z)
  }
}
