import { Clock, Context, Effect, Layer } from "effect"

/** How long a form that minted a key is remembered. */
const rememberMillis = 3600_000

/**
 * The key-minting forms already used, held in this process for an hour: a resubmitted or
 * double-clicked form mints nothing more, and the person is told which key it made.
 */
export class MintedForms extends Context.Service<MintedForms>()("pic2video/portal/MintedForms", {
  make: Effect.sync(() => {
    const minted = new Map<string, { readonly keyId: string; readonly at: number }>()
    return {
      /** The key this form already minted, if any (forms older than an hour are forgotten first). */
      keyOf: (formId: string) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          for (const [id, m] of minted) if (now - m.at > rememberMillis) minted.delete(id)
          return minted.get(formId)?.keyId
        }),
      /** Remembers that this form minted this key. */
      remember: (formId: string, keyId: string) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          minted.set(formId, { keyId, at })
        })
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
