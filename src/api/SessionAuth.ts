/**
 * Authentication of account operations (SPEC "Authentication" 7): a session cookie `cf_session`, or a request signed
 * by the identity's wallet (headers X-CF-Address, X-CF-Timestamp, X-CF-Nonce, X-CF-Signature). A group that needs
 * an identity declares `.middleware(SessionAuth)` and its handlers read `CurrentIdentity`. A state change the cookie
 * authenticates must come from this site (DESIGN section 13; the rule is src/http/csrf.ts), else 403 `forbidden`.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, InvalidSignature, SignatureReused, Unauthorized } from "../../domain/errors.ts"
import { CurrentIdentity } from "../../services/accounts/CurrentIdentity.ts"
import { errorWire } from "../http/errorEnvelope.ts"

export { CurrentIdentity, type CurrentIdentityShape } from "../../services/accounts/CurrentIdentity.ts"

/** What an operation behind SessionAuth may answer besides its own outcomes. */
export const SessionAuthFailure = Schema.Union(
  errorWire(Unauthorized),
  errorWire(Forbidden),
  errorWire(InvalidSignature),
  errorWire(SignatureReused)
)

/** The cookie scheme, shared by every middleware that accepts a session (one scheme in the document). */
export const sessionCookie = HttpApiSecurity.apiKey({ in: "cookie", key: "cf_session" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The session cookie set by sign-in. A cookie-authenticated request that changes state (any method but GET, " +
      "HEAD, OPTIONS) must come from this site: it carries `X-CF-Console: 1` or a same-origin `Origin`, and no " +
      "`Origin` or `Sec-Fetch-Site` naming another site; otherwise 403 `forbidden`. " +
      "Instead, a request may be signed by the identity's wallet: headers " +
      "X-CF-Address, X-CF-Timestamp (Unix seconds, within 5 minutes), X-CF-Nonce (8-128 of [A-Za-z0-9_-], once per " +
      "address) and X-CF-Signature, the EIP-191 personal_sign of " +
      "`CF-SIGNED-REQUEST\\n{METHOD}\\n{path with query}\\n{timestamp}\\n{nonce}\\n{sha256 hex of body}`."
  )
)

export class SessionAuth extends HttpApiMiddleware.Tag<SessionAuth>()("SessionAuth", {
  failure: SessionAuthFailure,
  provides: CurrentIdentity,
  security: { session: sessionCookie }
}) {}
