#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { InstallationSecretRefused } from "@pic2video/cluster/config/InstallationSecrets"
import { Errors } from "@pic2video/domain"
import { Cause, Effect, Option, References } from "effect"
import { help, run, wantsHelp } from "../AdminCli.ts"
import * as BackupCli from "../BackupCli.ts"
import { layerInfra } from "../Infra.ts"

// One JSON document on stdout and exit 0; on failure {"error":{code,message}} on stderr, exit 1.
// Logs are silenced so nothing else reaches stdout.
// backup and doctor bring their own layers (BackupCli.ts): the database as it is, no secrets needed
const argv = process.argv.slice(2)
const command: Effect.Effect<unknown, unknown> = BackupCli.handles(argv)
  ? BackupCli.run(argv)
  : run(argv).pipe(Effect.provide(layerInfra))
const main = command.pipe(
  Effect.flatMap((doc) =>
    Effect.sync(() => {
      process.stdout.write(JSON.stringify(doc) + "\n")
      // a report that found a problem (doctor, backup verify) is printed and exits 1
      if (BackupCli.foundProblems(doc)) process.exitCode = 1
    })
  ),
  Effect.catchCause((cause) =>
    Effect.sync(() => {
      const failure = Option.getOrUndefined(Cause.findErrorOption(cause))
      const error = failure instanceof Errors.ApiFailure
        ? { code: failure.code, message: failure.message }
        : failure instanceof InstallationSecretRefused
        // not the installation's secrets: nothing this CLI prints would work (a key the API refuses)
        ? { code: "service_unavailable", message: failure.message }
        : { code: "internal_error", message: Cause.pretty(cause).split("\n")[0] }
      process.stderr.write(JSON.stringify({ error }) + "\n")
      process.exitCode = 1
    })
  ),
  Effect.provideService(References.MinimumLogLevel, "None")
)

if (wantsHelp(process.argv.slice(2))) process.stdout.write(help)
else {NodeRuntime.runMain(main, {
    disableErrorReporting: true,
    teardown: (_exit, onExit) => onExit(process.exitCode === 1 ? 1 : 0)
  })}
