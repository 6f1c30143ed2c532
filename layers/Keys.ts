/**
 * API keys (issue 9): issuance and the per-replica key cache, checking `allowedModels` against the live catalog; the
 * usage report a key reads; and (issue 12) the credential check that takes a key or an app grant, and the account
 * tools a connected app calls. App grants themselves come with the identity services (layers/Identity.ts).
 */
import { Layer } from "effect"
import { AccountTools } from "../services/accounts/AccountTools.ts"
import { ApiKeys, CatalogModelsLive } from "../services/accounts/ApiKeys.ts"
import { Credentials } from "../services/accounts/Credentials.ts"
import { LedgerRepository } from "../services/accounts/LedgerRepository.ts"
import { Usage } from "../services/accounts/Usage.ts"
import { Generations } from "../services/exchange/Generations.ts"

export const KeysLive = Layer.mergeAll(
  Credentials.Default,
  AccountTools.Default,
  Usage.Default
).pipe(
  Layer.provideMerge(ApiKeys.Default.pipe(Layer.provide(CatalogModelsLive))),
  Layer.provide([LedgerRepository.Default, Generations.Default])
)
