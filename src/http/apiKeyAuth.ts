/**
 * ApiKeyAuth's implementation: the bearer token checked as an API key (against the key cache) or an app grant
 * (services/accounts/Credentials.ts). The token is read from the request by the one rule every way in shares
 * (domain/accounts/credentialToken.ts), not as the platform slices it: a lowercase `bearer` scheme is the same token.
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { bearerTokenOf } from "../../domain/accounts/credentialToken.ts"
import { Credentials } from "../../services/accounts/Credentials.ts"
import { ApiKeyAuth } from "../api/ApiKeyAuth.ts"

export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.map(Credentials, (credentials) =>
    ApiKeyAuth.of({
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => credentials.authenticate(bearerTokenOf(request.headers.authorization) ?? ""))
    })
  )
)
