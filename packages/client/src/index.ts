export * as Client from "./Client.ts"
export * from "./Errors.ts"
export { type CallOptions, createClient, type PromiseClient } from "./Promise.ts"
