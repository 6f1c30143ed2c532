/**
 * The credential check of the inference and usage endpoints (SPEC "Authentication" 2-5): `Authorization: Bearer
 * ct_live_...` (an API key) or `Bearer cfa_live_...` (an app grant, in the context it was issued for). Active proceeds;
 * frozen 403 `api_key_frozen` / `app_grant_frozen`; revoked 401 `api_key_revoked` / `app_grant_revoked`; anything else
 * 401 `invalid_api_key` (`invalid_app_grant` for a malformed or unknown grant token). Sending inference changes the
 * account: a grant without `account:act` is refused 403 `forbidden`. It provides the credential to the handler.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiKeyFrozen, ApiKeyRevoked, AppGrantFrozen, AppGrantRevoked, Forbidden, InvalidApiKey, InvalidAppGrant } from "../../domain/errors.ts"
import { CurrentCredential } from "../../services/accounts/CurrentIdentity.ts"
import { errorWire } from "../http/errorEnvelope.ts"

/** What a route behind a credential check may answer besides its own outcomes. */
export const CredentialFailure = Schema.Union(
  errorWire(InvalidApiKey),
  errorWire(ApiKeyFrozen),
  errorWire(ApiKeyRevoked),
  errorWire(InvalidAppGrant),
  errorWire(AppGrantFrozen),
  errorWire(AppGrantRevoked),
  errorWire(Forbidden)
)

/** One description for every route that takes either credential as a bearer token (one scheme in the document). */
export const credentialBearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An API key `ct_live_...`, or an app grant `cfa_live_...` acting in the context it was issued for " +
      "(sending inference needs its `account:act` scope)."
  )
)

export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("ApiKeyAuth", {
  provides: CurrentCredential,
  failure: CredentialFailure,
  security: { bearer: credentialBearer }
}) {}
