import { HttpApi } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { Api } from "../src/api/Api.ts"
import * as Errors from "../src/Errors.ts"

const endpoints = (): Array<string> => {
  const names: Array<string> = []
  HttpApi.reflect(Api, { onGroup() {}, onEndpoint: ({ endpoint }) => void names.push(endpoint.identifier) })
  return names
}

describe("the error catalogue", () => {
  it("names only operations the API defines, so an endpoint's error set cannot silently go missing", () => {
    const defined = endpoints()
    expect(Errors.operationNames.filter((name) => !defined.includes(name))).toEqual([])
  })

  it("gives every operation the codes every authenticated request can meet, and its own", () => {
    expect(Errors.codesOf("getUsage")).toEqual(
      Errors.errorCodes.filter((c) => Errors.ErrorCatalogue[c].answeredBy === "every")
    )
    expect(Errors.codesOf("getRender")).toContain("render_not_found")
    expect(Errors.codesOf("getRender")).not.toContain("unknown_media")
    expect(Errors.codesOf("createRender")).toEqual(
      expect.arrayContaining(["spend_cap_reached", "quota_exceeded", "idempotency_in_progress"])
    )
  })
})
