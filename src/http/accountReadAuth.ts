/**
 * AccountReadAuth's implementation: a bearer token is judged by ApiKeyAuth (an API key or app grant: reading needs
 * `account:read`, which every grant holds), anything else by SessionAuth (cookie or signed request). The platform tries
 * the schemes in order and keeps the last failure, so the session scheme answers a rejected bearer token with that
 * token's own refusal instead of "not signed in".
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { bearerTokenOf } from "../../domain/accounts/credentialToken.ts"
import { Unauthorized } from "../../domain/errors.ts"
import { ApiKeyAuth } from "../api/ApiKeyAuth.ts"
import type { CurrentReaderShape } from "../../services/accounts/CurrentIdentity.ts"
import { AccountReadAuth } from "../api/GenerationsApi.ts"
import { SessionAuth } from "../api/SessionAuth.ts"
import { ApiKeyAuthLive } from "./apiKeyAuth.ts"

const bearerToken = Effect.map(HttpServerRequest.HttpServerRequest, (request) => bearerTokenOf(request.headers.authorization))

export const AccountReadAuthLive = Layer.effect(
  AccountReadAuth,
  Effect.gen(function* () {
    const keys = yield* ApiKeyAuth
    const sessions = yield* SessionAuth
    const byCredential = (token: string) =>
      Effect.map(keys.bearer(Redacted.make(token)), (credential): CurrentReaderShape => ({ accountId: credential.accountId, via: "credential" }))
    return AccountReadAuth.of({
      bearer: () =>
        Effect.gen(function* () {
          const token = yield* bearerToken
          if (token === undefined) return yield* Effect.fail(new Unauthorized({ message: "Sign in, or send an API key as a bearer token." }))
          return yield* byCredential(token)
        }),
      session: (cookie) =>
        Effect.gen(function* () {
          const token = yield* bearerToken
          if (token !== undefined) return yield* byCredential(token)
          const identity = yield* sessions.session(cookie)
          return { accountId: identity.accountId, via: identity.via } satisfies CurrentReaderShape
        })
    })
  })
).pipe(Layer.provide(ApiKeyAuthLive))
