/**
 * `compute-exchange/exchange`: the inference exchange's services (DESIGN.md section 10) for a program that embeds
 * them. `ExchangeLive` needs what the service gives it: the accounts (`compute-exchange/accounts`), the oracle's
 * snapshot (`compute-exchange/oracle`), a SqlClient and the configuration; `Exchange.serve` answers a `Reply` and
 * knows nothing of HTTP.
 */
export { ExchangeLive, exchangeWithUpstream } from "../../layers/Exchange.ts"
export { Exchange, type InferenceCall, type Reply, type ServeFailure, type SettledReply } from "../../services/exchange/Exchange.ts"
export { ModelCatalog } from "../../services/exchange/ModelCatalog.ts"
export { Quotes } from "../../services/exchange/Quotes.ts"
export type { ChatEvent, ChatRequest, ChatResult, Usage } from "../../domain/exchange/canonical.ts"
