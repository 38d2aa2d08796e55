import { type ImageClass, imageClasses } from "@pic2video/domain/Requests"
import { readFileSync } from "node:fs"

/** The labelled set of `bench:classify` (classify-set/MANIFEST.tsv: file, label, face, source, licence, split). */
export const CLASSES: ReadonlyArray<ImageClass> = imageClasses
export const SET_DIR = new URL("./classify-set/", import.meta.url).pathname

export interface Entry {
  readonly file: string
  readonly label: ImageClass
  readonly face: readonly [number, number] | undefined
  readonly split: "dev" | "held-out"
  /**
   * Photos of one scene share this (read off the source: the file named in it, digits and left/right
   * dropped — stereo pairs, calibration series, two views of one panorama): cross-validation leaves
   * a whole scene out, so a photo's twin cannot vouch for it.
   */
  readonly scene: string
}

const sceneOf = (file: string, source: string) => {
  const named = /\(([^,)]+)/.exec(source)?.[1] ?? /render-figurines\.py (\w+)/.exec(source)?.[1] ?? file
  return named.replace(/\d+|left|right/gi, "")
}

export const readManifest = (): Array<Entry> =>
  readFileSync(SET_DIR + "MANIFEST.tsv", "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#") && !l.startsWith("file\t"))
    .map((l) => {
      const [file, label, face, source, , split] = l.split("\t")
      const xy = face && face !== "-" ? (face.split(",").map(Number) as [number, number]) : undefined
      return {
        file,
        label: label as ImageClass,
        face: xy,
        split: split === "held-out" ? "held-out" : "dev",
        scene: sceneOf(file, source ?? "")
      }
    })
