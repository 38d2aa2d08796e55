/** Random-access reads of a file (or buffer): returns up to `length` bytes at `offset`. */
export type ReadAt = (offset: number, length: number) => Promise<Uint8Array>
