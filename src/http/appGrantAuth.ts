/**
 * AppGrantAuth's implementation: the bearer token looked up as an app grant (services/accounts/AppGrants.ts).
 */
import { Effect, Layer, Redacted } from "effect"
import { AppGrants } from "../../services/accounts/AppGrants.ts"
import { AppGrantAuth } from "../api/AppsApi.ts"

export const AppGrantAuthLive = Layer.effect(
  AppGrantAuth,
  Effect.map(AppGrants, (grants) => AppGrantAuth.of({ appGrant: (token) => grants.authenticate(Redacted.value(token)) }))
)
