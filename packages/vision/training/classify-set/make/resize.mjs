// `node resize.mjs SRC DST.jpg` — a photo as it goes into the set: upright, cut-outs flattened on
// white, longer side <= 640 px, JPEG q80 (sharp, from the repo's node_modules).
import sharp from "sharp"
const [src, dst] = process.argv.slice(2)
await sharp(src).rotate().flatten({ background: "#ffffff" }).resize(640, 640, { fit: "inside", withoutEnlargement: true }).jpeg({ quality: 80 }).toFile(dst)
