/**
 * `GET /v1/models`: the routable catalogue in the OpenAI list format (chat models and embedding models, by kind), built once per oracle snapshot (the catalogue
 * only changes with it) rather than per request.
 */
import { Effect } from "effect"
import type { RoutableCatalog } from "../../domain/exchange/routing.ts"
import type { ModelList } from "../../src/api/ExchangeApi.ts"
import { Exchange } from "./Exchange.ts"

/** The list of one routable catalogue: each model with the spellings that route to it besides its id (modelIds.ts). */
export const modelList = (catalog: RoutableCatalog): typeof ModelList.Type => ({
  object: "list",
  data: [...catalog.models.values(), ...catalog.embeddings.values()]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((model) => {
      const bare = model.key.slice(model.vendor.length + 1)
      const resolved = catalog.resolve(bare)
      return {
        id: model.key,
        object: "model" as const,
        created: Math.floor(model.card.releasedAt.getTime() / 1000),
        owned_by: model.vendor,
        displayName: model.card.displayName,
        // The bare name when it is unambiguous, then the vendor's own API ids that resolve here (its sdkId, aliases).
        routingAliases: [...new Set([...(resolved._tag === "Found" && resolved.modelKey === model.key ? [bare] : []), ...catalog.aliasesOf(model.key)])],
        ...(model.card.maxInputTokens !== null ? { maxInputTokens: model.card.maxInputTokens } : {}),
        kind: model.card.embedding === null ? ("text" as const) : ("embedding" as const),
        ...(model.card.embedding !== null ? { dimensions: model.card.embedding.dimensions } : {})
      }
    })
})

export class ModelCatalog extends Effect.Service<ModelCatalog>()("ModelCatalog", {
  effect: Effect.gen(function* () {
    const exchange = yield* Exchange
    let cached: { catalog: RoutableCatalog; list: typeof ModelList.Type } | undefined
    const list = Effect.map(exchange.routable, ({ catalog }) => {
      if (cached?.catalog !== catalog) cached = { catalog, list: modelList(catalog) }
      return cached.list
    })
    return { list } as const
  })
}) {}
