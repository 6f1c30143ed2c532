/**
 * What an inference or usage request authenticates with (SPEC "Authentication" 2-5): an API key `ct_live_...` or an
 * app grant `cfa_live_...`, told apart by the prefix. Both become one Credential, the shape the exchange, the usage
 * report and the stored bills read: the account it spends, its id (recorded where a key id goes), its caps and models.
 */
import { Effect } from "effect"
import { APP_GRANT_PREFIX, missingScope, type Scope, SCOPES } from "../../domain/accounts/appGrantRules.ts"
import { type ApiKeyFrozen, type ApiKeyRevoked, type AppGrantFrozen, type AppGrantRevoked, Forbidden, type InvalidApiKey, type InvalidAppGrant } from "../../domain/errors.ts"
import { type ApiKeyRecord, ApiKeys } from "./ApiKeys.ts"
import { AppGrants, type AuthenticatedGrant } from "./AppGrants.ts"

export interface Credential {
  readonly kind: "api_key" | "app_grant"
  /** `key_...` or `app_...`: the id holds, ledger entries and bills record as `api_key_id`. */
  readonly id: string
  /** The account requests are paid from: the key's, or the context the grant was issued for. */
  readonly accountId: string
  readonly issuedByCfId: string | null
  /** Whose spending it is: a key's holder (its issuer unless issued for another member), a grant's issuer. */
  readonly holderCfId: string | null
  /** A key's own caps; a grant has none (the account's caps apply to both). */
  readonly dailyLimitWei: bigint | null
  readonly monthlyLimitWei: bigint | null
  /** Empty: any model. */
  readonly allowedModels: ReadonlyArray<string>
  /** What it may do: a key everything its account allows, a grant its scopes. */
  readonly scopes: ReadonlyArray<Scope>
}

export type CredentialFailure = InvalidApiKey | ApiKeyFrozen | ApiKeyRevoked | InvalidAppGrant | AppGrantFrozen | AppGrantRevoked

export const credentialOfKey = (key: ApiKeyRecord): Credential => ({
  kind: "api_key",
  id: key.id,
  accountId: key.accountId,
  issuedByCfId: key.issuedByCfId,
  holderCfId: key.holderCfId ?? key.issuedByCfId,
  dailyLimitWei: key.dailyLimitWei,
  monthlyLimitWei: key.monthlyLimitWei,
  allowedModels: key.allowedModels,
  scopes: SCOPES
})

export const credentialOfGrant = ({ grant }: AuthenticatedGrant): Credential => ({
  kind: "app_grant",
  id: grant.id,
  accountId: grant.accountId,
  issuedByCfId: grant.issuedByCfId,
  holderCfId: grant.issuedByCfId,
  dailyLimitWei: null,
  monthlyLimitWei: null,
  allowedModels: [],
  scopes: grant.scopes
})

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
        ? Effect.map(grants.authenticate(raw), credentialOfGrant)
        : Effect.map(keys.authenticate(raw), credentialOfKey)
    })
    return { authenticate } as const
  })
}) {}
