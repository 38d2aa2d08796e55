import { Cause, Exit } from "effect"
import type * as Runtime from "effect/Runtime"

/**
 * How a service process ends (NodeRuntime.runMain): 0 once it stopped on SIGTERM/SIGINT (its work
 * interrupted and handed back, as asked), 1 on a failure. Effect 4's default answers an
 * interruption with 130; the service's stop has always been a clean exit.
 */
export const teardown: Runtime.Teardown = (exit, onExit) =>
  onExit(Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? 1 : 0)
