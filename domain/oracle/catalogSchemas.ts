/**
 * The catalog's response shapes (SPEC "Catalog response", "Pricing response"; field names per COMPAT.md): the chat
 * models with their per-number sources, and apart from them the embedding models, priced per input token only.
 * Re-exported by schemas.ts with the rest of the oracle's shapes.
 */
import { Schema } from "effect"
import { ModelKind, Provenance } from "../catalog/card.ts"
import * as Examples from "./schemaExamples.ts"
import { CacheBlock, ProvenancePair, Provider, ReasoningBlock, Timestamp, UsdPerMillion, WeiString } from "./schemaParts.ts"

export const PriceSource = Schema.Struct({
  provenance: Provenance,
  sourceUrl: Schema.NullOr(Schema.String).annotations({
    description: "the vendor page that states this number (verified and promotional numbers); null for an inferred one"
  }),
  checkedAt: Schema.NullOr(Timestamp).annotations({ description: "the day that page was read stating it" }),
  derivedFrom: Schema.NullOr(Schema.String).annotations({ description: "what an inferred number was derived from" }),
  promotionUntil: Schema.NullOr(Timestamp).annotations({ description: "the day a promotional price ends" })
}).annotations({ identifier: "PriceSource" })

/** Where each number of the price in force comes from: its mark, and the vendor page and day behind it. */
export const PriceSources = Schema.Struct({
  input: PriceSource,
  output: PriceSource,
  cachedInput: Schema.NullOr(PriceSource),
  cacheWrite5m: Schema.NullOr(PriceSource),
  cacheWrite1h: Schema.NullOr(PriceSource),
  reasoningOutput: Schema.NullOr(PriceSource),
  contextTiers: Schema.Array(Schema.Struct({ fromInputTokens: Schema.Int, input: PriceSource, output: PriceSource })),
  note: Schema.NullOr(Schema.String).annotations({
    description: "the operator's note on this price: what changed, and for an inferred number why no vendor page states it"
  })
}).annotations({ identifier: "PriceSources" })

export const CatalogTier = Schema.Struct({
  fromInputTokens: Schema.Int,
  inputPriceUsdPerMillion: Schema.Number,
  outputPriceUsdPerMillion: Schema.Number,
  // One mark: the vendor quotes a tier as one line, and existing clients drop a tier whose mark is an object
  // (COMPAT.md). When the two numbers differ, the weaker mark is published (see weakerMark).
  provenance: Provenance
})

export const CatalogEntry = Schema.Struct({
  modelKey: Schema.String,
  displayName: Schema.String,
  provider: Provider,
  family: Schema.String,
  kind: ModelKind.annotations({ description: "what the model is: `text` (a chat model, in the index's scope) or another kind, priced but never indexed" }),
  indexMember: Schema.Boolean,
  releasedAt: Schema.NullOr(Timestamp),
  cache: CacheBlock,
  reasoning: ReasoningBlock,
  currentPrice: Schema.Struct({
    inputPriceUsdPerMillion: Schema.Number,
    outputPriceUsdPerMillion: Schema.Number,
    provenance: ProvenancePair,
    observedAt: Timestamp
  }),
  priceSources: PriceSources,
  contextTiers: Schema.optional(Schema.Array(CatalogTier)),
  maxInputTokens: Schema.optional(Schema.Int),
  integrated: Schema.Boolean
}).annotations({ identifier: "CatalogEntry" })

/**
 * One dated entry of an embedding model's price history, as its card states it: `effectiveFrom`, when the vendor's
 * price took effect; `observedAt`, when the catalog recorded the entry.
 */
export const EmbeddingPricePoint = Schema.Struct({
  effectiveFrom: Timestamp,
  inputPriceUsdPerMillion: UsdPerMillion,
  provenance: Provenance,
  observedAt: Timestamp
})

/**
 * An embedding model (DESIGN.md section 10): priced per input token only, listed apart from the chat models so that
 * every `models[]` entry keeps its input and output prices. Never an index member.
 */
export const EmbeddingCatalogEntry = Schema.Struct({
  modelKey: Schema.String,
  displayName: Schema.String,
  provider: Provider,
  family: Schema.String,
  kind: Schema.Literal("embedding"),
  releasedAt: Schema.NullOr(Timestamp),
  currentPrice: Schema.Struct({ inputPriceUsdPerMillion: UsdPerMillion, provenance: Provenance, observedAt: Timestamp }),
  priceSources: Schema.Struct({ input: PriceSource, note: Schema.NullOr(Schema.String) }),
  dimensions: Schema.optional(Schema.Int),
  dimensionOptions: Schema.optional(Schema.Array(Schema.Int)),
  flexibleDimensions: Schema.Boolean,
  maxDimensions: Schema.optional(Schema.Int),
  maxInputTokens: Schema.optional(Schema.Int),
  maxBatchInputs: Schema.optional(Schema.Int),
  priceHistory: Schema.Array(EmbeddingPricePoint),
  integrated: Schema.Boolean
}).annotations({
  identifier: "EmbeddingCatalogEntry",
  description:
    "An embedding model: priced per input token only (currentPrice, priceHistory oldest first), never an index member. " +
    "dimensions: the vector size returned when the request names none; dimensionOptions: the only sizes a request may " +
    "ask for, ascending; flexibleDimensions: any size up to maxDimensions (default: dimensions); maxInputTokens: the " +
    "tokens one input may hold; maxBatchInputs: how many inputs one request may carry. Absent fields are not published."
})

export const CatalogResponse = Schema.Struct({
  models: Schema.Array(CatalogEntry),
  embeddingModels: Schema.Array(EmbeddingCatalogEntry).annotations({
    description: "embedding models, priced per input token only and never in the index, newest release first"
  }),
  truncated: Schema.Boolean,
  generatedAt: Timestamp
}).annotations({ identifier: "CatalogResponse", examples: [Examples.CatalogResponse] })

export const MarkedUpFigure = Schema.Struct({ weiPerMillion: WeiString, usdPerMillion: Schema.Number, provenance: Provenance })

export const PricingResponse = Schema.Struct({
  object: Schema.Literal("pricing"),
  pegUsd: Schema.Number,
  models: Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      input: MarkedUpFigure,
      output: MarkedUpFigure,
      cache: Schema.NullOr(
        Schema.Struct({
          cachedInput: Schema.NullOr(MarkedUpFigure),
          cacheWrite5m: Schema.NullOr(MarkedUpFigure),
          cacheWrite1h: Schema.NullOr(MarkedUpFigure)
        })
      ),
      reasoning: Schema.NullOr(Schema.Struct({ reasoningOutput: MarkedUpFigure }))
    })
  }),
  embeddingModels: Schema.Record({ key: Schema.String, value: Schema.Struct({ input: MarkedUpFigure }) }).annotations({
    description: "embedding models as billed: input tokens only, with the markup"
  }),
  updatedAt: Timestamp
}).annotations({ identifier: "PricingResponse", examples: [Examples.PricingResponse] })

export type PriceSource = typeof PriceSource.Type
export type PriceSources = typeof PriceSources.Type
export type CatalogTier = typeof CatalogTier.Type
export type CatalogEntry = typeof CatalogEntry.Type
export type EmbeddingCatalogEntry = typeof EmbeddingCatalogEntry.Type
export type CatalogResponse = typeof CatalogResponse.Type
export type PricingResponse = typeof PricingResponse.Type
