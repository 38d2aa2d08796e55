/**
 * `npm run build:wasm`: compiles the renderer's AssemblyScript resampler to the committed
 * packages/renderer/src/resample.wasm. The renderer test suite compiles it again with these same
 * arguments and fails if the committed binary differs from its source.
 */
import asc from "assemblyscript/asc"
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const SOURCE = fileURLToPath(new URL("../packages/renderer/assembly/resample.ts", import.meta.url))
export const OUTPUT = fileURLToPath(new URL("../packages/renderer/src/resample.wasm", import.meta.url))
const ARGS = ["--enable", "simd", "--runtime", "stub", "-O3", "--noAssert"]

/** The module's bytes, compiled in memory. */
export const compileWasm = async (): Promise<Uint8Array> => {
  let wasm: Uint8Array | undefined
  const { error, stderr } = await asc.main([SOURCE, ...ARGS, "--outFile", "resample.wasm"], {
    writeFile: (name: string, contents: Uint8Array | string) => {
      if (name.endsWith(".wasm") && typeof contents !== "string") wasm = contents
    }
  })
  if (error) throw new Error(`asc failed: ${error.message}\n${stderr.toString()}`)
  if (!wasm) throw new Error("asc wrote no .wasm")
  return wasm
}

if (import.meta.main) {
  const wasm = await compileWasm()
  writeFileSync(OUTPUT, wasm)
  console.log(`wrote ${OUTPUT} (${wasm.byteLength} bytes)`)
}
