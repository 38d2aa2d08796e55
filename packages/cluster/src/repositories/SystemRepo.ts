import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/** The service's own rows (`service_settings`) and the database's readiness. */
export class SystemRepo extends Context.Service<SystemRepo>()("pic2video/SystemRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = SqlSchema.void({
      Request: Schema.Struct({ name: Schema.String, value: Schema.String }),
      // the database's now(): nothing reads updated_at but an operator looking at the table
      execute: (r) =>
        sql`
          INSERT INTO service_settings (name, value) VALUES (${r.name}, ${r.value})
          ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
    })
    const select = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ value: Schema.String }),
      execute: (name) => sql`SELECT value FROM service_settings WHERE name = ${name}`
    })

    return {
      /** The database answers: one trivial statement; failures are the caller's to judge (readiness). */
      ping: Effect.asVoid(sql`SELECT 1`),
      setSetting: (name: string, value: string) => upsert({ name, value }).pipe(operation("SystemRepo.setSetting")),
      setting: (name: string) =>
        select(name).pipe(Effect.map((row) => Option.getOrUndefined(row)?.value), operation("SystemRepo.setting"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
