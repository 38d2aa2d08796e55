import { it } from "@effect/vitest"
import * as fc from "fast-check"

/**
 * A property test over fast-check arbitraries, as `it.prop` ran them with Effect 3: @effect/vitest 4's
 * `it.prop` takes only Effect's own Arbitrary, which generates differently, and effect no longer ships
 * fast-check, so the properties keep their generators through fast-check itself.
 */
export const prop = <const Ts extends ReadonlyArray<unknown>>(
  name: string,
  arbitraries: { readonly [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  body: (values: Ts) => void,
  options?: { readonly fastCheck?: fc.Parameters<Ts> },
  timeout?: number
) =>
  it(
    name,
    () =>
      fc.assert(
        fc.property(
          fc.tuple(...(arbitraries as ReadonlyArray<fc.Arbitrary<unknown>>)),
          (values: ReadonlyArray<unknown>) => {
            body(values as unknown as Ts)
          }
        ),
        options?.fastCheck as fc.Parameters<unknown> | undefined
      ),
    timeout
  )
