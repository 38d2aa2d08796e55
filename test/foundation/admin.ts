import { Errors } from "@pic2video/domain"
import { run } from "@pic2video/server/AdminCli"
import { layerInfra } from "@pic2video/server/Server"
import { Cause, ConfigProvider, Exit, Layer, ManagedRuntime, Option, References } from "effect"
import type { Json } from "../support/limits.ts"

/**
 * The operator CLI's own command code (`Cli.run` on `layerInfra`, exactly what bin/admin.ts runs),
 * kept in the test process so setting up fixtures costs milliseconds instead of a Node start per
 * command (about 2 s of CPU each on two cores). The CLI binary itself is tested in cli.test.ts.
 */
export interface Admin {
  /** the command's JSON document; throws on failure */
  readonly ok: (...args: Array<string>) => Promise<Json>
  /** the document, or the failure's `{error:{code,message}}` */
  readonly attempt: (...args: Array<string>) => Promise<{ readonly ok: boolean; readonly json: Json }>
  readonly dispose: () => Promise<void>
}

export const inProcessAdmin = (env: Record<string, string>): Admin => {
  const runtime = ManagedRuntime.make(
    layerInfra.pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
    )
  )
  const attempt = async (...args: Array<string>) => {
    const exit = await runtime.runPromiseExit(run(args))
    if (Exit.isSuccess(exit)) return { ok: true, json: JSON.parse(JSON.stringify(exit.value)) }
    const failure = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
    const error = failure instanceof Errors.ApiFailure
      ? { code: failure.code, message: failure.message }
      : { code: "internal_error", message: Cause.pretty(exit.cause) }
    return { ok: false, json: { error } }
  }
  return {
    attempt,
    ok: async (...args) => {
      const r = await attempt(...args)
      if (!r.ok) throw new Error(`admin ${args.join(" ")} failed: ${JSON.stringify(r.json)}`)
      return r.json
    },
    dispose: () => runtime.dispose()
  }
}

export const allScopes = "media:read,media:write,renders:create,renders:read"

export interface Keyed {
  readonly workspace: Json
  readonly key: Json
  readonly secret: string
}

/** A workspace of `plan` and one key (all scopes unless `--scopes` is among keyArgs). */
export const keyed = async (
  admin: Admin,
  plan: string,
  keyArgs: Array<string> = [],
  workspaceArgs: Array<string> = []
): Promise<Keyed> => {
  const workspace = await admin.ok("workspace", "create", "--name", `Test ${plan}`, "--plan", plan, ...workspaceArgs)
  const scopes = keyArgs.includes("--scopes") ? [] : ["--scopes", allScopes]
  const key = await admin.ok("key", "create", workspace.id, ...scopes, ...keyArgs)
  return { workspace, key, secret: key.secret }
}
