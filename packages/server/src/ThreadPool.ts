import process from "node:process"

/**
 * libuv's thread pool (docs/contract.md H3/H4). File I/O (an upload spooled to disk as it arrives,
 * the store's renames, file-type's reads) runs on it, and so does every sharp operation (a photo's
 * decode, the vision model's raster, a preview, a render's frames), each holding a thread for as long
 * as it computes: seconds for a large photo on a busy machine. With libuv's default of 4 threads the
 * image slots alone (two decodes, two vision rasters) filled the pool, the spooling writes queued
 * behind them, the upload bodies stopped being read, and under load clients saw a connection cut
 * mid-body (EPIPE). Image work is bounded by its own slots, so more threads only keep I/O from
 * waiting behind it: the pool gets 16 unless UV_THREADPOOL_SIZE says otherwise.
 *
 * libuv reads the variable when the pool starts (the first async file or crypto call), so a service
 * entry sets it before loading anything else. Deno has no libuv pool: nothing to do there.
 */
const defaultThreads = 16

export const sizeThreadPool = (): void => {
  if ((process.env.UV_THREADPOOL_SIZE ?? "").trim() === "") process.env.UV_THREADPOOL_SIZE = String(defaultThreads)
}
