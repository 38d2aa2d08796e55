import { Option, Schema, SchemaGetter } from "effect"

/**
 * An optional field whose key may be missing or its value `undefined`, and on the wire is only ever
 * missing or a value. Effect 4's `Schema.optional` writes `undefined` as `null` in JSON (and documents
 * the field as nullable); this one drops the key, as JSON.stringify does, and documents the field as
 * its value's schema, not required.
 */
export const Optional = <S extends Schema.Top>(self: S) =>
  Schema.optionalKey(self).pipe(
    Schema.decodeTo(Schema.optional(Schema.toType(self)), {
      decode: SchemaGetter.passthroughSubtype<S["Type"] | undefined, S["Type"]>(),
      encode: SchemaGetter.transformOptional<S["Type"], S["Type"] | undefined>(
        Option.filter((v): v is S["Type"] => v !== undefined)
      )
    })
  )
