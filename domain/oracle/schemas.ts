/**
 * Response shapes of the public oracle API (SPEC "Resources and their fields", field names per COMPAT.md).
 * The snapshot encodes every body through these schemas, so what is served is what the document says.
 */
import { Schema } from "effect"
import { Provenance } from "../catalog/card.ts"
import { Manifest as ManifestSchema, ManifestModel as ManifestModelSchema, ReconstitutionChange, ReferenceWorkload } from "../index/schemas.ts"
import * as Examples from "./schemaExamples.ts"
import { CacheBlock, Hash, PriceComponent, ProvenancePair, Provider, ReasoningBlock, Timestamp, UsdPerMillion, WeiString } from "./schemaParts.ts"

// The shared parts (schemaParts.ts) and the catalog's shapes (catalogSchemas.ts) are re-exported: one module to import.
export { Provenance }
export { CacheBlock, Hash, PriceComponent, ProvenancePair, Provider, ReasoningBlock, Timestamp, UsdPerMillion, WeiString }
export { ReferenceWorkload }
export {
  CatalogEntry,
  CatalogResponse,
  CatalogTier,
  EmbeddingCatalogEntry,
  MarkedUpFigure,
  PriceSource,
  PriceSources,
  PricingResponse
} from "./catalogSchemas.ts"

/** How a series is sampled: every revision, or one point per UTC day or ISO week. */
export const Granularity = Schema.Literal("per-revision", "daily", "weekly")
export type Granularity = typeof Granularity.Type

const InOut = <S extends Schema.Schema.Any>(value: S) => Schema.Struct({ input: value, output: value })

export const ModelEntry = Schema.Struct({
  id: Schema.String,
  displayName: Schema.String,
  provider: Provider,
  family: Schema.String,
  weiPricePerMillion: InOut(WeiString),
  usdPricePerMillion: InOut(UsdPerMillion),
  markedUpWeiPricePerMillion: InOut(WeiString),
  markedUpUsdPricePerMillion: InOut(UsdPerMillion),
  releasedAt: Schema.NullOr(Timestamp),
  cache: CacheBlock,
  reasoning: ReasoningBlock,
  inBasket: Schema.optional(Schema.Boolean),
  retiredAtRevision: Schema.optional(Schema.NullOr(Schema.Int))
}).annotations({ identifier: "ModelEntry", examples: [Examples.ModelEntry] })

export const ModelsResponse = Schema.Struct({ models: Schema.Array(ModelEntry) }).annotations({
  identifier: "ModelsResponse",
  examples: [Examples.ModelsResponse]
})

export const BasketResponse = Schema.Struct({
  models: Schema.Array(ModelEntry),
  scuUsd: Schema.Number,
  routingFeeRate: Schema.Number,
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  lastUpdated: Timestamp
}).annotations({ identifier: "BasketResponse", examples: [Examples.BasketResponse] })

export const FamilyRepresentative = Schema.Struct({
  family: Schema.String,
  modelKey: Schema.String,
  inputPriceUsdPerMillion: Schema.Number,
  outputPriceUsdPerMillion: Schema.Number,
  blendedCostUsd: Schema.Number
})

export const ScuResponse = Schema.Struct({
  scuUsd: Schema.Number,
  computeIndex: Schema.NullOr(Schema.Number),
  referenceWorkload: ReferenceWorkload,
  methodologyVersion: Schema.Int,
  breakdown: Schema.Struct({
    methodologyVersion: Schema.Literal(1).annotations({ jsonSchema: { type: "integer", enum: [1] } }),
    familyRepresentatives: Schema.Array(FamilyRepresentative)
  }),
  updatedAt: Timestamp
}).annotations({ identifier: "ScuResponse", examples: [Examples.ScuResponse] })

export const LatestResponse = Schema.Struct({
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  publishedAt: Timestamp,
  confirmedAt: Timestamp,
  scuUsd: Schema.Number,
  computeIndex: Schema.NullOr(Schema.Number),
  basketSize: Schema.Int,
  workload: ReferenceWorkload,
  metadataHash: Hash
}).annotations({ identifier: "LatestResponse", examples: [Examples.LatestResponse] })

export const BaselineResponse = Schema.Struct({
  date: Schema.String.annotations({ description: "YYYY-MM-DD", jsonSchema: { format: "date" } }),
  scuUsd: Schema.Number,
  methodologyVersion: Schema.Int
}).annotations({ identifier: "BaselineResponse", examples: [Examples.BaselineResponse] })

export const ScuAtResponse = Schema.Struct({
  at: Timestamp,
  scuUsd: Schema.Number,
  scuUsd18: WeiString,
  computeIndex: Schema.NullOr(Schema.Number),
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  publishedAt: Timestamp,
  metadataHash: Hash
}).annotations({ identifier: "ScuAtResponse", examples: [Examples.ScuAtResponse] })

export const HistoryPoint = Schema.Struct({
  date: Timestamp,
  scuUsd: Schema.Number,
  computeIndex: Schema.NullOr(Schema.Number),
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  metadataHash: Hash
})

export const HistoryResponse = Schema.Struct({
  from: Schema.NullOr(Timestamp),
  to: Schema.NullOr(Timestamp),
  granularity: Granularity,
  count: Schema.Int,
  truncated: Schema.Boolean,
  data: Schema.Array(HistoryPoint)
}).annotations({ identifier: "HistoryResponse", examples: [Examples.HistoryResponse] })

// The manifest's own schema is the index's (domain/index/manifest.ts); served here with its example.
export const ManifestModel = ManifestModelSchema
export const Manifest = ManifestSchema.annotations({ identifier: "Manifest", examples: [Examples.Manifest] })

export const RevisionResponse = Schema.Struct({
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  publishedAt: Timestamp,
  publishedBlock: Schema.Int,
  txHash: Hash,
  scuUsd: Schema.Number,
  scuUsd18: WeiString,
  basketSize: Schema.Int,
  basket: Schema.Struct({ schemaVersion: Schema.Int, models: Schema.Array(ManifestModel) }),
  status: Schema.Literal("CONFIRMED"),
  confirmedAt: Timestamp,
  manifestUrl: Schema.NullOr(Schema.String)
}).annotations({ identifier: "RevisionResponse", examples: [Examples.RevisionResponse] })

export const ReconstitutionEntry = Schema.Struct({
  id: Schema.String,
  revisionVersion: Schema.Int,
  previousVersion: Schema.NullOr(Schema.Int),
  publishedAt: Timestamp,
  methodologyVersion: Schema.Int,
  summary: Schema.String,
  scuBefore: Schema.NullOr(Schema.Number),
  scuAfter: Schema.Number,
  changes: Schema.Array(ReconstitutionChange),
  txHash: Hash
})

export const ReconstitutionLog = Schema.Struct({ entries: Schema.Array(ReconstitutionEntry) }).annotations({
  identifier: "ReconstitutionLog",
  examples: [Examples.ReconstitutionLog]
})

export const HealthResponse = Schema.Struct({
  latestRevisionVersion: Schema.NullOr(Schema.Int),
  methodologyVersion: Schema.NullOr(Schema.Int),
  latestRevisionConfirmedAt: Schema.NullOr(Timestamp),
  lastSyncAt: Schema.NullOr(Timestamp),
  stale: Schema.Boolean,
  pendingRevision: Schema.NullOr(Schema.Struct({ ageMs: Schema.Int }))
}).annotations({ identifier: "HealthResponse", examples: [Examples.HealthResponse] })

export const ContractMetadata = Schema.Struct({
  chainId: Schema.Int,
  address: Schema.String,
  version: Schema.NullOr(Schema.String),
  bytecodeHash: Schema.NullOr(Hash),
  checkedAt: Timestamp
}).annotations({ identifier: "ContractMetadata", examples: [Examples.ContractMetadata] })

export const MethodologyEntry = Schema.Struct({
  version: Schema.Int,
  title: Schema.String,
  meanType: Schema.String,
  weighting: Schema.String,
  familyRule: Schema.Struct({
    oneFamilyOneSlot: Schema.Boolean,
    familyKeyScheme: Schema.String,
    representativeSelection: Schema.String
  }),
  referenceWorkload: ReferenceWorkload,
  cacheReasoningInIndex: Schema.Boolean,
  formulaSummary: Schema.String,
  rationale: Schema.String,
  specUrl: Schema.String
}).annotations({ identifier: "MethodologyEntry", examples: [Examples.MethodologyEntry] })

export const MethodologyChangelog = Schema.Struct({
  activeVersion: Schema.Int,
  entries: Schema.Array(MethodologyEntry)
}).annotations({ identifier: "MethodologyChangelog", examples: [Examples.MethodologyChangelog] })

export const PriceAtResponse = Schema.Struct({
  source: Schema.Literal("manifest", "catalog"),
  modelKey: Schema.String,
  date: Timestamp,
  inputPriceUsdPerMillion: Schema.Number,
  outputPriceUsdPerMillion: Schema.Number,
  observedAt: Timestamp,
  revisionVersion: Schema.optional(Schema.Int),
  methodologyVersion: Schema.optional(Schema.Int),
  metadataHash: Schema.optional(Hash),
  family: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PriceAtResponse", examples: [Examples.PriceAtResponse] })

export const PriceHistoryResponse = Schema.Struct({
  modelKey: Schema.String,
  family: Schema.NullOr(Schema.String),
  from: Timestamp,
  to: Timestamp,
  granularity: Granularity,
  count: Schema.Int,
  truncated: Schema.Boolean,
  unavailableRevisions: Schema.Array(Schema.Int),
  data: Schema.Array(
    Schema.Struct({
      date: Timestamp,
      inputPriceUsdPerMillion: Schema.Number,
      outputPriceUsdPerMillion: Schema.Number,
      source: Schema.Literal("manifest", "catalog"),
      revisionVersion: Schema.NullOr(Schema.Int),
      methodologyVersion: Schema.NullOr(Schema.Int),
      metadataHash: Schema.NullOr(Hash)
    })
  )
}).annotations({ identifier: "PriceHistoryResponse", examples: [Examples.PriceHistoryResponse] })

export const ResolveResult = Schema.Struct({
  inputKey: Schema.String,
  resolvedKey: Schema.String,
  family: Schema.NullOr(Schema.String),
  provider: Schema.NullOr(Provider),
  priceSource: Schema.Literal("oracle-basket", "oracle-catalog", "off-basket"),
  prices: Schema.NullOr(
    Schema.Struct({ inputUsdPerMillion: Schema.Number, outputUsdPerMillion: Schema.Number, provenance: ProvenancePair })
  ),
  cache: CacheBlock,
  reasoning: ReasoningBlock,
  inBasket: Schema.Boolean
}).annotations({ identifier: "ResolveResult", examples: [Examples.ResolveResult] })

export const ResolveBatch = Schema.Struct({ results: Schema.Array(ResolveResult) }).annotations({
  identifier: "ResolveBatch",
  examples: [Examples.ResolveBatch]
})

const Extreme = Schema.NullOr(Schema.Struct({ scuUsd: Schema.Number, revisionVersion: Schema.Int, publishedAt: Timestamp }))
const RevisionRef = Schema.NullOr(Schema.Struct({ revisionVersion: Schema.Int, publishedAt: Timestamp }))

export const StatsResponse = Schema.Struct({
  revisions: Schema.Struct({ confirmed: Schema.Int, genesis: RevisionRef, latest: RevisionRef }),
  basketSize: Schema.Int,
  catalog: Schema.Struct({
    providers: Schema.Int,
    families: Schema.Int,
    models: Schema.Int,
    modelsEverInBasket: Schema.Int
  }),
  scu: Schema.Struct({
    currentUsd: Schema.NullOr(Schema.Number),
    baselineUsd: Schema.NullOr(Schema.Number),
    computeIndex: Schema.NullOr(Schema.Number),
    lowest: Extreme,
    highest: Extreme
  }),
  reconstitutionChanges: Schema.Struct({ ModelAdded: Schema.Int, ModelRemoved: Schema.Int, PriceChanged: Schema.Int }),
  generatedAt: Timestamp
}).annotations({
  identifier: "StatsResponse",
  examples: [Examples.StatsResponse],
  description: "Aggregate protocol statistics over confirmed revisions and the live catalog"
})

export const ActivityEvent = Schema.Struct({
  id: Schema.String.annotations({ description: "Stable id: r<revision> for a publication, r<revision>.<n> for its n-th change" }),
  type: Schema.Literal("revision.published", "model.added", "model.removed", "price.changed"),
  occurredAt: Timestamp,
  revisionVersion: Schema.Int,
  modelKey: Schema.NullOr(Schema.String),
  description: Schema.String,
  txHash: Hash
}).annotations({ identifier: "ActivityEvent" })

export const ActivityPage = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(ActivityEvent),
  limit: Schema.Int,
  offset: Schema.Int,
  total: Schema.Int,
  hasMore: Schema.Boolean
}).annotations({
  identifier: "ActivityPage",
  examples: [Examples.ActivityPage],
  description: "Protocol events, newest first"
})

// The views in domain/oracle are typed as what these schemas accept, so a view that drifts from its wire shape is a
// compile error rather than an encode failure at run time.
export type CacheBlock = typeof CacheBlock.Type
export type ReasoningBlock = typeof ReasoningBlock.Type
export type ModelEntry = typeof ModelEntry.Type
export type ModelsResponse = typeof ModelsResponse.Type
export type BasketResponse = typeof BasketResponse.Type
export type ScuResponse = typeof ScuResponse.Type
export type LatestResponse = typeof LatestResponse.Type
export type BaselineResponse = typeof BaselineResponse.Type
export type ScuAtResponse = typeof ScuAtResponse.Type
export type HistoryResponse = typeof HistoryResponse.Type
export type RevisionResponse = typeof RevisionResponse.Type
export type ReconstitutionLog = typeof ReconstitutionLog.Type
export type HealthResponse = typeof HealthResponse.Type
export type MethodologyChangelog = typeof MethodologyChangelog.Type
export type PriceAtResponse = typeof PriceAtResponse.Type
export type PriceHistoryResponse = typeof PriceHistoryResponse.Type
export type ResolveResult = typeof ResolveResult.Type
export type ResolveBatch = typeof ResolveBatch.Type
export type StatsResponse = typeof StatsResponse.Type
export type ActivityEvent = typeof ActivityEvent.Type
export type ActivityPage = typeof ActivityPage.Type
