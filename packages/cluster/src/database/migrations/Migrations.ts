import m0001 from "./0001_schema.ts"
import m0002 from "./0002_service_settings.ts"
import m0003 from "./0003_verbatim_json.ts"
import m0004 from "./0004_portal.ts"
import m0005 from "./0005_media_inference.ts"
import m0006 from "./0006_posters_batches.ts"

export const migrations = {
  "0001_schema": m0001,
  "0002_service_settings": m0002,
  "0003_verbatim_json": m0003,
  "0004_portal": m0004,
  "0005_media_inference": m0005,
  "0006_posters_batches": m0006
}
