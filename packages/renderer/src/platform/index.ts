/** Node-specific pieces (file system, child processes, streams), kept small and in one folder. */
export * as stream from "./stream.ts"
export * as temp from "./temp.ts"
