import m0001 from "./0001_schema.ts"

export const migrations = {
  "0001_schema": m0001
}
