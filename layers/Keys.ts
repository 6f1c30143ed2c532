/**
 * API keys (issue 9): issuance and the per-replica key cache, checking `allowedModels` against the live catalog; and
 * the usage report a key reads.
 */
import { Layer } from "effect"
import { ApiKeys, CatalogModelsLive } from "../services/accounts/ApiKeys.ts"
import { LedgerRepository } from "../services/accounts/LedgerRepository.ts"
import { Usage } from "../services/accounts/Usage.ts"
import { Generations } from "../services/exchange/Generations.ts"

export const KeysLive = Layer.mergeAll(
  ApiKeys.Default.pipe(Layer.provide(CatalogModelsLive)),
  Usage.Default.pipe(Layer.provide([LedgerRepository.Default, Generations.Default]))
)
