/**
 * The API-key check of the inference and usage endpoints (SPEC "Authentication" 2 and 4): `Authorization: Bearer
 * ct_live_...`; active proceeds, frozen 403 `api_key_frozen`, revoked 401 `api_key_revoked`, anything else 401
 * `invalid_api_key`. It provides the key to the handler.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import { ApiKeyFrozen, ApiKeyRevoked, InvalidApiKey } from "../../domain/errors.ts"
import type { ApiKeyRecord } from "../../services/accounts/ApiKeys.ts"
import { errorWire } from "../http/errorEnvelope.ts"

/** The key the request authenticated with. */
export class CurrentApiKey extends Context.Tag("CurrentApiKey")<CurrentApiKey, ApiKeyRecord>() {}

export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("ApiKeyAuth", {
  provides: CurrentApiKey,
  failure: Schema.Union(errorWire(InvalidApiKey), errorWire(ApiKeyFrozen), errorWire(ApiKeyRevoked)),
  security: { bearer: HttpApiSecurity.bearer }
}) {}
