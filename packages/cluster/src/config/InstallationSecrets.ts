import { Config, Context, Data, Effect, Layer, Option, Predicate, Redacted } from "effect"
import * as Runtime from "effect/Runtime"
import { Buffer } from "node:buffer"
import { createHmac } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { withSchemaLock } from "../database/Database.ts"
import * as TokenCipher from "../drive/TokenCipher.ts"
import { SystemRepo } from "../repositories/SystemRepo.ts"
import { AppConfig } from "./AppConfig.ts"
import { loadOrCreateSecret } from "./Secrets.ts"

/**
 * The installation's two secrets: the key-hashing secret (API keys and portal tokens are
 * stored as its HMAC) and the drive-token encryption key. Every process of an installation must hold
 * the same ones, or keys minted by one are refused by another: the database records a fingerprint of
 * each when the installation is first set up, and a process whose secret does not match refuses to
 * start with one line naming the variable.
 *
 * A secret comes from its variable (base64 of 32 bytes), else from its file in `DATA_DIR/secrets/`,
 * which the first process of a new installation writes. During a rotation (docs/operations.md,
 * "Rotating secrets") `<VARIABLE>_PREVIOUS` holds the other value: both are accepted, the current one
 * is used for everything new, and the recorded fingerprint moves to the current one.
 */
interface SecretValues {
  readonly current: Uint8Array
  /** accepted too, during a rotation window */
  readonly previous: Uint8Array | undefined
}

interface InstallationSecretsShape {
  readonly keyHash: SecretValues
  readonly tokenKey: SecretValues
}

export class InstallationSecrets
  extends Context.Service<InstallationSecrets, InstallationSecretsShape>()("pic2video/InstallationSecrets")
{}

/**
 * A process that cannot use the installation's secrets. Its message is the one line the process
 * prints (Main.ts, the admin CLI); the runtime's own report, a stack, is left out.
 */
export class InstallationSecretRefused extends Data.TaggedError("InstallationSecretRefused")<{
  readonly message: string
}> {
  override readonly [Runtime.errorReported] = false
}

interface Spec {
  readonly variable: string
  readonly file: string
  readonly what: string
  readonly setting: string
  readonly parse: (text: string) => Uint8Array | undefined
}

const base64Key = (text: string) => {
  const key = Buffer.from(text.trim(), "base64")
  return key.length === 32 ? new Uint8Array(key) : undefined
}

const specs = {
  keyHash: {
    variable: "API_KEY_HASH_KEY",
    file: "api-key-hash.key",
    what: "key-hashing secret",
    setting: "api_key_hash_key",
    parse: base64Key
  },
  tokenKey: {
    variable: "TOKEN_ENCRYPTION_KEY",
    file: "token-encryption.key",
    what: "drive-token encryption key",
    setting: "token_encryption_key",
    parse: (text: string) => {
      const key = TokenCipher.parseKey(text)
      return key === undefined ? undefined : Redacted.value(key)
    }
  }
} satisfies Record<keyof InstallationSecretsShape, Spec>

/**
 * What the database records of a secret: an HMAC of a fixed label under it. It tells two secrets
 * apart and says nothing of the secret itself.
 */
export const fingerprint = (secret: Uint8Array) =>
  createHmac("sha256", secret).update("pic2video installation secret fingerprint v1").digest("base64url")

const refused = (message: string) => new InstallationSecretRefused({ message })

/** A variable's value; an empty one counts as unset (compose files often pass `VAR=`). */
const fromVariable = (spec: Spec, variable: string) =>
  Effect.gen(function*() {
    const text = yield* Config.option(Config.Redacted(variable))
    const value = Option.getOrUndefined(Option.map(text, Redacted.value))
    if (value === undefined || value.trim() === "") return undefined
    return spec.parse(value) ??
      (yield* Effect.fail(
        refused(
          `${variable} must be 32 bytes, base64-encoded (openssl rand -base64 32): fix ${variable} and start again`
        )
      ))
  })

/** The key file in DATA_DIR, read only: undefined when there is none. */
const fromFile = (spec: Spec, file: string) =>
  Effect.flatMap(
    Effect.promise(() =>
      fs.readFile(file, "utf8").catch((e: unknown) =>
        Predicate.hasProperty(e, "code") && e.code === "ENOENT" ? undefined : Promise.reject(e)
      )
    ),
    (text) => {
      if (text === undefined) return Effect.succeed(undefined)
      const key = spec.parse(text)
      return key === undefined
        ? Effect.fail(refused(`${file} does not hold a 32-byte base64 key: set ${spec.variable}, or restore the file`))
        : Effect.succeed(key)
    }
  )

/**
 * One secret, checked against the database's record (run under the schema lock, so the first
 * processes of a new installation agree on one secret).
 */
const settle = (spec: Spec, dataDir: string) =>
  Effect.gen(function*() {
    const system = yield* SystemRepo
    const file = Path.join(dataDir, "secrets", spec.file)
    const previousVariable = `${spec.variable}_PREVIOUS`
    const fromEnv = yield* fromVariable(spec, spec.variable)
    const given = fromEnv ?? (yield* fromFile(spec, file))
    // what the refusal names: the variable, or the file read in its place
    const source = fromEnv === undefined ? `${spec.variable} is not set and ${file}` : spec.variable
    const previousGiven = yield* fromVariable(spec, previousVariable)
    const recordedName = `${spec.setting}_fingerprint`
    const recordedPreviousName = `${spec.setting}_previous_fingerprint`
    const recorded = yield* system.setting(recordedName)

    if (recorded === undefined) {
      // a new installation, or one made before fingerprints: the first process's secret is adopted
      const current = given ?? (yield* loadOrCreateSecret(dataDir, spec.file, undefined))
      yield* system.setSetting(recordedName, fingerprint(current))
      yield* Effect.logInfo(`recorded the fingerprint of the installation's ${spec.what}`)
      return { current, previous: previousGiven } satisfies SecretValues
    }
    const fix =
      `set ${spec.variable} (or DATA_DIR) as the installation's other processes have it; to change the secret, follow "Rotating secrets" in docs/operations.md`
    if (given === undefined) {
      return yield* Effect.fail(refused(
        `${spec.variable} is not set and ${file} does not exist, so this process does not have the installation's ${spec.what}: ${fix}`
      ))
    }
    const previous = previousGiven !== undefined && fingerprint(previousGiven) !== fingerprint(given)
      ? previousGiven
      : undefined
    const values: SecretValues = { current: given, previous }
    if (fingerprint(given) === recorded) return values
    if (previous !== undefined && fingerprint(previous) === recorded) {
      if (fingerprint(given) === (yield* system.setting(recordedPreviousName))) {
        // the switch was made, and this process has the first step's settings (the old value current,
        // the new one accepted): it accepts both and records nothing, so the switch stands, and it
        // takes the recorded (new) value as its current one — keys and tokens it stores again then go
        // under the installation's value, not back under the old one, while processes of both steps run
        return { current: previous, previous: given } satisfies SecretValues
      }
      // the rotation's switch: from now on the new value is the installation's
      yield* system.setSetting(recordedPreviousName, recorded)
      yield* system.setSetting(recordedName, fingerprint(given))
      yield* Effect.logInfo(`${spec.variable}: recorded the new ${spec.what}; ${previousVariable} is accepted too`)
      return values
    }
    return yield* Effect.fail(refused(
      `${source} is not the installation's ${spec.what} (the database records another${
        previous === undefined ? "" : `, nor is ${previousVariable}`
      }): ${fix}`
    ))
  })

/** Both secrets, checked; a process that cannot use them fails with InstallationSecretRefused. */
export const layer = Layer.effect(
  InstallationSecrets,
  Effect.gen(function*() {
    const { dataDir } = yield* AppConfig
    return yield* withSchemaLock(Effect.gen(function*() {
      const keyHash = yield* settle(specs.keyHash, dataDir)
      const tokenKey = yield* settle(specs.tokenKey, dataDir)
      return { keyHash, tokenKey } satisfies InstallationSecretsShape
    })).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e)))
  })
).pipe(Layer.provide(SystemRepo.layer))

/** The drive-token cipher of the installation's key (and, during a rotation, its previous one). */
export const layerTokenCipher: Layer.Layer<TokenCipher.TokenCipher, never, InstallationSecrets> = Layer.effect(
  TokenCipher.TokenCipher,
  Effect.flatMap(InstallationSecrets, ({ tokenKey }) =>
    TokenCipher.make(
      Redacted.make(tokenKey.current),
      tokenKey.previous === undefined ? undefined : Redacted.make(tokenKey.previous)
    ).pipe(Effect.orDie))
)
