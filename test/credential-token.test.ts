/**
 * The one reading of a request's credential token (domain/accounts/credentialToken.ts) that every way in shares: the
 * HttpApi security middlewares, the inference route ahead of the router, the maintainer's bearer token.
 */
import { describe, expect, it } from "@effect/vitest"
import { bearerTokenOf, credentialTokenOf } from "../domain/accounts/credentialToken.ts"

describe("bearerTokenOf", () => {
  it("reads the scheme case-insensitively, after one or more spaces, and trims the token", () => {
    expect(bearerTokenOf("Bearer ct_live_a")).toBe("ct_live_a")
    expect(bearerTokenOf("bearer ct_live_a")).toBe("ct_live_a")
    expect(bearerTokenOf("BEARER   ct_live_a  ")).toBe("ct_live_a")
  })

  it("is undefined for no header, another scheme, a scheme without a token, or a scheme glued to its token", () => {
    expect(bearerTokenOf(undefined)).toBeUndefined()
    expect(bearerTokenOf("Basic dXNlcjpwYXNz")).toBeUndefined()
    expect(bearerTokenOf("Bearer ")).toBeUndefined()
    expect(bearerTokenOf("Bearer    ")).toBeUndefined()
    expect(bearerTokenOf("Bearerct_live_a")).toBeUndefined()
    expect(bearerTokenOf("ct_live_a")).toBeUndefined()
  })
})

describe("credentialTokenOf", () => {
  it("takes the bearer token first, and x-api-key only where the endpoint takes it", () => {
    expect(credentialTokenOf({ authorization: "Bearer ct_live_a", "x-api-key": "ct_live_b" }, true)).toBe("ct_live_a")
    expect(credentialTokenOf({ "x-api-key": " ct_live_b " }, true)).toBe("ct_live_b")
    expect(credentialTokenOf({ "x-api-key": "ct_live_b" }, false)).toBeUndefined()
    expect(credentialTokenOf({ authorization: "Basic abc", "x-api-key": "ct_live_b" }, true)).toBe("ct_live_b")
    expect(credentialTokenOf({ "x-api-key": "  " }, true)).toBeUndefined()
    expect(credentialTokenOf({}, true)).toBeUndefined()
  })
})
