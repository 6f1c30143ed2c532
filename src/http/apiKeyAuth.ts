/**
 * ApiKeyAuth's implementation: the bearer token checked against the key cache (services/accounts/ApiKeys.ts).
 */
import { Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../../services/accounts/ApiKeys.ts"
import { ApiKeyAuth } from "../api/ApiKeyAuth.ts"

export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.map(ApiKeys, (keys) => ApiKeyAuth.of({ bearer: (token) => keys.authenticate(Redacted.value(token)) }))
)
