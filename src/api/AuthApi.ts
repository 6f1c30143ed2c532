/**
 * Sign-in and the signed-in identity (DESIGN section 11, fixed paths): e-mail codes, SIWE, logout, `/v1/me`.
 * Field names of the identity are SPEC's snake_case.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CODE_PATTERN } from "../../domain/accounts/formats.ts"
import { MAX_DISPLAY_NAME_LENGTH, REFERRAL_CODE_PATTERN } from "../../domain/accounts/ids.ts"
import {
  AlreadyExists,
  Conflict,
  Forbidden,
  OrganizationRole,
  InvalidSignature,
  RateLimited,
  SignatureReused,
  Unauthorized,
  ValidationFailed
} from "../../domain/errors.ts"
import { errorWire, errorsWire } from "../http/errorEnvelope.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { Email, reportAllIssues } from "./shared.ts"

const Code = Schema.String.pipe(Schema.pattern(CODE_PATTERN, { message: () => "expected the 6-digit code from the e-mail" })).annotations({
  description: "The 6-digit code from the e-mail",
  examples: ["042917"]
})

const Instant = Schema.String.annotations({ format: "date-time" })

export const Me = Schema.Struct({
  cf_id: Schema.String.annotations({ description: "Public id: `cf_` + 12 base32 characters" }),
  email: Schema.NullOr(Schema.String),
  wallet_address: Schema.NullOr(Schema.String).annotations({ description: "EIP-55 checksummed" }),
  display_name: Schema.String,
  referral_code: Schema.String.annotations({ description: "`cf_ref_` + 8 characters" }),
  points_balance: Schema.Int,
  active_context: Schema.Union(
    Schema.Struct({ type: Schema.Literal("personal") }),
    Schema.Struct({ type: Schema.Literal("organization"), org_id: Schema.String, name: Schema.String, role: OrganizationRole })
  ).annotations({ description: "Where the session's requests act and are paid from (POST /v1/orgs/context switches it)" })
}).annotations({
  identifier: "Me",
  examples: [
    {
      cf_id: "cf_k3v9q2m7x4ab",
      email: "alice@example.com",
      wallet_address: null,
      display_name: "al***@example.com",
      referral_code: "cf_ref_p4z8m2qa",
      points_balance: 0,
      active_context: { type: "personal" }
    }
  ]
})

const CodeSent = Schema.Struct({
  email: Schema.String,
  expiresAt: Instant
}).annotations({ identifier: "CodeSent", description: "A code was sent (or kept in the outbox when no SMTP server is configured)" })

const SiweNonce = Schema.Struct({
  nonce: Schema.String,
  chainId: Schema.Int,
  domain: Schema.String.annotations({ description: "The authority the message must name" }),
  uri: Schema.String,
  version: Schema.Literal("1"),
  expiresAt: Instant
}).annotations({ identifier: "SiweNonce", description: "What a client needs to build the EIP-4361 message to sign" })

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("emailStart", "/v1/auth/email/start")
      .annotate(OpenApi.Summary, "Sends a 6-digit sign-in code to an e-mail address")
      .annotate(
        OpenApi.Description,
        "An address at a disposable e-mail domain (the operator's list, subdomains included) that no CF ID has yet is refused: 422 `validation_failed` naming `email`, and nothing is mailed."
      )
      .setPayload(reportAllIssues(Schema.Struct({ email: Email })))
      .addSuccess(CodeSent, { status: 202 })
      .addError(errorsWire(ValidationFailed, RateLimited))
  )
  .add(
    HttpApiEndpoint.post("emailVerify", "/v1/auth/email/verify")
      .annotate(OpenApi.Summary, "Signs in with the e-mailed code (creating the CF ID on first sign-in) and sets the session cookie")
      .setPayload(
        reportAllIssues(
          Schema.Struct({
            email: Email,
            code: Code,
            referralCode: Schema.optional(Schema.String.pipe(Schema.pattern(REFERRAL_CODE_PATTERN, { message: () => "expected a cf_ref_ code" })))
          })
        )
      )
      .addSuccess(Me)
      .addError(errorsWire(ValidationFailed, Unauthorized, RateLimited))
  )
  .add(HttpApiEndpoint.get("siweNonce", "/v1/auth/siwe/nonce")
      .annotate(OpenApi.Summary, "Issues a one-use nonce for a Sign-In with Ethereum message").addSuccess(SiweNonce))
  .add(
    HttpApiEndpoint.post("siweVerify", "/v1/auth/siwe/verify")
      .annotate(OpenApi.Summary, "Signs in with a signed SIWE message (creating the CF ID on first sign-in) and sets the session cookie")
      .setPayload(
        reportAllIssues(
          Schema.Struct({
            message: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)).annotations({ description: "The EIP-4361 message, as signed" }),
            signature: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)).annotations({ description: "0x-prefixed 65-byte signature" })
          })
        )
      )
      .addSuccess(Me)
      .addError(errorsWire(ValidationFailed, Unauthorized, InvalidSignature, SignatureReused, RateLimited))
  )
  .add(
    HttpApiEndpoint.post("logout", "/v1/auth/logout")
      .annotate(OpenApi.Summary, "Ends the session and clears its cookie")
      .annotate(
        OpenApi.Description,
        "With a session cookie, the request must come from this site like every signed-in state change: `X-CF-Console: 1` or a same-origin `Origin`, else 403 `forbidden`."
      )
      .addSuccess(HttpApiSchema.NoContent)
      .addError(errorWire(Forbidden))
  ) {}

const DisplayName = Schema.Trim.pipe(
  Schema.minLength(1),
  Schema.maxLength(MAX_DISPLAY_NAME_LENGTH),
  Schema.pattern(/^[^\p{Cc}]*$/u, { message: () => "expected no control characters" })
)

export class MeGroup extends HttpApiGroup.make("me")
  .add(HttpApiEndpoint.get("me", "/v1/me")
      .annotate(OpenApi.Summary, "The signed-in identity").addSuccess(Me))
  .add(
    HttpApiEndpoint.patch("updateMe", "/v1/me")
      .annotate(OpenApi.Summary, "Changes the display name")
      .setPayload(reportAllIssues(Schema.Struct({ display_name: Schema.optional(DisplayName) })))
      .addSuccess(Me)
      .addError(errorWire(ValidationFailed))
  )
  .add(
    HttpApiEndpoint.post("emailStart", "/v1/me/email/start")
      .annotate(OpenApi.Summary, "Sends a code to the e-mail a wallet-only identity wants to add")
      .annotate(
        OpenApi.Description,
        "An address at a disposable e-mail domain (the operator's list, subdomains included) is refused: 422 `validation_failed` naming `email`, and nothing is mailed."
      )
      .setPayload(reportAllIssues(Schema.Struct({ email: Email })))
      .addSuccess(CodeSent, { status: 202 })
      .addError(errorsWire(ValidationFailed, Conflict, AlreadyExists, RateLimited))
  )
  .add(
    HttpApiEndpoint.post("emailVerify", "/v1/me/email/verify")
      .annotate(OpenApi.Summary, "Adds the e-mail to the identity with the code sent to it")
      .setPayload(reportAllIssues(Schema.Struct({ email: Email, code: Code })))
      .addSuccess(Me)
      .addError(errorsWire(ValidationFailed, Conflict, AlreadyExists))
  )
  .middleware(SessionAuth) {}
