import { readFileSync } from "node:fs"
import type { ImageClass } from "../src/CaptionSpec.ts"

/** The labelled set of `bench:classify` (classify-set/MANIFEST.tsv: file, label, face, source, licence, split). */
export const CLASSES: ReadonlyArray<ImageClass> = ["person", "doll_figurine", "landscape_nature", "product_object", "interior_space", "other"]
export const SET_DIR = new URL("./classify-set/", import.meta.url).pathname

export interface Entry {
  readonly file: string
  readonly label: ImageClass
  readonly face: readonly [number, number] | undefined
  readonly split: "dev" | "held-out"
}

export const readManifest = (): Array<Entry> =>
  readFileSync(SET_DIR + "MANIFEST.tsv", "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#") && !l.startsWith("file\t"))
    .map((l) => {
      const [file, label, face, , , split] = l.split("\t")
      const xy = face && face !== "-" ? (face.split(",").map(Number) as [number, number]) : undefined
      return { file, label: label as ImageClass, face: xy, split: split === "held-out" ? "held-out" : "dev" }
    })
