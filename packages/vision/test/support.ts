import type { SceneStats } from "../src/classify.ts"

/** A square photo's size, and the scene statistics of a plain photo (no sky, green or figure): the rules then decide nothing. */
export const size = { width: 640, height: 640 }
export const plainStats: SceneStats = {
  skyTop: 0,
  green: 0,
  plainBorder: 0,
  figure: null,
  figureShare: 0,
  vegetation: 0,
  edges: 0.1,
  rectilinear: 0.3,
  vertical: 0.1,
  spread: 40
}
