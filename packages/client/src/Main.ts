import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit, Fiber } from "effect"
import { exitCodes, outcome, run } from "./Cli.ts"

/**
 * `p2v`'s process once the CLI is loaded (bin/p2v.ts answers the version and the help before).
 * Ctrl-C interrupts the command: a wait stops and says how to look again, and nothing is canceled on
 * the service (no request is sent for it).
 */
export const main = (argv: ReadonlyArray<string>) => {
  const fiber = Effect.runFork(run(argv).pipe(Effect.provide(NodeServices.layer)))
  let interrupted = false
  const stop = () => {
    if (interrupted) process.exit(exitCodes.interrupted)
    interrupted = true
    Effect.runFork(Fiber.interrupt(fiber))
  }
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)

  fiber.addObserver((exit) => {
    if (Exit.isSuccess(exit)) return void (process.exitCode = exitCodes.ok)
    if (interrupted || Cause.hasInterruptsOnly(exit.cause)) return void (process.exitCode = exitCodes.interrupted)
    const { code, message } = outcome(Cause.squash(exit.cause))
    if (message !== undefined) process.stderr.write(`${message}\n`)
    process.exitCode = code
  })
}
