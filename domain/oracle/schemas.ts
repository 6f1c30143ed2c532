/**
 * Response shapes of the public oracle API (SPEC "Resources and their fields", field names per COMPAT.md).
 * The snapshot encodes every body through these schemas, so what is served is what the document says.
 */
import { Schema } from "effect"
import { Provenance } from "../catalog/card.ts"

export { Provenance }

const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant" })
const Hash = Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]{64}$/)).annotations({ description: "0x-prefixed 32-byte hex" })
const WeiString = Schema.String.pipe(Schema.pattern(/^[0-9]+$/)).annotations({ description: "credit-token wei (18 decimals) as digits" })
const UsdPerMillion = Schema.Number.annotations({ description: "USD per 1,000,000 tokens" })

export const ProvenancePair = Schema.Struct({ input: Provenance, output: Provenance })

export const ReferenceWorkload = Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number })

export const Provider = Schema.Struct({ key: Schema.String, name: Schema.String }).annotations({ identifier: "Provider" })

export const PriceComponent = Schema.Struct({
  usdPerMillion: Schema.NullOr(Schema.Number),
  ratioOfInput: Schema.NullOr(Schema.Number),
  source: Schema.Literal("catalog"),
  sourceUrl: Schema.NullOr(Schema.String),
  provenance: Provenance,
  createdAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "PriceComponent" })

export const CacheBlock = Schema.NullOr(
  Schema.Struct({
    cachedInput: Schema.NullOr(PriceComponent),
    cacheWrite5m: Schema.NullOr(PriceComponent),
    cacheWrite1h: Schema.NullOr(PriceComponent),
    read_multiplier: Schema.NullOr(Schema.Number),
    write_multiplier_5m: Schema.NullOr(Schema.Number),
    write_multiplier_1h: Schema.NullOr(Schema.Number)
  })
).annotations({ identifier: "CacheBlock" })

export const ReasoningBlock = Schema.NullOr(Schema.Struct({ reasoningOutput: PriceComponent })).annotations({
  identifier: "ReasoningBlock"
})

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
  retiredAtRevision: Schema.optional(Schema.NullOr(Schema.Number))
}).annotations({ identifier: "ModelEntry" })

export const ModelsResponse = Schema.Struct({ models: Schema.Array(ModelEntry) }).annotations({ identifier: "ModelsResponse" })

export const BasketResponse = Schema.Struct({
  models: Schema.Array(ModelEntry),
  scuUsd: Schema.Number,
  routingFeeRate: Schema.Number,
  revisionVersion: Schema.Number,
  methodologyVersion: Schema.Number,
  lastUpdated: Timestamp
}).annotations({ identifier: "BasketResponse" })

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
  methodologyVersion: Schema.Number,
  breakdown: Schema.Struct({
    methodologyVersion: Schema.Literal(1),
    familyRepresentatives: Schema.Array(FamilyRepresentative)
  }),
  updatedAt: Timestamp
}).annotations({ identifier: "ScuResponse" })

export const LatestResponse = Schema.Struct({
  revisionVersion: Schema.Number,
  methodologyVersion: Schema.Number,
  publishedAt: Timestamp,
  confirmedAt: Timestamp,
  scuUsd: Schema.Number,
  computeIndex: Schema.NullOr(Schema.Number),
  basketSize: Schema.Number,
  workload: ReferenceWorkload,
  metadataHash: Hash
}).annotations({ identifier: "LatestResponse" })

export const BaselineResponse = Schema.Struct({
  date: Schema.String.annotations({ description: "YYYY-MM-DD" }),
  scuUsd: Schema.Number,
  methodologyVersion: Schema.Number
}).annotations({ identifier: "BaselineResponse" })

export const ScuAtResponse = Schema.Struct({
  at: Timestamp,
  scuUsd: Schema.Number,
  scuUsd18: WeiString,
  computeIndex: Schema.NullOr(Schema.Number),
  revisionVersion: Schema.Number,
  methodologyVersion: Schema.Number,
  publishedAt: Timestamp,
  metadataHash: Hash
}).annotations({ identifier: "ScuAtResponse" })

export const HistoryPoint = Schema.Struct({
  date: Timestamp,
  scuUsd: Schema.Number,
  computeIndex: Schema.NullOr(Schema.Number),
  revisionVersion: Schema.Number,
  methodologyVersion: Schema.Number,
  metadataHash: Hash
})

export const HistoryResponse = Schema.Struct({
  from: Schema.NullOr(Timestamp),
  to: Schema.NullOr(Timestamp),
  granularity: Granularity,
  count: Schema.Number,
  truncated: Schema.Boolean,
  data: Schema.Array(HistoryPoint)
}).annotations({ identifier: "HistoryResponse" })

export const ManifestModel = Schema.Struct({
  modelKey: Schema.String,
  family: Schema.String,
  inputPrice: WeiString,
  outputPrice: WeiString,
  displayName: Schema.String,
  providerKey: Schema.String,
  sdkId: Schema.String
})

export const Manifest = Schema.Struct({
  schemaVersion: Schema.Number,
  revisionVersion: Schema.Number,
  methodologyVersion: Schema.Number,
  referenceWorkload: ReferenceWorkload,
  models: Schema.Array(ManifestModel)
}).annotations({ identifier: "Manifest" })

export const RevisionResponse = Schema.Struct({
  revisionVersion: Schema.Number,
  methodologyVersion: Schema.Number,
  publishedAt: Timestamp,
  publishedBlock: Schema.Number,
  txHash: Hash,
  scuUsd: Schema.Number,
  scuUsd18: WeiString,
  basketSize: Schema.Number,
  basket: Schema.Struct({ schemaVersion: Schema.Number, models: Schema.Array(ManifestModel) }),
  status: Schema.Literal("CONFIRMED"),
  confirmedAt: Timestamp,
  manifestUrl: Schema.NullOr(Schema.String)
}).annotations({ identifier: "RevisionResponse" })

export const ReconstitutionEntry = Schema.Struct({
  id: Schema.String,
  revisionVersion: Schema.Number,
  previousVersion: Schema.NullOr(Schema.Number),
  publishedAt: Timestamp,
  methodologyVersion: Schema.Number,
  summary: Schema.String,
  scuBefore: Schema.NullOr(Schema.Number),
  scuAfter: Schema.Number,
  changes: Schema.Array(
    Schema.Struct({ type: Schema.Literal("ModelAdded", "ModelRemoved", "PriceChanged"), modelKey: Schema.String, description: Schema.String })
  ),
  txHash: Hash
})

export const ReconstitutionLog = Schema.Struct({ entries: Schema.Array(ReconstitutionEntry) }).annotations({
  identifier: "ReconstitutionLog"
})

export const HealthResponse = Schema.Struct({
  latestRevisionVersion: Schema.NullOr(Schema.Number),
  methodologyVersion: Schema.NullOr(Schema.Number),
  latestRevisionConfirmedAt: Schema.NullOr(Timestamp),
  lastSyncAt: Schema.NullOr(Timestamp),
  stale: Schema.Boolean,
  pendingRevision: Schema.NullOr(Schema.Struct({ ageMs: Schema.Number }))
}).annotations({ identifier: "HealthResponse" })

export const ContractMetadata = Schema.Struct({
  chainId: Schema.Number,
  address: Schema.String,
  version: Schema.NullOr(Schema.String),
  bytecodeHash: Schema.NullOr(Hash),
  checkedAt: Timestamp
}).annotations({ identifier: "ContractMetadata" })

export const MethodologyEntry = Schema.Struct({
  version: Schema.Number,
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
}).annotations({ identifier: "MethodologyEntry" })

export const MethodologyChangelog = Schema.Struct({
  activeVersion: Schema.Number,
  entries: Schema.Array(MethodologyEntry)
}).annotations({ identifier: "MethodologyChangelog" })

export const CatalogTier = Schema.Struct({
  fromInputTokens: Schema.Number,
  inputPriceUsdPerMillion: Schema.Number,
  outputPriceUsdPerMillion: Schema.Number,
  provenance: ProvenancePair
})

export const CatalogEntry = Schema.Struct({
  modelKey: Schema.String,
  displayName: Schema.String,
  provider: Provider,
  family: Schema.String,
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
  contextTiers: Schema.optional(Schema.Array(CatalogTier)),
  maxInputTokens: Schema.optional(Schema.Number),
  integrated: Schema.Boolean
}).annotations({ identifier: "CatalogEntry" })

export const CatalogResponse = Schema.Struct({
  models: Schema.Array(CatalogEntry),
  truncated: Schema.Boolean,
  generatedAt: Timestamp
}).annotations({ identifier: "CatalogResponse" })

const MarkedUpFigure = Schema.Struct({ weiPerMillion: WeiString, usdPerMillion: Schema.Number, provenance: Provenance })

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
  updatedAt: Timestamp
}).annotations({ identifier: "PricingResponse" })

export const PriceAtResponse = Schema.Struct({
  source: Schema.Literal("manifest", "catalog"),
  modelKey: Schema.String,
  date: Timestamp,
  inputPriceUsdPerMillion: Schema.Number,
  outputPriceUsdPerMillion: Schema.Number,
  observedAt: Timestamp,
  revisionVersion: Schema.optional(Schema.Number),
  methodologyVersion: Schema.optional(Schema.Number),
  metadataHash: Schema.optional(Hash),
  family: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PriceAtResponse" })

export const PriceHistoryResponse = Schema.Struct({
  modelKey: Schema.String,
  family: Schema.NullOr(Schema.String),
  from: Timestamp,
  to: Timestamp,
  granularity: Granularity,
  count: Schema.Number,
  truncated: Schema.Boolean,
  unavailableRevisions: Schema.Array(Schema.Number),
  data: Schema.Array(
    Schema.Struct({
      date: Timestamp,
      inputPriceUsdPerMillion: Schema.Number,
      outputPriceUsdPerMillion: Schema.Number,
      source: Schema.Literal("manifest", "catalog"),
      revisionVersion: Schema.NullOr(Schema.Number),
      methodologyVersion: Schema.NullOr(Schema.Number),
      metadataHash: Schema.NullOr(Hash)
    })
  )
}).annotations({ identifier: "PriceHistoryResponse" })

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
}).annotations({ identifier: "ResolveResult" })

export const ResolveBatch = Schema.Struct({ results: Schema.Array(ResolveResult) }).annotations({ identifier: "ResolveBatch" })

const Extreme = Schema.NullOr(Schema.Struct({ scuUsd: Schema.Number, revisionVersion: Schema.Number, publishedAt: Timestamp }))
const RevisionRef = Schema.NullOr(Schema.Struct({ revisionVersion: Schema.Number, publishedAt: Timestamp }))

export const StatsResponse = Schema.Struct({
  revisions: Schema.Struct({ confirmed: Schema.Number, genesis: RevisionRef, latest: RevisionRef }),
  basketSize: Schema.Number,
  catalog: Schema.Struct({
    providers: Schema.Number,
    families: Schema.Number,
    models: Schema.Number,
    modelsEverInBasket: Schema.Number
  }),
  scu: Schema.Struct({
    currentUsd: Schema.NullOr(Schema.Number),
    baselineUsd: Schema.NullOr(Schema.Number),
    computeIndex: Schema.NullOr(Schema.Number),
    lowest: Extreme,
    highest: Extreme
  }),
  reconstitutionChanges: Schema.Struct({ ModelAdded: Schema.Number, ModelRemoved: Schema.Number, PriceChanged: Schema.Number }),
  generatedAt: Timestamp
}).annotations({ identifier: "StatsResponse", description: "Aggregate protocol statistics over confirmed revisions and the live catalog" })

export const ActivityEvent = Schema.Struct({
  id: Schema.String.annotations({ description: "Stable id: r<revision> for a publication, r<revision>.<n> for its n-th change" }),
  type: Schema.Literal("revision.published", "model.added", "model.removed", "price.changed"),
  occurredAt: Timestamp,
  revisionVersion: Schema.Number,
  modelKey: Schema.NullOr(Schema.String),
  description: Schema.String,
  txHash: Hash
}).annotations({ identifier: "ActivityEvent" })

export const ActivityPage = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(ActivityEvent),
  limit: Schema.Number,
  offset: Schema.Number,
  total: Schema.Number,
  hasMore: Schema.Boolean
}).annotations({ identifier: "ActivityPage", description: "Protocol events, newest first" })
