/**
 * `compute-exchange/accounts`: identities, sessions, the credit ledger, API keys, organizations and usage, for a
 * program that embeds them. `AccountsLive` needs a SqlClient (with the migrations applied) and the configuration.
 * The services that act for someone (Organizations, Invitations, Pools, AppGrants, AccountAdmin, ...) read who from
 * `CurrentIdentity`; `actingAs(identity)` provides it. `AccountsLive` also needs the oracle's snapshot
 * (`OracleReadsLive`) and a chain (`DetachedChainLive` when there is none).
 */
export { AccountsLive } from "../../layers/Accounts.ts"
export { AccountAdmin } from "../../services/accounts/AccountAdmin.ts"
export { ApiKeys } from "../../services/accounts/ApiKeys.ts"
export { AppGrants } from "../../services/accounts/AppGrants.ts"
export { Credentials } from "../../services/accounts/Credentials.ts"
export { actingAs, CurrentIdentity, type CurrentIdentityShape } from "../../services/accounts/CurrentIdentity.ts"
export { Identities } from "../../services/accounts/Identity.ts"
export { Invitations } from "../../services/accounts/Invitations.ts"
export { Ledger } from "../../services/accounts/Ledger.ts"
export { OrganizationCredits } from "../../services/accounts/OrganizationCredits.ts"
export { Organizations } from "../../services/accounts/Organizations.ts"
export { Pools } from "../../services/accounts/Pools.ts"
export { Sessions } from "../../services/accounts/Sessions.ts"
export { Usage } from "../../services/accounts/Usage.ts"
/** No chain: funding reads answer `chain_unavailable`; what a program without a chain provides under AccountsLive. */
export { DetachedChainLive } from "../../layers/Roles.ts"
