/**
 * `compute-exchange/accounts`: identities, sessions, the credit ledger, API keys, organizations and usage, for a
 * program that embeds them. `AccountsLive` needs a SqlClient (with the migrations applied) and the configuration.
 */
export { AccountsLive } from "../../layers/Accounts.ts"
export { ApiKeys } from "../../services/accounts/ApiKeys.ts"
export { Ledger } from "../../services/accounts/Ledger.ts"
export { Organizations } from "../../services/accounts/Organizations.ts"
export { Sessions } from "../../services/accounts/Sessions.ts"
export { Usage } from "../../services/accounts/Usage.ts"
