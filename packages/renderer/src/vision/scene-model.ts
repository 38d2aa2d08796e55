import type { ImageClass } from "../CaptionSpec.ts"
import type { Inference, SceneFeatures } from "./classify.ts"
import { SCENE_MODEL_WEIGHTS } from "./scene-model-weights.ts"

/**
 * The learned half of the classifier: a nearest-class-mean model over the object detector's pooled
 * backbone features (SceneFeatures). Each feature is standardised by the training photos' mean and
 * spread, the vector scaled to unit length, and its cosine similarity to each class's mean vector
 * turned into probabilities (softmax at `temperature`). Class means generalise from a few dozen photos
 * where a linear model fitted on 720 features would learn the photos themselves.
 *
 * It decides between the scene classes only; `person` stays with the rules (a believed face or a body,
 * and the face frames the subject). The rules' own class gets `ruleWeight` added to its probability,
 * so the model overturns the rules only when it is sure: the rules fall back to `other` whenever
 * nothing they know fires, and that is where the model helps most.
 *
 * Weights: src/vision/scene-model-weights.ts, fitted on the `dev` photos of bench/classify-set by
 * `node packages/renderer/bench/fit-scene-model.ts`; `npm run bench:classify` reports held-out and
 * leave-one-out accuracy.
 */
export interface SceneModel {
  readonly classes: ReadonlyArray<ImageClass>
  readonly mean: ReadonlyArray<number>
  readonly scale: ReadonlyArray<number>
  /** One unit vector per class, in the standardised space. */
  readonly centroids: ReadonlyArray<ReadonlyArray<number>>
  readonly temperature: number
  readonly ruleWeight: number
}

/** The classes the model chooses between (not `person`: see above). */
export const SCENE_CLASSES: ReadonlyArray<ImageClass> = ["doll_figurine", "landscape_nature", "product_object", "interior_space", "other"]
/** Chosen by leave-one-out over the dev photos (README, Accuracy). */
export const TEMPERATURE = 0.2
export const RULE_WEIGHT = 0.6

const unit = (v: Array<number>): Array<number> => {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0))
  return n === 0 ? v : v.map((x) => x / n)
}

const standardise = (model: Pick<SceneModel, "mean" | "scale">, pooled: ReadonlyArray<number>): Array<number> =>
  unit(pooled.map((x, i) => (x - model.mean[i]) / model.scale[i]))

/** Fits the class means; every class in SCENE_CLASSES needs at least one photo. */
export const fitSceneModel = (samples: ReadonlyArray<{ readonly features: SceneFeatures; readonly label: ImageClass }>): SceneModel => {
  const used = samples.filter((s) => SCENE_CLASSES.includes(s.label))
  const dim = used[0]?.features.pooled.length ?? 0
  const mean = new Array<number>(dim).fill(0)
  for (const s of used) s.features.pooled.forEach((x, i) => (mean[i] += x / used.length))
  const scale = mean.map((m, i) => Math.sqrt(used.reduce((acc, s) => acc + (s.features.pooled[i] - m) ** 2, 0) / used.length) + 1e-6)
  const centroids = SCENE_CLASSES.map((c) => {
    const of = used.filter((s) => s.label === c).map((s) => standardise({ mean, scale }, s.features.pooled))
    if (of.length === 0) throw new Error(`scene model: no training photo of class ${c}`)
    return unit(mean.map((_, i) => of.reduce((acc, v) => acc + v[i], 0) / of.length))
  })
  return { classes: SCENE_CLASSES, mean, scale, centroids, temperature: TEMPERATURE, ruleWeight: RULE_WEIGHT }
}

/** Probability of each of the model's classes for one photo. */
export const sceneProbabilities = (model: SceneModel, features: SceneFeatures): ReadonlyArray<{ readonly image_class: ImageClass; readonly p: number }> => {
  const v = standardise(model, features.pooled)
  const sims = model.centroids.map((c) => c.reduce((acc, x, i) => acc + x * v[i], 0) / model.temperature)
  const top = Math.max(...sims)
  const e = sims.map((s) => Math.exp(s - top))
  const sum = e.reduce((a, b) => a + b, 0)
  return model.classes.map((image_class, i) => ({ image_class, p: e[i] / sum }))
}

/**
 * The rules' answer, reconsidered by the model. A person stays a person; features missing or of
 * another length (another model folder) leave the rules' answer as it is. The subject box is the
 * rules' (the detectors' boxes), whatever the class.
 */
export const fuse = (rules: Inference, features: SceneFeatures | undefined, model: SceneModel | null = SCENE_MODEL): Inference => {
  if (model === null || features === undefined || rules.image_class === "person" || features.pooled.length !== model.mean.length) return rules
  const probs = sceneProbabilities(model, features)
  const scored = probs.map(({ image_class, p }) => ({ image_class, p, score: p + (image_class === rules.image_class ? model.ruleWeight : 0) }))
  const best = scored.reduce((a, b) => (b.score > a.score ? b : a))
  if (best.image_class === rules.image_class) return rules
  return { ...rules, image_class: best.image_class, confidence: Math.round(best.p * 1000) / 1000 }
}

export const SCENE_MODEL: SceneModel | null = SCENE_MODEL_WEIGHTS
