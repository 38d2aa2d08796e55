import m0001 from "./0001_schema.ts"
import m0002 from "./0002_service_settings.ts"

export const migrations = {
  "0001_schema": m0001,
  "0002_service_settings": m0002
}
