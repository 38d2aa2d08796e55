import { Cause, Effect, Exit, Stream } from "effect"
import * as Client from "./Client.ts"

/**
 * The same client for code that does not use Effect: every method returns a Promise of the same
 * type, and rejects with the same `ApiError` (by `code`), `TransportError`, `UnexpectedAnswer`, `InvalidRequest` or
 * `WaitTimeout` instances. Pass `signal` to stop a call (a wait stops waiting; nothing is canceled on the service).
 */
export interface CallOptions {
  readonly signal?: AbortSignal
}

type Promised<F> = F extends (...args: infer A) => Effect.Effect<infer R, unknown, never>
  ? (...args: [...A, CallOptions?]) => Promise<R>
  : never

type Methods = Omit<Client.Client, "raw" | "downloadStream" | "openDownload">

export type PromiseClient = { readonly [K in keyof Methods]: Promised<Methods[K]> } & {
  /** The finished MP4 as a web stream. */
  readonly downloadStream: (
    id: string,
    download?: Client.DownloadOptions,
    options?: CallOptions
  ) => Promise<ReadableStream<Uint8Array>>
}

const run = <A>(effect: Effect.Effect<A, unknown>, options?: CallOptions): Promise<A> =>
  Effect.runPromiseExit(effect, options?.signal === undefined ? undefined : { signal: options.signal }).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    // the error itself (an ApiError, …), not Effect's wrapper
    throw Cause.hasInterruptsOnly(exit.cause)
      ? new DOMException("the call was aborted", "AbortError")
      : Cause.squash(exit.cause)
  })

/** How many arguments each method takes before the trailing CallOptions. */
const arity: Record<keyof Methods, number> = {
  listMedia: 1,
  upload: 1,
  preview: 1,
  createRender: 2,
  getRender: 1,
  waitForRender: 2,
  download: 2,
  createImport: 2,
  getImport: 1,
  waitForImport: 2,
  usage: 0
}

export const createClient = (options: Client.ClientOptions): PromiseClient => {
  const client = Effect.runSync(Client.makeWithFetch(options))
  const methods = Object.fromEntries(
    (Object.keys(arity) as Array<keyof Methods>).map((name) => [
      name,
      (...args: Array<unknown>) => {
        const own = args.slice(0, arity[name])
        const options = args[arity[name]] as CallOptions | undefined
        return run((client[name] as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>)(...own), options)
      }
    ])
  )
  return {
    ...methods,
    downloadStream: (id: string, download?: Client.DownloadOptions, call?: CallOptions) =>
      run(Effect.map(client.openDownload(id, download), (d) => Stream.toReadableStream(d.stream)), call)
  } as PromiseClient
}
