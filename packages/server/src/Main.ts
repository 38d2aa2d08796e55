import { InstallationSecretRefused } from "@pic2video/cluster/config/InstallationSecrets"
import { Cause, Exit, Option } from "effect"
import type * as Runtime from "effect/Runtime"

/**
 * How a service process ends (NodeRuntime.runMain): 0 once it stopped on SIGTERM/SIGINT (its work
 * interrupted and handed back, as asked), 1 on a failure. Effect 4's default answers an
 * interruption with 130; the service's stop has always been a clean exit.
 */
export const teardown: Runtime.Teardown = (exit, onExit) => {
  if (Exit.isFailure(exit)) {
    // a start refused for a reason the operator fixes (InstallationSecrets.ts): its one line, no stack
    const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
    if (error instanceof InstallationSecretRefused) process.stderr.write(`${error.message}\n`)
  }
  onExit(Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? 1 : 0)
}
