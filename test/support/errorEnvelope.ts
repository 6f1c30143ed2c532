/**
 * SPEC "Errors", written out for the suites that check refusals in bulk (the fuzzers): each code's status and `type`,
 * and what makes a refusal's body the envelope `{error: {message, type, code, param?, details?, issues?}}`. Written here
 * from SPEC's table, not imported from the product, so the product's table is what is tested.
 */
const codes = (status: number, type: string, ...names: Array<string>) => Object.fromEntries(names.map((name) => [name, { status, type }]))

/** code -> status and `type` (validation_failed's type depends on `issues`). */
export const SPEC_ERRORS: Record<string, { readonly status: number; readonly type: string }> = {
  ...codes(400, "invalid_request_error", "bad_request"),
  ...codes(401, "invalid_request_error", "unauthorized", "invalid_signature", "invalid_api_key", "api_key_revoked", "invalid_app_grant", "app_grant_revoked"),
  ...codes(402, "insufficient_quota", "insufficient_balance"),
  ...codes(403, "forbidden", "forbidden", "org_role_required", "api_key_frozen", "app_grant_frozen", "model_restricted"),
  ...codes(404, "not_found", "not_found"),
  ...codes(405, "invalid_request_error", "method_not_allowed"),
  ...codes(409, "invalid_request_error", "signature_reused"),
  ...codes(409, "conflict", "already_exists", "conflict", "invitation_expired", "invitation_revoked", "invitation_already_accepted"),
  ...codes(413, "invalid_request_error", "payload_too_large"),
  ...codes(422, "validation_error", "validation_failed"),
  ...codes(429, "rate_limit_error", "spending_limit_reached", "rate_limited"),
  ...codes(500, "server_error", "stream_interrupted", "contract_error", "internal_error"),
  ...codes(502, "server_error", "all_keys_exhausted"),
  ...codes(503, "server_error", "service_unavailable")
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Why a refusal's parsed body is not SPEC's envelope for its status; undefined when it is. */
export const envelopeProblem = (status: number, parsed: unknown): string | undefined => {
  if (!isRecord(parsed) || Object.keys(parsed).join() !== "error" || !isRecord(parsed.error)) return "the refusal is not {error: {...}}"
  const error = parsed.error
  const extra = Object.keys(error).filter((k) => !["message", "type", "code", "param", "details", "issues"].includes(k))
  if (extra.length > 0) return `the envelope carries fields SPEC does not name: ${extra.join(", ")}`
  if (typeof error.message !== "string" || error.message === "") return "error.message is not a non-empty string"
  if (typeof error.code !== "string" || !(error.code in SPEC_ERRORS)) return `error.code ${JSON.stringify(error.code)} is not in SPEC's table`
  const spec = SPEC_ERRORS[error.code]!
  if (status !== spec.status) return `error.code ${error.code} came with status ${status}, SPEC says ${spec.status}`
  if (error.param !== undefined && typeof error.param !== "string") return "error.param is not a string"
  if (error.details !== undefined && !isRecord(error.details)) return "error.details is not an object"
  if (error.code !== "validation_failed") {
    if (error.issues !== undefined) return `issues[] on a ${error.code}`
    return error.type === spec.type ? undefined : `error.code ${error.code} has type ${JSON.stringify(error.type)}, SPEC says ${spec.type}`
  }
  if (error.issues === undefined) {
    return error.type === "invalid_request_error" ? undefined : `a validation_failed without issues has type ${JSON.stringify(error.type)}, not invalid_request_error`
  }
  if (error.type !== "validation_error") return `a validation_failed with issues has type ${JSON.stringify(error.type)}, not validation_error`
  if (!Array.isArray(error.issues) || error.issues.length === 0) return "error.issues is not a non-empty array"
  const bad = error.issues.find((i) => !isRecord(i) || typeof i.param !== "string" || !Array.isArray(i.path) || typeof i.message !== "string")
  return bad === undefined ? undefined : `an issue is not {param, path, message}: ${JSON.stringify(bad)}`
}

/** The same for a body still as text: first it must be JSON. */
export const envelopeTextProblem = (status: number, text: string): string | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return "the refusal's body is not JSON"
  }
  return envelopeProblem(status, parsed)
}
