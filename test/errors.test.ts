/**
 * The error table of SPEC.md "Errors": every code, its status and its type, and the envelope each one
 * is shown in.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as Errors from "../domain/errors.ts"
import { errorWire, renderError, renderErrorParts } from "../src/http/errorEnvelope.ts"

// Transcribed from SPEC.md, in its order.
const specTable: ReadonlyArray<readonly [code: string, status: number, type: string]> = [
  ["unauthorized", 401, "invalid_request_error"],
  ["forbidden", 403, "forbidden"],
  ["org_role_required", 403, "forbidden"],
  ["invalid_signature", 401, "invalid_request_error"],
  ["signature_reused", 409, "invalid_request_error"],
  ["invalid_api_key", 401, "invalid_request_error"],
  ["api_key_frozen", 403, "forbidden"],
  ["api_key_revoked", 401, "invalid_request_error"],
  ["invalid_app_grant", 401, "invalid_request_error"],
  ["app_grant_frozen", 403, "forbidden"],
  ["app_grant_revoked", 401, "invalid_request_error"],
  ["model_restricted", 403, "forbidden"],
  ["bad_request", 400, "invalid_request_error"],
  ["validation_failed", 422, "validation_error"],
  ["method_not_allowed", 405, "invalid_request_error"],
  ["payload_too_large", 413, "invalid_request_error"],
  ["not_found", 404, "not_found"],
  ["already_exists", 409, "conflict"],
  ["conflict", 409, "conflict"],
  ["invitation_expired", 409, "conflict"],
  ["invitation_revoked", 409, "conflict"],
  ["invitation_already_accepted", 409, "conflict"],
  ["insufficient_balance", 402, "insufficient_quota"],
  ["spending_limit_reached", 429, "rate_limit_error"],
  ["all_keys_exhausted", 502, "server_error"],
  ["rate_limited", 429, "rate_limit_error"],
  ["stream_interrupted", 500, "server_error"],
  ["contract_error", 500, "server_error"],
  ["internal_error", 500, "server_error"],
  ["service_unavailable", 503, "server_error"]
]

// Not in SPEC.md's table: refusals of a request head too large to route (docs/decisions.md, issue 8).
const projectTable: ReadonlyArray<readonly [code: string, status: number, type: string]> = [
  ["uri_too_long", 414, "invalid_request_error"],
  ["headers_too_large", 431, "invalid_request_error"]
]

/** A representative instance of each class (the ones with structured details need them). */
const sample = (cls: Errors.ApiErrorClass): Errors.ApiError => {
  const message = `sample ${cls._tag}`
  switch (cls) {
    case Errors.OrgRoleRequired:
      return new Errors.OrgRoleRequired({ message, details: { minimumRole: "admin", actualRole: "member" } })
    case Errors.ValidationFailed:
      return Errors.ValidationFailed.fromIssues([{ param: "model", path: ["model"], message: "is missing" }])
    case Errors.MethodNotAllowed:
      return new Errors.MethodNotAllowed({ message, details: { allow: ["GET", "HEAD"] } })
    case Errors.PayloadTooLarge:
      return new Errors.PayloadTooLarge({ message, details: { limitBytes: 4194304 } })
    case Errors.UriTooLong:
      return new Errors.UriTooLong({ message, details: { limitBytes: 8192 } })
    case Errors.HeadersTooLarge:
      return new Errors.HeadersTooLarge({ message, details: { limitBytes: 16384 } })
    case Errors.SpendingLimitReached:
      return new Errors.SpendingLimitReached({ message, details: { scope: "key_daily" } })
    case Errors.RateLimited:
      return new Errors.RateLimited({ message, details: { retryAfterSeconds: 2.2 } })
    case Errors.ContractError:
      return new Errors.ContractError({ message, details: { chainFailure: { reason: "confirmation_pending" } } })
    default:
      return new (cls as unknown as new (props: { message: string }) => Errors.ApiError)({ message })
  }
}

describe("the error table", () => {
  it("has exactly the 30 codes of SPEC.md, one class each, then the 2 this project adds", () => {
    expect(Errors.ApiErrorClasses).toHaveLength(32)
    const codes = Errors.ApiErrorClasses.map((cls) => Errors.ErrorTable[cls._tag].code)
    expect(codes).toEqual([...specTable, ...projectTable].map(([code]) => code))
    expect(new Set(codes).size).toBe(32)
  })

  it.each([...specTable, ...projectTable])("%s is %i %s", (code, status, type) => {
    const cls = Errors.ApiErrorClasses.find((c) => Errors.ErrorTable[c._tag].code === code)!
    const spec = Errors.errorSpec(sample(cls))
    expect(spec).toEqual({ code, status, type })
  })

  it("renders each code as the envelope with its status", () => {
    for (const cls of Errors.ApiErrorClasses) {
      const error = sample(cls)
      const response = renderError(error)
      const { code, status, type } = Errors.errorSpec(error)
      expect(response.status).toBe(status)
      const envelope = Schema.encodeSync(errorWire(cls))(error)
      expect(envelope.error).toMatchObject({ message: error.message, code, type })
      expect(Object.keys(envelope)).toEqual(["error"])
    }
  })

  it("round-trips every envelope through its wire schema", () => {
    for (const cls of Errors.ApiErrorClasses) {
      const error = sample(cls)
      const wire = errorWire(cls)
      const decoded = Schema.decodeSync(wire)(Schema.encodeSync(wire)(error))
      expect(decoded).toBeInstanceOf(cls)
      expect(decoded).toEqual(error)
    }
  })
})

describe("validation_failed has two kinds", () => {
  it("a schema failure is validation_error with issues, and names param for a single field", () => {
    const single = Errors.ValidationFailed.fromIssues([{ param: "limit", path: ["limit"], message: "Expected an integer" }])
    expect(Errors.errorSpec(single)).toEqual({ code: "validation_failed", status: 422, type: "validation_error" })
    expect(single.param).toBe("limit")
    const both = Errors.ValidationFailed.fromIssues([
      { param: "from", path: ["from"], message: "bad date" },
      { param: "to", path: ["to"], message: "bad date" }
    ])
    expect(both.param).toBeUndefined()
    expect(both.issues).toHaveLength(2)
  })

  it("a refusal after parsing is invalid_request_error without issues", () => {
    const refused = new Errors.ValidationFailed({ message: "input above the model's window", param: "messages" })
    expect(Errors.errorSpec(refused)).toEqual({ code: "validation_failed", status: 422, type: "invalid_request_error" })
    expect(Schema.encodeSync(errorWire(Errors.ValidationFailed))(refused).error).toEqual({
      message: "input above the model's window",
      type: "invalid_request_error",
      code: "validation_failed",
      param: "messages"
    })
  })
})

describe("headers that go with a code", () => {
  it("405 carries Allow and 429 carries Retry-After in whole seconds", () => {
    expect(renderError(sample(Errors.MethodNotAllowed)).headers["allow"]).toBe("GET, HEAD")
    expect(renderError(sample(Errors.RateLimited)).headers["retry-after"]).toBe("3")
  })
})

describe("the envelope outside the Effect stack", () => {
  it("renderErrorParts gives the same status, headers and body bytes as renderError", async () => {
    for (const cls of Errors.ApiErrorClasses) {
      const error = sample(cls)
      const parts = renderErrorParts(error)
      const response = renderError(error)
      expect(parts.status).toBe(response.status)
      expect(response.headers).toMatchObject(parts.headers)
      const body = response.body
      expect(body._tag).toBe("Uint8Array")
      if (body._tag === "Uint8Array") expect(new TextDecoder().decode(body.body)).toBe(parts.body)
      expect(body.contentType).toBe("application/json")
    }
  })
})
