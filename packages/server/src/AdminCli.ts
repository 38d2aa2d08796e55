import * as InstallationSecrets from "@pic2video/cluster/config/InstallationSecrets"
import * as PublicBaseUrl from "@pic2video/cluster/config/PublicBaseUrl"
import * as Integrations from "@pic2video/cluster/drive/Integrations"
import * as ClusterStatus from "@pic2video/cluster/entities/ClusterStatus"
import * as MediaInference from "@pic2video/cluster/media/MediaInference"
import * as MediaLibrary from "@pic2video/cluster/media/MediaLibrary"
import * as ApiKeys from "@pic2video/cluster/repositories/ApiKeysRepo"
import { MediaRepo } from "@pic2video/cluster/repositories/MediaRepo"
import * as Workspaces from "@pic2video/cluster/repositories/WorkspacesRepo"
import { WorkspacesRepo } from "@pic2video/cluster/repositories/WorkspacesRepo"
import * as PortalSessionService from "@pic2video/cluster/services/PortalSessionService"
import * as RenderService from "@pic2video/cluster/services/RenderService"
import { Errors, Plans, Scopes } from "@pic2video/domain"
import { DateTime, Effect } from "effect"

/**
 * The operator CLI (contract §2): the portal's stand-in for scripts and tests. Each command
 * returns one JSON document; failures are catalogue codes.
 */
type Flags = Record<string, string>

const usage = (message: string) => Errors.fail("validation_failed", message)

export const parseArgs = (
  argv: ReadonlyArray<string>
): { readonly positional: ReadonlyArray<string>; readonly flags: Flags } => {
  const positional: Array<string> = []
  const flags: Flags = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === "--help" || arg === "-h") flags.help = "true" // a switch: it takes no value
    else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=")
      if (eq > 0) flags[arg.slice(2, eq)] = arg.slice(eq + 1)
      else if (i + 1 < argv.length) flags[arg.slice(2)] = argv[++i]
      else throw usage(`${arg} needs a value`)
    } else positional.push(arg)
  }
  return { positional, flags }
}

const known = (flags: Flags, allowed: ReadonlyArray<string>) => {
  const extra = Object.keys(flags).filter((f) => !allowed.includes(f))
  return extra.length === 0 ? Effect.void : Effect.fail(usage(`unknown option --${extra[0]}`))
}

const nonNegativeInt = (flag: string, value: string | undefined) =>
  value === undefined
    ? Effect.succeed(undefined)
    : /^\d+$/.test(value) && Number.isSafeInteger(Number(value))
    ? Effect.succeed(Number(value))
    : Effect.fail(usage(`--${flag} must be a whole number`))

const included = (value: string | undefined) =>
  value === undefined
    ? Effect.succeed(undefined)
    : value === "unlimited"
    ? Effect.succeed(null)
    : nonNegativeInt("included", value)

const plan = (value: string | undefined) =>
  value === undefined
    ? Effect.succeed(undefined)
    : (Plans.plans as ReadonlyArray<string>).includes(value)
    ? Effect.succeed(value as Plans.Plan)
    : Effect.fail(usage(`--plan must be one of ${Plans.plans.join(", ")}`))

const bool = (flag: string, value: string | undefined) =>
  value === undefined ? Effect.succeed(undefined) : value === "true" ? Effect.succeed(true) : value === "false" ?
    Effect.succeed(false)
    : Effect.fail(usage(`--${flag} must be true or false`))

const one = (positional: ReadonlyArray<string>, what: string) =>
  positional.length === 3 ? Effect.succeed(positional[2]) : Effect.fail(usage(`expected exactly one ${what}`))

/**
 * `admin --help` (and `-h`, `help`): text, not a document, no line over 80 columns (a usage that does
 * not fit continues under its first option). Add a line here with each new command.
 */
export const help = `Usage: npm run admin -- COMMAND [OPTIONS]
Environment: DATABASE_URL and DATA_DIR (or API_KEY_HASH_KEY and
TOKEN_ENCRYPTION_KEY), as the installation's service processes have them.

Each command prints one JSON document on stdout and exits 0; on failure
{"error":{"code","message"}} on stderr, exit 1.

  workspace create --name NAME --plan PLAN [--included N|unlimited]
                   [--storage-budget-bytes N]
  workspace update WORKSPACE_ID [--plan PLAN] [--status active|inactive]
                   [--api-enabled true|false] [--included N|unlimited]
                   [--storage-budget-bytes N]
  workspace show WORKSPACE_ID
  key create WORKSPACE_ID --scopes SCOPE,... [--name NAME] [--spend-cap-24h N]
             [--creates-per-minute N] [--reads-per-minute N]
             [--uploads-per-minute N] [--expires-at ISO-8601]
  key revoke KEY_ID
  key list WORKSPACE_ID
  media archive MEDIA_ID
  media show MEDIA_ID
      the media document plus what the vision model inferred
  render cancel RENDER_ID
  portal link WORKSPACE_ID [--ttl-minutes N]
      a single-use sign-in link to the account portal (default 15 minutes)
  cluster status
      runners, shards, renders and imports in flight, queue depth
  secrets reencrypt
      stored drive tokens encrypted again under TOKEN_ENCRYPTION_KEY (the end
      of a rotation: docs/operations.md, "Rotating secrets")
  backup create DIR [--with-secrets true|false]
      the database (one snapshot) and the blobs its rows name, into a new
      DIR with a manifest of row counts and SHA-256s (docs/operations.md,
      "Backup and restore"); DATA_DIR/secrets too with --with-secrets true
  backup verify DIR
      recomputes the manifest's counts and hashes from DIR's files
  backup restore DIR
      into an empty database and blob store (a new installation)
  doctor [--min-age-seconds N]
      rows whose blob is missing, blobs no row names (older than N s, 60);
      exits 1 when it finds one, as backup verify does on a mismatch

Scopes: ${Scopes.scopes.join(", ")}.
Plans: ${Plans.plans.join(", ")}.
API users have their own CLI: npx p2v --help.
`

export const wantsHelp = (argv: ReadonlyArray<string>) =>
  argv[0] === "help" || argv.includes("--help") || argv.includes("-h")

export const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { flags, positional } = yield* Effect.try({
      try: () => parseArgs(argv),
      catch: (e) => e as Errors.ApiFailure
    })
    const command = `${positional[0] ?? ""} ${positional[1] ?? ""}`
    switch (command) {
      case "workspace create": {
        yield* known(flags, ["name", "plan", "included", "storage-budget-bytes"])
        if (positional.length !== 2) return yield* Effect.fail(usage("workspace create takes no positional arguments"))
        const p = yield* plan(flags.plan)
        if (p === undefined) return yield* Effect.fail(usage("--plan is required"))
        if (flags.name === undefined || flags.name === "") return yield* Effect.fail(usage("--name is required"))
        const row = yield* (yield* WorkspacesRepo).create(flags.name, {
          plan: p,
          included: yield* included(flags.included),
          storageBudgetBytes: yield* nonNegativeInt("storage-budget-bytes", flags["storage-budget-bytes"])
        })
        return Workspaces.toDocument(row, yield* DateTime.nowAsDate)
      }
      case "workspace update": {
        yield* known(flags, ["plan", "status", "api-enabled", "included", "storage-budget-bytes"])
        const id = yield* one(positional, "WORKSPACE_ID")
        const status = flags.status
        if (status !== undefined && status !== "active" && status !== "inactive") {
          return yield* Effect.fail(usage("--status must be active or inactive"))
        }
        const row = yield* (yield* WorkspacesRepo).update(id, {
          plan: yield* plan(flags.plan),
          status,
          apiEnabled: yield* bool("api-enabled", flags["api-enabled"]),
          included: yield* included(flags.included),
          storageBudgetBytes: yield* nonNegativeInt("storage-budget-bytes", flags["storage-budget-bytes"])
        })
        return Workspaces.toDocument(row, yield* DateTime.nowAsDate)
      }
      case "workspace show": {
        yield* known(flags, [])
        return Workspaces.toDocument(
          yield* (yield* WorkspacesRepo).get(yield* one(positional, "WORKSPACE_ID")),
          yield* DateTime.nowAsDate
        )
      }
      case "key create": {
        yield* known(flags, [
          "scopes",
          "name",
          "spend-cap-24h",
          "creates-per-minute",
          "reads-per-minute",
          "uploads-per-minute",
          "expires-at"
        ])
        const workspaceId = yield* one(positional, "WORKSPACE_ID")
        if (flags.scopes === undefined) return yield* Effect.fail(usage("--scopes is required"))
        const expiresAt = flags["expires-at"] === undefined ? undefined : new Date(flags["expires-at"])
        if (expiresAt !== undefined && Number.isNaN(expiresAt.getTime())) {
          return yield* Effect.fail(usage("--expires-at must be an ISO 8601 timestamp"))
        }
        return yield* ApiKeys.create({
          workspaceId,
          scopes: flags.scopes.split(",").map((s) => s.trim()).filter((s) => s !== ""),
          name: flags.name,
          spendCap24h: yield* nonNegativeInt("spend-cap-24h", flags["spend-cap-24h"]),
          createsPerMinute: yield* nonNegativeInt("creates-per-minute", flags["creates-per-minute"]),
          readsPerMinute: yield* nonNegativeInt("reads-per-minute", flags["reads-per-minute"]),
          uploadsPerMinute: yield* nonNegativeInt("uploads-per-minute", flags["uploads-per-minute"]),
          expiresAt
        })
      }
      case "key revoke": {
        yield* known(flags, [])
        return yield* ApiKeys.revoke(yield* one(positional, "KEY_ID"))
      }
      case "key list": {
        yield* known(flags, [])
        return yield* ApiKeys.list(yield* one(positional, "WORKSPACE_ID"))
      }
      case "media archive": {
        yield* known(flags, [])
        const row = yield* MediaLibrary.archive(yield* one(positional, "MEDIA_ID"))
        return MediaLibrary.toDocument(row, yield* PublicBaseUrl.forOperator)
      }
      case "media show": {
        yield* known(flags, [])
        const id = yield* one(positional, "MEDIA_ID")
        const row = yield* (yield* MediaRepo).byId(id)
        if (row === undefined) return yield* Effect.fail(Errors.fail("unknown_media", `no media ${id}`))
        // the public document, plus what the vision model inferred (null while pending or failed)
        return {
          ...MediaLibrary.toDocument(row, yield* PublicBaseUrl.forOperator),
          inferred: yield* MediaInference.stored(id)
        }
      }
      case "render cancel": {
        yield* known(flags, [])
        const row = yield* RenderService.cancel(yield* one(positional, "RENDER_ID"))
        return RenderService.renderDocument(row, yield* PublicBaseUrl.forOperator)
      }
      case "cluster status": {
        yield* known(flags, [])
        if (positional.length !== 2) return yield* Effect.fail(usage("cluster status takes no positional arguments"))
        return yield* ClusterStatus.status
      }
      case "portal link": {
        yield* known(flags, ["ttl-minutes"])
        const workspaceId = yield* one(positional, "WORKSPACE_ID")
        const ttl = (yield* nonNegativeInt("ttl-minutes", flags["ttl-minutes"])) ??
          PortalSessionService.defaultLinkTtlMinutes
        if (ttl < 1 || ttl > PortalSessionService.maxLinkTtlMinutes) {
          return yield* Effect.fail(usage(`--ttl-minutes must be from 1 to ${PortalSessionService.maxLinkTtlMinutes}`))
        }
        const publicBaseUrl = yield* PublicBaseUrl.forOperator
        return yield* PortalSessionService.PortalSessionService.use((sessions) =>
          sessions.issueLink(workspaceId, ttl, publicBaseUrl)
        ).pipe(Effect.provide(PortalSessionService.PortalSessionService.layer))
      }
      case "secrets reencrypt": {
        yield* known(flags, [])
        if (positional.length !== 2) return yield* Effect.fail(usage("secrets reencrypt takes no positional arguments"))
        return yield* Integrations.reencryptAll.pipe(Effect.provide(InstallationSecrets.layerTokenCipher))
      }
      default:
        return yield* Effect.fail(usage(
          "commands: workspace create|update|show, key create|revoke|list, media archive|show, render cancel, portal link, cluster status, secrets reencrypt, backup create|verify|restore, doctor"
        ))
    }
  })
