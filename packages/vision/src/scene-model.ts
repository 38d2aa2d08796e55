import type { ImageClass } from "@pic2video/domain/Requests"
import { type Inference, MIN_CONFIDENCE, type SceneFeatures } from "./classify.ts"
import { SCENE_MODEL_WEIGHTS } from "./scene-model-weights.ts"

/**
 * The learned half of the classifier: multinomial logistic regression over the object detector's
 * pooled backbone features (SceneFeatures), each standardised by the training photos' mean and
 * spread, with an L2 penalty (`lambda`) strong enough that 720 features fitted on a few dozen photos
 * do not just learn the photos. Fitted by plain gradient descent (300 steps from zero): deterministic, no dependency.
 *
 * It decides between the scene classes only; `person` stays with the rules (a believed face or a body,
 * and the face frames the subject). The rules' own class gets `ruleWeight` added to its probability,
 * so the model overturns the rules only when it is surer than that: the rules fall back to `other`
 * whenever nothing they know fires, and that is where the model helps most.
 *
 * Each class weighs the same in the fit however many photos it has (a class's photos share 1/5 of
 * the loss): unweighted, the many `other` photos pulled the model toward `other` and rooms lost.
 *
 * Weights: src/scene-model-weights.ts, fitted on the `dev` photos of training/classify-set by
 * `npm run vision:fit`; `npm run bench:classify` reports leave-one-scene-out accuracy and the fresh
 * `held-out` batch's. How the settings were chosen: docs/vision-research.md.
 */
export interface SceneModel {
  readonly classes: ReadonlyArray<ImageClass>
  readonly mean: ReadonlyArray<number>
  readonly scale: ReadonlyArray<number>
  /** One row of weights per class over the standardised features, and its bias. */
  readonly weights: ReadonlyArray<ReadonlyArray<number>>
  readonly bias: ReadonlyArray<number>
  readonly ruleWeight: number
}

/** The classes the model chooses between (not `person`: see above). */
export const SCENE_CLASSES: ReadonlyArray<ImageClass> = [
  "doll_figurine",
  "landscape_nature",
  "product_object",
  "interior_space",
  "other"
]
/** Chosen by leave-one-scene-out over the 84 dev photos (docs/vision-research.md). */
const LAMBDA = 0.01
const RULE_WEIGHT = 0.3
const STEPS = 300
const STEP_SIZE = 0.5

const standardise = (model: Pick<SceneModel, "mean" | "scale">, pooled: ReadonlyArray<number>): Array<number> =>
  pooled.map((x, i) => (x - model.mean[i]) / model.scale[i])

const softmax = (z: ReadonlyArray<number>): Array<number> => {
  const top = Math.max(...z)
  const e = z.map((v) => Math.exp(v - top))
  const sum = e.reduce((a, b) => a + b, 0)
  return e.map((v) => v / sum)
}

/** Per photo: n / (classes × photos of its class), so every class weighs the same and the weights sum to n. */
export const classWeights = (y: ReadonlyArray<number>, classes: number): Array<number> => {
  const count = new Array<number>(classes).fill(0)
  for (const k of y) count[k]++
  return y.map((k) => y.length / (classes * count[k]))
}

/** Fits the model; every class in SCENE_CLASSES needs at least one photo. */
export const fitSceneModel = (
  samples: ReadonlyArray<{ readonly features: SceneFeatures; readonly label: ImageClass }>
): SceneModel => {
  const used = samples.filter((s) => SCENE_CLASSES.includes(s.label))
  for (const c of SCENE_CLASSES) {
    if (!used.some((s) => s.label === c)) throw new Error(`scene model: no training photo of class ${c}`)
  }
  const dim = used[0].features.pooled.length
  const n = used.length
  const mean = new Array<number>(dim).fill(0)
  for (const s of used) s.features.pooled.forEach((x, i) => (mean[i] += x / n))
  const scale = mean.map((m, i) =>
    Math.sqrt(used.reduce((acc, s) => acc + (s.features.pooled[i] - m) ** 2, 0) / n) + 1e-6
  )
  const X = used.map((s) => standardise({ mean, scale }, s.features.pooled))
  const y = used.map((s) => SCENE_CLASSES.indexOf(s.label))
  const K = SCENE_CLASSES.length
  const weight = classWeights(y, K)
  // Gradient descent from zero keeps each class's weights a mix of the training rows (W = Xᵀ·A: the
  // gradient and the L2 term are both such mixes), so the steps run on A and on the photos' dot
  // products — the same iterates as on W, n × n instead of n × 720 per step.
  const gram = X.map((a) => X.map((c) => a.reduce((acc, v, i) => acc + v * c[i], 0)))
  const A = X.map(() => new Array<number>(K).fill(0))
  const b = new Array<number>(K).fill(0)
  for (let step = 0; step < STEPS; step++) {
    const g = X.map(() => new Array<number>(K).fill(0))
    const gb = new Array<number>(K).fill(0)
    for (let j = 0; j < n; j++) {
      const p = softmax(b.map((bk, k) => A.reduce((acc, a, m) => acc + a[k] * gram[m][j], bk)))
      for (let k = 0; k < K; k++) {
        g[j][k] = ((p[k] - (y[j] === k ? 1 : 0)) * weight[j]) / n
        gb[k] += g[j][k]
      }
    }
    for (let k = 0; k < K; k++) {
      b[k] -= STEP_SIZE * gb[k]
      for (let m = 0; m < n; m++) A[m][k] -= STEP_SIZE * (g[m][k] + LAMBDA * A[m][k])
    }
  }
  const W = SCENE_CLASSES.map((_, k) => X[0].map((_, i) => A.reduce((acc, a, m) => acc + a[k] * X[m][i], 0)))
  return { classes: SCENE_CLASSES, mean, scale, weights: W, bias: b, ruleWeight: RULE_WEIGHT }
}

/** Probability of each of the model's classes for one photo. */
export const sceneProbabilities = (
  model: SceneModel,
  features: SceneFeatures
): ReadonlyArray<{ readonly image_class: ImageClass; readonly p: number }> => {
  const v = standardise(model, features.pooled)
  const p = softmax(model.weights.map((w, k) => model.bias[k] + w.reduce((acc, x, i) => acc + x * v[i], 0)))
  return model.classes.map((image_class, k) => ({ image_class, p: p[k] }))
}

/** Weights of the shapes the features need (a stale weights file or another model folder: rules only). */
const fits = (model: SceneModel, features: SceneFeatures) =>
  Array.isArray(model.weights) && Array.isArray(model.bias) && model.bias.length === model.classes.length &&
  model.weights.length === model.classes.length && model.mean.length === features.pooled.length &&
  model.weights.every((w) => w.length === features.pooled.length)

/**
 * The rules' answer, reconsidered by the model. A person stays a person; features missing or of
 * another length (another model folder) leave the rules' answer as it is. The subject box is the
 * rules' (the detectors' boxes), except that a landscape or a room has none.
 */
export const fuse = (
  rules: Inference,
  features: SceneFeatures | undefined,
  model: SceneModel | null = SCENE_MODEL
): Inference => {
  if (model === null || features === undefined || rules.image_class === "person" || !fits(model, features)) return rules
  const probs = sceneProbabilities(model, features)
  const scored = probs.map(({ image_class, p }) => ({
    image_class,
    p,
    score: p + (image_class === rules.image_class ? model.ruleWeight : 0)
  }))
  const best = scored.reduce((a, b) => (b.score > a.score ? b : a))
  // an answer below the confidence floor would only fall back to `other`: not sure enough to overturn
  if (best.image_class === rules.image_class || best.p < MIN_CONFIDENCE) return rules
  // a room or a landscape has no single subject (as the rules say of the ones they find)
  const subject = best.image_class === "landscape_nature" || best.image_class === "interior_space"
    ? null
    : rules.subject
  return { image_class: best.image_class, confidence: Math.round(best.p * 1000) / 1000, subject }
}

export const SCENE_MODEL: SceneModel | null = SCENE_MODEL_WEIGHTS
