/**
 * What an inference or usage request authenticated with (SPEC "Authentication" 2-5), whichever way in it was: an API
 * key `ct_live_...` or an app grant `cfa_live_...` becomes one Credential, the shape the exchange, the usage report and
 * the stored bills read: the account it spends, its id (recorded where a key id goes), its caps and models. How each
 * becomes one is here; looking a token up is services/accounts/Credentials.ts.
 */
import { type Scope, SCOPES } from "./appGrantRules.ts"

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

/** What a credential reads of a stored API key (services/accounts/ApiKeys.ts, `ApiKeyRecord`). */
export interface KeyOfCredential {
  readonly id: string
  readonly accountId: string
  readonly issuedByCfId: string | null
  readonly holderCfId: string | null
  readonly dailyLimitWei: bigint | null
  readonly monthlyLimitWei: bigint | null
  readonly allowedModels: ReadonlyArray<string>
}

/** What a credential reads of a stored app grant (services/accounts/AppGrants.ts, `AppGrantRecord`). */
export interface GrantOfCredential {
  readonly id: string
  readonly accountId: string
  readonly issuedByCfId: string
  readonly scopes: ReadonlyArray<Scope>
}

export const credentialOfKey = (key: KeyOfCredential): Credential => ({
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

export const credentialOfGrant = (grant: GrantOfCredential): Credential => ({
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
