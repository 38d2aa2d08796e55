import m0001 from "./0001_schema.ts"
import m0002 from "./0002_service_settings.ts"
import m0003 from "./0003_verbatim_json.ts"

export const migrations = {
  "0001_schema": m0001,
  "0002_service_settings": m0002,
  "0003_verbatim_json": m0003
}
