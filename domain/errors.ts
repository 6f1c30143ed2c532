/**
 * Every error a client can see: one tagged failure per code of SPEC.md's error table, each carrying the
 * HTTP status and `type` that table gives. The wire envelope `{error:{message,type,code,param?,details?,issues?}}`
 * is built from this table in one place (src/http/errorEnvelope.ts); nothing else decides a status or a code.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

export const ErrorType = Schema.Literal(
  "invalid_request_error",
  "validation_error",
  "forbidden",
  "not_found",
  "conflict",
  "insufficient_quota",
  "rate_limit_error",
  "server_error"
)
export type ErrorType = typeof ErrorType.Type

interface ErrorSpec {
  readonly code: string
  readonly status: number
  readonly type: ErrorType
  /** SPEC.md's "When" column, shown in the API documents. */
  readonly when: string
}

/** SPEC.md "Errors", keyed by the tag of the failure class. */
export const ErrorTable = {
  Unauthorized: { code: "unauthorized", status: 401, type: "invalid_request_error", when: "missing or invalid session or Bearer token; signed-request timestamp outside 5 minutes" },
  Forbidden: { code: "forbidden", status: 403, type: "forbidden", when: "lacks role, or signed by a different address than the authenticated wallet" },
  OrgRoleRequired: { code: "org_role_required", status: 403, type: "forbidden", when: "role in the active organization too low" },
  InvalidSignature: { code: "invalid_signature", status: 401, type: "invalid_request_error", when: "malformed signature, or it does not recover to a signer" },
  SignatureReused: { code: "signature_reused", status: 409, type: "invalid_request_error", when: "nonce already consumed" },
  InvalidApiKey: { code: "invalid_api_key", status: 401, type: "invalid_request_error", when: "empty, wrong format, or unknown key" },
  ApiKeyFrozen: { code: "api_key_frozen", status: 403, type: "forbidden", when: "key frozen" },
  ApiKeyRevoked: { code: "api_key_revoked", status: 401, type: "invalid_request_error", when: "key revoked" },
  InvalidAppGrant: { code: "invalid_app_grant", status: 401, type: "invalid_request_error", when: "missing, malformed or unknown grant token" },
  AppGrantFrozen: { code: "app_grant_frozen", status: 403, type: "forbidden", when: "grant frozen" },
  AppGrantRevoked: { code: "app_grant_revoked", status: 401, type: "invalid_request_error", when: "grant revoked" },
  ModelRestricted: { code: "model_restricted", status: 403, type: "forbidden", when: "model not in the key's allowed list" },
  BadRequest: { code: "bad_request", status: 400, type: "invalid_request_error", when: "request-shape problem no other code describes" },
  // The type of validation_failed depends on the failure: see ValidationFailed below.
  ValidationFailed: { code: "validation_failed", status: 422, type: "validation_error", when: "missing, mistyped or out-of-range field in body, query or path, or a request refused after parsing" },
  MethodNotAllowed: { code: "method_not_allowed", status: 405, type: "invalid_request_error", when: "unsupported method; the Allow header lists the accepted ones" },
  PayloadTooLarge: { code: "payload_too_large", status: 413, type: "invalid_request_error", when: "body over the ceiling; refused before parsing" },
  NotFound: { code: "not_found", status: 404, type: "not_found", when: "identifier or URL matches nothing" },
  AlreadyExists: { code: "already_exists", status: 409, type: "conflict", when: "duplicate unique identity" },
  Conflict: { code: "conflict", status: 409, type: "conflict", when: "concurrent modification; retry" },
  InvitationExpired: { code: "invitation_expired", status: 409, type: "conflict", when: "invitation past its expiry" },
  InvitationRevoked: { code: "invitation_revoked", status: 409, type: "conflict", when: "invitation withdrawn" },
  InvitationAlreadyAccepted: { code: "invitation_already_accepted", status: 409, type: "conflict", when: "accepted earlier, or lost an accept race" },
  InsufficientBalance: { code: "insufficient_balance", status: 402, type: "insufficient_quota", when: "balance below the amount" },
  SpendingLimitReached: { code: "spending_limit_reached", status: 429, type: "rate_limit_error", when: "would exceed a key, pool or account spending cap" },
  AllKeysExhausted: { code: "all_keys_exhausted", status: 502, type: "server_error", when: "all upstream keys for the model unavailable, limited or cooling down" },
  RateLimited: { code: "rate_limited", status: 429, type: "rate_limit_error", when: "request-rate cap or provider-pool RPM/TPM cap hit" },
  StreamInterrupted: { code: "stream_interrupted", status: 500, type: "server_error", when: "upstream dropped mid-stream" },
  ContractError: { code: "contract_error", status: 500, type: "server_error", when: "on-chain call reverted or unconfirmed" },
  InternalError: { code: "internal_error", status: 500, type: "server_error", when: "unexpected failure" },
  ServiceUnavailable: { code: "service_unavailable", status: 503, type: "server_error", when: "a required dependency is unreachable, or no model has capacity" },
  // Not in SPEC.md's table: refusals of a request head too large to route (issue 8). Without codes of their own they
  // would be a bare status from the HTTP parser, or a bad_request whose status no longer says what to shorten.
  UriTooLong: { code: "uri_too_long", status: 414, type: "invalid_request_error", when: "request target (path and query) over the limit; refused before routing" },
  HeadersTooLarge: { code: "headers_too_large", status: 431, type: "invalid_request_error", when: "request headers over the limit; refused before routing" }
} as const satisfies Record<string, ErrorSpec>

export type ErrorTag = keyof typeof ErrorTable
export type ErrorCode = (typeof ErrorTable)[ErrorTag]["code"]

/**
 * The status a class answers with, read from the table: every class below carries it, so a schema of the class
 * declared with `addError` needs no `{ status }` argument, and the wire schemas (src/http/errorEnvelope.ts) read it
 * from the class.
 */
const status = <A>(tag: ErrorTag): Schema.Annotations.Schema<A> => HttpApiSchema.annotations<A>({ status: ErrorTable[tag].status })

/** One offending field of a request that failed schema validation. */
export const ValidationIssue = Schema.Struct({
  param: Schema.String.annotations({ description: "Dotted path of the field, e.g. `messages.0.role`" }),
  path: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  message: Schema.String
}).annotations({ identifier: "ValidationIssue" })
export type ValidationIssue = typeof ValidationIssue.Type

const GenericDetails = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const fields = {
  message: Schema.String,
  param: Schema.optional(Schema.String),
  details: Schema.optional(GenericDetails)
}

const withDetails = <D extends Schema.Schema.Any>(details: D) => ({
  message: Schema.String,
  param: Schema.optional(Schema.String),
  details: details
})

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields, status("Unauthorized")) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields, status("Forbidden")) {}

export const OrganizationRole = Schema.Literal("owner", "admin", "member")
export class OrgRoleRequired extends Schema.TaggedError<OrgRoleRequired>()(
  "OrgRoleRequired",
  withDetails(Schema.Struct({ minimumRole: OrganizationRole, actualRole: OrganizationRole })),
  status("OrgRoleRequired")
) {}

export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()("InvalidSignature", fields, status("InvalidSignature")) {}
export class SignatureReused extends Schema.TaggedError<SignatureReused>()("SignatureReused", fields, status("SignatureReused")) {}
export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", fields, status("InvalidApiKey")) {}
export class ApiKeyFrozen extends Schema.TaggedError<ApiKeyFrozen>()("ApiKeyFrozen", fields, status("ApiKeyFrozen")) {}
export class ApiKeyRevoked extends Schema.TaggedError<ApiKeyRevoked>()("ApiKeyRevoked", fields, status("ApiKeyRevoked")) {}
export class InvalidAppGrant extends Schema.TaggedError<InvalidAppGrant>()("InvalidAppGrant", fields, status("InvalidAppGrant")) {}
export class AppGrantFrozen extends Schema.TaggedError<AppGrantFrozen>()("AppGrantFrozen", fields, status("AppGrantFrozen")) {}
export class AppGrantRevoked extends Schema.TaggedError<AppGrantRevoked>()("AppGrantRevoked", fields, status("AppGrantRevoked")) {}
export class ModelRestricted extends Schema.TaggedError<ModelRestricted>()("ModelRestricted", fields, status("ModelRestricted")) {}
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields, status("BadRequest")) {}

/** How much of a refused value a 422 quotes: enough to recognise it, never a large value whole. */
export const QUOTED_VALUE_LIMIT = 240
/** The longest an issue's message or field name may be once its quoted value is bounded. */
const ISSUE_TEXT_LIMIT = 2_000
/** How many issues the message lists (`issues` has them all). */
const SUMMARY_ISSUES = 20

/**
 * `text` cut to well under `limit` characters with an ellipsis and its length named, or whole when it fits. The cut
 * form fits under `limit`, so cutting again leaves it as it is, and a surrogate pair is never split.
 */
export const boundText = (text: string, limit: number): string => {
  if (text.length <= limit) return text
  let end = Math.floor(limit * 0.8)
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  return `${text.slice(0, end)}… (${text.length} characters)`
}

/** Effect's wording of a refused value: `Expected <what>, actual <the value as sent>`. */
const QUOTING = /^(Expected [^]*?, actual )([^]*)$/

/** One issue with the value it quotes (and a field name sent as a key) cut to QUOTED_VALUE_LIMIT. */
const boundIssue = (issue: ValidationIssue): ValidationIssue => {
  const quoting = QUOTING.exec(issue.message)
  const message = quoting === null ? issue.message : `${quoting[1]}${boundText(quoting[2]!, QUOTED_VALUE_LIMIT)}`
  return {
    param: boundText(issue.param, ISSUE_TEXT_LIMIT),
    path: issue.path.map((segment) => (typeof segment === "string" ? boundText(segment, QUOTED_VALUE_LIMIT) : segment)),
    message: boundText(message, ISSUE_TEXT_LIMIT)
  }
}

/**
 * 422 in both of its kinds: a body failing schema validation carries `issues` (type `validation_error`);
 * a parsed request refused afterwards has none (type `invalid_request_error`).
 */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  ...fields,
  issues: Schema.optional(Schema.Array(ValidationIssue))
}, status("ValidationFailed")) {
  get type(): ErrorType {
    return this.issues === undefined ? "invalid_request_error" : "validation_error"
  }

  /**
   * `param` names the field when every issue is about the same one. Every 422 with issues is built here, so this is
   * where what it quotes of a refused value is bounded (boundIssue): the answer stays small whatever was sent.
   */
  static fromIssues(sent: ReadonlyArray<ValidationIssue>): ValidationFailed {
    const issues = sent.map(boundIssue)
    const params = new Set(issues.map((issue) => issue.param))
    const [only] = params
    const summary = issues.slice(0, SUMMARY_ISSUES).map((issue) => `${issue.param === "" ? "request" : issue.param}: ${issue.message}`)
    const more = issues.length - SUMMARY_ISSUES
    return new ValidationFailed({
      message: `Invalid request: ${summary.join("; ")}${more > 0 ? `; and ${more} more (see issues)` : ""}`,
      issues,
      ...(params.size === 1 && only !== undefined && only !== "" ? { param: only } : {})
    })
  }
}

export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  withDetails(Schema.Struct({ allow: Schema.Array(Schema.String) })),
  status("MethodNotAllowed")
) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  withDetails(Schema.Struct({ limitBytes: Schema.Number })),
  status("PayloadTooLarge")
) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields, status("NotFound")) {}
export class AlreadyExists extends Schema.TaggedError<AlreadyExists>()("AlreadyExists", fields, status("AlreadyExists")) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields, status("Conflict")) {}
export class InvitationExpired extends Schema.TaggedError<InvitationExpired>()("InvitationExpired", fields, status("InvitationExpired")) {}
export class InvitationRevoked extends Schema.TaggedError<InvitationRevoked>()("InvitationRevoked", fields, status("InvitationRevoked")) {}
export class InvitationAlreadyAccepted
  extends Schema.TaggedError<InvitationAlreadyAccepted>()("InvitationAlreadyAccepted", fields, status("InvitationAlreadyAccepted"))
{}
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()("InsufficientBalance", fields, status("InsufficientBalance")) {}

export const SpendingScope = Schema.Literal(
  "key_daily",
  "key_monthly",
  "pool_daily",
  "pool_weekly",
  "pool_monthly",
  "account_daily",
  "account_weekly",
  "account_monthly"
)
export class SpendingLimitReached extends Schema.TaggedError<SpendingLimitReached>()(
  "SpendingLimitReached",
  withDetails(
    Schema.Struct({
      scope: SpendingScope,
      /** The organization's spending pool whose cap the request would pass (scopes pool_*). */
      pool: Schema.optional(Schema.Struct({ id: Schema.String, name: Schema.String }))
    })
  ),
  status("SpendingLimitReached")
) {}

export class AllKeysExhausted extends Schema.TaggedError<AllKeysExhausted>()("AllKeysExhausted", fields, status("AllKeysExhausted")) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  withDetails(
    Schema.Struct({
      retryAfterSeconds: Schema.Number,
      /** The spent budget's size and when it is whole again (epoch seconds), for the X-RateLimit-* headers. */
      limit: Schema.optional(Schema.Number),
      resetEpochSeconds: Schema.optional(Schema.Number)
    })
  ),
  status("RateLimited")
) {}
export class StreamInterrupted extends Schema.TaggedError<StreamInterrupted>()("StreamInterrupted", fields, status("StreamInterrupted")) {}

export const ChainFailureReason = Schema.Literal(
  "contributor_frozen",
  "contract_rejected",
  "relayer_unfunded",
  "chain_unavailable",
  "confirmation_pending"
)
export type ChainFailureReason = typeof ChainFailureReason.Type
export class ContractError extends Schema.TaggedError<ContractError>()(
  "ContractError",
  withDetails(
    Schema.Struct({
      chainFailure: Schema.Struct({ reason: ChainFailureReason }),
      // On a withdrawal's failure: which one, and whether it was refunded or is still pending (it is never both).
      withdrawal: Schema.optional(
        Schema.Struct({ id: Schema.String, status: Schema.Literal("pending", "refunded"), txHash: Schema.NullOr(Schema.String) })
      )
    })
  ),
  status("ContractError")
) {}

export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields, status("InternalError")) {}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields, status("ServiceUnavailable")) {}
export class UriTooLong extends Schema.TaggedError<UriTooLong>()(
  "UriTooLong",
  withDetails(Schema.Struct({ limitBytes: Schema.Number })),
  status("UriTooLong")
) {}
export class HeadersTooLarge extends Schema.TaggedError<HeadersTooLarge>()(
  "HeadersTooLarge",
  withDetails(Schema.Struct({ limitBytes: Schema.Number })),
  status("HeadersTooLarge")
) {}

/** Every error class, in the order of SPEC.md's table, then the codes this project adds. */
export const ApiErrorClasses = [
  Unauthorized,
  Forbidden,
  OrgRoleRequired,
  InvalidSignature,
  SignatureReused,
  InvalidApiKey,
  ApiKeyFrozen,
  ApiKeyRevoked,
  InvalidAppGrant,
  AppGrantFrozen,
  AppGrantRevoked,
  ModelRestricted,
  BadRequest,
  ValidationFailed,
  MethodNotAllowed,
  PayloadTooLarge,
  NotFound,
  AlreadyExists,
  Conflict,
  InvitationExpired,
  InvitationRevoked,
  InvitationAlreadyAccepted,
  InsufficientBalance,
  SpendingLimitReached,
  AllKeysExhausted,
  RateLimited,
  StreamInterrupted,
  ContractError,
  InternalError,
  ServiceUnavailable,
  UriTooLong,
  HeadersTooLarge
] as const

export type ApiErrorClass = (typeof ApiErrorClasses)[number]
export type ApiError = InstanceType<ApiErrorClass>

const classByTag = new Map<string, ApiErrorClass>(ApiErrorClasses.map((cls) => [cls._tag, cls]))

export const isApiError = (u: unknown): u is ApiError => {
  if (typeof u !== "object" || u === null || !("_tag" in u) || typeof u._tag !== "string") return false
  const cls = classByTag.get(u._tag)
  return cls !== undefined && u instanceof cls
}

export interface ResolvedErrorSpec {
  readonly code: ErrorCode
  readonly status: number
  readonly type: ErrorType
}

/** The status, type and code a failure is shown with. */
export const errorSpec = (error: ApiError): ResolvedErrorSpec => {
  const spec = ErrorTable[error._tag]
  return { code: spec.code, status: spec.status, type: error instanceof ValidationFailed ? error.type : spec.type }
}
