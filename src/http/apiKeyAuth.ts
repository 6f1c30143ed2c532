/**
 * ApiKeyAuth's implementation: the bearer token checked as an API key (against the key cache) or an app grant
 * (services/accounts/Credentials.ts).
 */
import { Effect, Layer, Redacted } from "effect"
import { Credentials } from "../../services/accounts/Credentials.ts"
import { ApiKeyAuth } from "../api/ApiKeyAuth.ts"

export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.map(Credentials, (credentials) => ApiKeyAuth.of({ bearer: (token) => credentials.authenticate(Redacted.value(token)) }))
)
