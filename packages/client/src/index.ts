export * as Client from "./Client.ts"
export * from "./Errors.ts"
export { createClient, type CallOptions, type PromiseClient } from "./Promise.ts"
