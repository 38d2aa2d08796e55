import * as Backup from "@pic2video/cluster/backup/Backup"
import * as Doctor from "@pic2video/cluster/backup/Doctor"
import * as AppConfig from "@pic2video/cluster/config/AppConfig"
import * as Database from "@pic2video/cluster/database/Database"
import { BackupRepo } from "@pic2video/cluster/repositories/BackupRepo"
import * as BlobStore from "@pic2video/cluster/storage/BlobStore"
import { Errors } from "@pic2video/domain"
import { Effect, Layer } from "effect"
import { parseArgs } from "./AdminCli.ts"

/**
 * The operator CLI's `backup create | verify | restore` and `doctor` (docs/operations.md "Backup and
 * restore"). They run on the database as it is, never migrated first: a backup leaves the database
 * as it found it (an installation about to be upgraded is backed up by the new release's CLI as
 * well), a restore writes the backup's own schema, and doctor only reads. `backup verify` reads
 * the backup's files alone.
 */
const layerAsIs = Layer.mergeAll(BackupRepo.layer, BlobStore.layer).pipe(
  Layer.provideMerge(Database.layerClient),
  Layer.provideMerge(AppConfig.layer)
)

const usage = (message: string) => Errors.fail("validation_failed", message)

export const handles = (argv: ReadonlyArray<string>) => argv[0] === "backup" || argv[0] === "doctor"

/** A report that found a problem: printed as any document, and the CLI exits 1. */
export const foundProblems = (doc: unknown) =>
  typeof doc === "object" && doc !== null && "ok" in doc && doc.ok === false

const onlyFlags = (flags: Record<string, string>, allowed: ReadonlyArray<string>) => {
  const extra = Object.keys(flags).filter((f) => !allowed.includes(f))
  return extra.length === 0 ? Effect.void : Effect.fail(usage(`unknown option --${extra[0]}`))
}

const directory = (positional: ReadonlyArray<string>, command: string) =>
  positional.length === 3 && positional[2] !== ""
    ? Effect.succeed(positional[2])
    : Effect.fail(usage(`${command} takes exactly one DIR`))

export const run = (argv: ReadonlyArray<string>): Effect.Effect<unknown, unknown> =>
  Effect.gen(function*() {
    const { flags, positional } = yield* Effect.try({
      try: () => parseArgs(argv),
      catch: (e) => e instanceof Errors.ApiFailure ? e : usage(String(e))
    })
    if (positional[0] === "doctor") {
      yield* onlyFlags(flags, ["min-age-seconds"])
      if (positional.length !== 1) return yield* Effect.fail(usage("doctor takes no positional arguments"))
      const minAge = flags["min-age-seconds"] ?? "60"
      if (!/^\d+$/.test(minAge)) return yield* Effect.fail(usage("--min-age-seconds must be a whole number"))
      return yield* Doctor.check({ minAgeSeconds: Number(minAge) }).pipe(Effect.provide(layerAsIs))
    }
    switch (positional[1]) {
      case "create": {
        yield* onlyFlags(flags, ["with-secrets"])
        const withSecrets = flags["with-secrets"] ?? "false"
        if (withSecrets !== "true" && withSecrets !== "false") {
          return yield* Effect.fail(usage("--with-secrets must be true or false"))
        }
        const dir = yield* directory(positional, "backup create")
        return yield* Backup.create(dir, { withSecrets: withSecrets === "true" }).pipe(Effect.provide(layerAsIs))
      }
      case "verify": {
        yield* onlyFlags(flags, [])
        return yield* Backup.verify(yield* directory(positional, "backup verify"))
      }
      case "restore": {
        yield* onlyFlags(flags, [])
        const dir = yield* directory(positional, "backup restore")
        return yield* Backup.restore(dir).pipe(Effect.provide(layerAsIs))
      }
      default:
        return yield* Effect.fail(usage("commands: backup create|verify|restore DIR, doctor"))
    }
  })
