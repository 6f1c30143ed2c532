/**
 * Looking up what an inference or usage request authenticates with (SPEC "Authentication" 2-5): an API key
 * `ct_live_...` or an app grant `cfa_live_...`, told apart by the prefix. Both become one Credential, whose shape and
 * making are domain/accounts/credential.ts.
 */
import { Effect } from "effect"
import { APP_GRANT_PREFIX, missingScope, type Scope } from "../../domain/accounts/appGrantRules.ts"
import { type Credential, credentialOfGrant, credentialOfKey } from "../../domain/accounts/credential.ts"
import { type ApiKeyFrozen, type ApiKeyRevoked, type AppGrantFrozen, type AppGrantRevoked, Forbidden, type InvalidApiKey, type InvalidAppGrant } from "../../domain/errors.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { AppGrants } from "./AppGrants.ts"

/** For services/exchange/Exchange.ts, which still imports the type from here; everything else imports the domain's. */

export type CredentialFailure = InvalidApiKey | ApiKeyFrozen | ApiKeyRevoked | InvalidAppGrant | AppGrantFrozen | AppGrantRevoked

/** Refuses a credential without `scope` (403 `forbidden` naming it): a read-only grant sending inference, say. */
export const requireScope = (credential: Credential, scope: Scope): Effect.Effect<void, Forbidden> => {
  const missing = missingScope(credential.scopes, scope)
  return missing === undefined ? Effect.void : Effect.fail(new Forbidden({ message: missing }))
}

export class Credentials extends Effect.Service<Credentials>()("Credentials", {
  effect: Effect.gen(function* () {
    const keys = yield* ApiKeys
    const grants = yield* AppGrants
    /** By prefix; anything that is not a grant token is judged as a key (so a stray token is `invalid_api_key`). */
    const authenticate = Effect.fn("Credentials.authenticate")(function* (raw: string): Effect.fn.Return<Credential, CredentialFailure> {
      return yield* raw.startsWith(APP_GRANT_PREFIX)
        ? Effect.map(grants.authenticate(raw), ({ grant }) => credentialOfGrant(grant))
        : Effect.map(keys.authenticate(raw), credentialOfKey)
    })
    return { authenticate } as const
  })
}) {}
