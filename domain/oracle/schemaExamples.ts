/**
 * One realistic example per response body of the public oracle API, published in the OpenAPI documents as each
 * schema's `examples` (domain/oracle/schemas.ts). The values are what the service answered for the bundled price
 * data (data/cards), arrays cut to one or two items. The schemas check them twice: at compile time (the annotation is
 * typed by the schema) and in test/openapi.test.ts, which decodes every published example with its schema.
 */
const SCANNED_AT = "2026-11-22T17:01:20.639Z"
const OPENAI_PRICING = "https://developers.openai.com/api/docs/pricing"
const ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"
const OPENAI = { key: "openai", name: "OpenAI" } as const
const ANTHROPIC = { key: "anthropic", name: "Anthropic" } as const
const WORKLOAD = { inputTokens: 1000, outputTokens: 500 } as const
const VERIFIED_PAIR = { input: "verified", output: "verified" } as const

const component = (usdPerMillion: number, ratioOfInput: number, sourceUrl: string) =>
  ({ usdPerMillion, ratioOfInput, source: "catalog", sourceUrl, provenance: "verified", createdAt: SCANNED_AT }) as const

const GPT_55_CACHE = {
  cachedInput: component(0.5, 0.1, OPENAI_PRICING),
  cacheWrite5m: null,
  cacheWrite1h: null,
  read_multiplier: 0.1,
  write_multiplier_5m: null,
  write_multiplier_1h: null
} as const
const GPT_55_REASONING = { reasoningOutput: component(30, 6, OPENAI_PRICING) } as const
const CHECKED_AT = "2026-11-26T00:00:00.000Z"
const verifiedAt = (sourceUrl: string) =>
  ({ provenance: "verified", sourceUrl, checkedAt: CHECKED_AT, derivedFrom: null, promotionUntil: null }) as const
const GPT_55_SOURCES = {
  input: verifiedAt(OPENAI_PRICING),
  output: verifiedAt(OPENAI_PRICING),
  cachedInput: verifiedAt(OPENAI_PRICING),
  cacheWrite5m: null,
  cacheWrite1h: null,
  reasoningOutput: verifiedAt("https://developers.openai.com/api/docs/guides/reasoning"),
  contextTiers: [{ fromInputTokens: 272001, input: verifiedAt(OPENAI_PRICING), output: verifiedAt(OPENAI_PRICING) }],
  note: "launch price"
} as const

const FABLE_51_ENTRY = {
  id: "anthropic/claude-fable-5.1",
  displayName: "Claude Fable 5.1",
  provider: ANTHROPIC,
  family: "anthropic.claude-fable",
  weiPricePerMillion: { input: "10000000000000000000", output: "50000000000000000000" },
  usdPricePerMillion: { input: 10, output: 50 },
  markedUpWeiPricePerMillion: { input: "10500000000000000000", output: "52500000000000000000" },
  markedUpUsdPricePerMillion: { input: 10.5, output: 52.5 },
  releasedAt: "2026-09-01T00:00:00.000Z",
  cache: {
    cachedInput: component(0.25, 0.025, ANTHROPIC_PRICING),
    cacheWrite5m: component(12.5, 1.25, ANTHROPIC_PRICING),
    cacheWrite1h: component(20, 2, ANTHROPIC_PRICING),
    read_multiplier: 0.025,
    write_multiplier_5m: 1.25,
    write_multiplier_1h: 2
  },
  reasoning: { reasoningOutput: component(50, 5, ANTHROPIC_PRICING) }
} as const

/** `/models/openai%2Fgpt-5.5`: a retired ex-member. */
export const ModelEntry = {
  id: "openai/gpt-5.5",
  displayName: "GPT-5.5",
  provider: OPENAI,
  family: "openai.gpt",
  weiPricePerMillion: { input: "5000000000000000000", output: "30000000000000000000" },
  usdPricePerMillion: { input: 5, output: 30 },
  markedUpWeiPricePerMillion: { input: "5250000000000000000", output: "31500000000000000000" },
  markedUpUsdPricePerMillion: { input: 5.25, output: 31.5 },
  releasedAt: "2026-04-24T00:00:00.000Z",
  cache: GPT_55_CACHE,
  reasoning: GPT_55_REASONING,
  inBasket: false,
  retiredAtRevision: 73
} as const

export const ModelsResponse = { models: [{ ...FABLE_51_ENTRY, inBasket: true, retiredAtRevision: null }, ModelEntry] } as const

export const BasketResponse = {
  models: [FABLE_51_ENTRY],
  scuUsd: 0.002188968524029217,
  routingFeeRate: 0.05,
  revisionVersion: 100,
  methodologyVersion: 1,
  lastUpdated: "2026-11-17T00:00:00.000Z"
} as const

export const ScuResponse = {
  scuUsd: 0.002188968524029217,
  computeIndex: 82.97182924563977,
  referenceWorkload: WORKLOAD,
  methodologyVersion: 1,
  breakdown: {
    methodologyVersion: 1,
    familyRepresentatives: [
      { family: "anthropic.claude-fable", modelKey: "anthropic/claude-fable-5.1", inputPriceUsdPerMillion: 10, outputPriceUsdPerMillion: 50, blendedCostUsd: 0.035 },
      { family: "anthropic.claude-haiku", modelKey: "anthropic/claude-haiku-5.5", inputPriceUsdPerMillion: 0.1, outputPriceUsdPerMillion: 0.5, blendedCostUsd: 0.00035 }
    ]
  },
  updatedAt: "2026-11-17T00:00:00.000Z"
} as const

export const LatestResponse = {
  revisionVersion: 100,
  methodologyVersion: 1,
  publishedAt: "2026-11-17T00:00:00.000Z",
  confirmedAt: "2026-11-17T00:02:13.000Z",
  scuUsd: 0.002188968524029217,
  computeIndex: 82.97182924563977,
  basketSize: 30,
  workload: WORKLOAD,
  metadataHash: "0xf8f26f87da4911f9dda377917d046018fe4d0489b7592bb4a4c8d6c2299e16dc"
} as const

export const BaselineResponse = { date: "2025-06-17", scuUsd: 0.001816227225998323, methodologyVersion: 1 } as const

export const ScuAtResponse = {
  at: "2026-06-01T00:00:00.000Z",
  scuUsd: 0.002079240761424705,
  scuUsd18: "2079240761424705",
  computeIndex: 87.35050118745441,
  revisionVersion: 65,
  methodologyVersion: 1,
  publishedAt: "2026-05-27T00:00:00.000Z",
  metadataHash: "0xa3956c6219cb8794e957c3e675a61ad662e2d47001db1bed41e0978defb8ed6f"
} as const

export const HistoryResponse = {
  from: "2025-06-17T00:00:00.000Z",
  to: "2026-11-22T17:01:36.458Z",
  granularity: "per-revision",
  count: 2,
  truncated: true,
  data: [
    { date: "2026-11-02T00:00:00.000Z", scuUsd: 0.002188968524029217, computeIndex: 82.97182924563977, revisionVersion: 99, methodologyVersion: 1, metadataHash: "0x0461e60e25bc5c03a88d2bd6afdcc5b68919957b9e3ea395a5f395ad0e22914c" },
    { date: "2026-11-17T00:00:00.000Z", scuUsd: 0.002188968524029217, computeIndex: 82.97182924563977, revisionVersion: 100, methodologyVersion: 1, metadataHash: "0xf8f26f87da4911f9dda377917d046018fe4d0489b7592bb4a4c8d6c2299e16dc" }
  ]
} as const

export const PriceHistoryResponse = {
  modelKey: "openai/gpt-5.5",
  family: "openai.gpt",
  from: "2026-04-24T00:00:00.000Z",
  to: "2026-11-22T17:01:36.436Z",
  granularity: "daily",
  count: 2,
  truncated: true,
  unavailableRevisions: [],
  data: [
    { date: "2026-11-21T00:00:00.000Z", inputPriceUsdPerMillion: 5, outputPriceUsdPerMillion: 30, source: "catalog", revisionVersion: null, methodologyVersion: null, metadataHash: null },
    { date: "2026-11-22T00:00:00.000Z", inputPriceUsdPerMillion: 5, outputPriceUsdPerMillion: 30, source: "catalog", revisionVersion: null, methodologyVersion: null, metadataHash: null }
  ]
} as const

export const PriceAtResponse = {
  source: "manifest",
  modelKey: "openai/gpt-5.5",
  date: "2026-06-01T00:00:00.000Z",
  inputPriceUsdPerMillion: 5,
  outputPriceUsdPerMillion: 30,
  observedAt: "2026-05-27T00:00:00.000Z",
  revisionVersion: 65,
  methodologyVersion: 1,
  metadataHash: "0xa3956c6219cb8794e957c3e675a61ad662e2d47001db1bed41e0978defb8ed6f",
  family: "openai.gpt"
} as const

export const ResolveResult = {
  inputKey: "gpt-5.5",
  resolvedKey: "openai/gpt-5.5",
  family: "openai.gpt",
  provider: OPENAI,
  priceSource: "oracle-catalog",
  prices: { inputUsdPerMillion: 5, outputUsdPerMillion: 30, provenance: VERIFIED_PAIR },
  cache: GPT_55_CACHE,
  reasoning: GPT_55_REASONING,
  inBasket: false
} as const

export const ResolveBatch = {
  results: [
    ResolveResult,
    {
      inputKey: "my-custom-model",
      resolvedKey: "my-custom-model",
      family: null,
      provider: null,
      priceSource: "off-basket",
      prices: null,
      cache: null,
      reasoning: null,
      inBasket: false
    }
  ]
} as const

const EMBEDDING_3_LARGE_PAGE = "https://developers.openai.com/api/docs/models/text-embedding-3-large"

/** An embedding model of the catalog: input price only, its vectors, and its price history. */
const EMBEDDING_3_SMALL = {
  modelKey: "openai/text-embedding-3-small",
  displayName: "text-embedding-3-small",
  provider: OPENAI,
  family: "openai.text-embedding",
  kind: "embedding",
  releasedAt: "2024-01-25T00:00:00.000Z",
  currentPrice: { inputPriceUsdPerMillion: 0.02, provenance: "verified", observedAt: SCANNED_AT },
  priceSources: {
    input: { provenance: "verified", sourceUrl: EMBEDDING_3_LARGE_PAGE, checkedAt: "2026-11-28T00:00:00.000Z", derivedFrom: null, promotionUntil: null },
    note: null
  },
  dimensions: 1536,
  flexibleDimensions: true,
  maxInputTokens: 8192,
  maxBatchInputs: 2048,
  priceHistory: [{ effectiveFrom: "2024-01-25T00:00:00.000Z", inputPriceUsdPerMillion: 0.02, provenance: "verified", observedAt: SCANNED_AT }],
  integrated: false
} as const

export const CatalogResponse = {
  models: [
    {
      modelKey: "openai/gpt-5.5",
      displayName: "GPT-5.5",
      provider: OPENAI,
      family: "openai.gpt",
      kind: "text",
      indexMember: false,
      releasedAt: "2026-04-24T00:00:00.000Z",
      cache: GPT_55_CACHE,
      reasoning: GPT_55_REASONING,
      currentPrice: { inputPriceUsdPerMillion: 5, outputPriceUsdPerMillion: 30, provenance: VERIFIED_PAIR, observedAt: SCANNED_AT },
      priceSources: GPT_55_SOURCES,
      contextTiers: [{ fromInputTokens: 272001, inputPriceUsdPerMillion: 10, outputPriceUsdPerMillion: 45, provenance: "verified" }],
      integrated: false
    }
  ],
  embeddingModels: [EMBEDDING_3_SMALL],
  truncated: false,
  generatedAt: "2026-11-22T17:01:35.283Z"
} as const

const TX_2 = "0x8ed516e9102c8572d18a97a70cd21b92121e556e2cf976c9c824cdcd0aeb6283"

export const ReconstitutionLog = {
  entries: [
    {
      id: "2",
      revisionVersion: 2,
      previousVersion: 1,
      publishedAt: "2025-06-23T00:00:00.000Z",
      methodologyVersion: 1,
      summary: "1 family added",
      scuBefore: 0.001816227225998323,
      scuAfter: 0.001801183892681973,
      changes: [
        {
          type: "ModelAdded",
          modelKey: "minimax/minimax-m1",
          description: "MiniMax-M1 enters as the representative of minimax.minimax-m (input 0.4, output 2.2 USD per million tokens)"
        }
      ],
      txHash: TX_2
    }
  ]
} as const

export const RevisionResponse = {
  revisionVersion: 2,
  methodologyVersion: 1,
  publishedAt: "2025-06-23T00:00:00.000Z",
  publishedBlock: 4,
  txHash: TX_2,
  scuUsd: 0.001801183892681973,
  scuUsd18: "1801183892681973",
  basketSize: 23,
  basket: {
    schemaVersion: 1,
    models: [
      { modelKey: "anthropic/claude-3.5-haiku", family: "anthropic.claude-haiku", inputPrice: "800000000000000000", outputPrice: "4000000000000000000", displayName: "Claude Haiku 3.5", providerKey: "anthropic", sdkId: "claude-3-5-haiku-20241022" },
      { modelKey: "anthropic/claude-opus-4", family: "anthropic.claude-opus", inputPrice: "15000000000000000000", outputPrice: "75000000000000000000", displayName: "Claude Opus 4", providerKey: "anthropic", sdkId: "claude-opus-4-20250514" }
    ]
  },
  status: "CONFIRMED",
  confirmedAt: "2025-06-23T00:01:07.000Z",
  manifestUrl: "/v1/oracle/manifest/0xbbf72656f508d6b7c1b4b3f43195dd092d307ea0ce6690087b35932f4097d733"
} as const

export const HealthResponse = {
  latestRevisionVersion: 100,
  methodologyVersion: 1,
  latestRevisionConfirmedAt: "2026-11-17T00:02:13.000Z",
  lastSyncAt: "2026-11-22T17:01:30.000Z",
  stale: false,
  pendingRevision: null
} as const

export const ContractMetadata = {
  chainId: 8453,
  address: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
  version: "1.0.0",
  bytecodeHash: "0x68f241615e2a36bb5d7b45ffa0ac3b6157cbf80ef5c1a70f2c84652dbe631526",
  checkedAt: "2026-11-22T17:01:36.473Z"
} as const

export const Manifest = {
  schemaVersion: 1,
  revisionVersion: 100,
  methodologyVersion: 1,
  referenceWorkload: WORKLOAD,
  models: [
    { modelKey: "anthropic/claude-fable-5.1", family: "anthropic.claude-fable", inputPrice: "10000000000000000000", outputPrice: "50000000000000000000", displayName: "Claude Fable 5.1", providerKey: "anthropic", sdkId: "claude-fable-5-1" },
    { modelKey: "anthropic/claude-haiku-5.5", family: "anthropic.claude-haiku", inputPrice: "100000000000000000", outputPrice: "500000000000000000", displayName: "Claude Haiku 5.5", providerKey: "anthropic", sdkId: "claude-haiku-5-5" }
  ]
} as const

export const StatsResponse = {
  revisions: {
    confirmed: 100,
    genesis: { revisionVersion: 1, publishedAt: "2025-06-17T00:00:00.000Z" },
    latest: { revisionVersion: 100, publishedAt: "2026-11-17T00:00:00.000Z" }
  },
  basketSize: 30,
  catalog: { providers: 11, families: 35, models: 137, modelsEverInBasket: 127 },
  scu: {
    currentUsd: 0.002188968524029217,
    baselineUsd: 0.001816227225998323,
    computeIndex: 82.97182924563977,
    lowest: { scuUsd: 0.001444470880701661, revisionVersion: 50, publishedAt: "2026-03-16T00:00:00.000Z" },
    highest: { scuUsd: 0.002875172084721897, revisionVersion: 89, publishedAt: "2026-09-10T16:00:00.000Z" }
  },
  reconstitutionChanges: { ModelAdded: 127, ModelRemoved: 97, PriceChanged: 9 },
  generatedAt: "2026-11-22T17:01:35.283Z"
} as const

const TX_100 = "0xfddcfb20d70383621c5f1de5d375b39f69beb223e4577a493d99326f2e0f796b"

export const ActivityPage = {
  object: "list",
  data: [
    { id: "r100", type: "revision.published", occurredAt: "2026-11-17T00:00:00.000Z", revisionVersion: 100, modelKey: null, description: "Revision 100 published: 1 version change", txHash: TX_100 },
    {
      id: "r100.1",
      type: "model.removed",
      occurredAt: "2026-11-17T00:00:00.000Z",
      revisionVersion: 100,
      modelKey: "google/gemini-4-argon",
      description: "Gemini 4 Carbon replaces Gemini 4 Argon in google.gemini-pro: Gemini 4 Carbon is the latest generally available version (released 2026-11-10)",
      txHash: TX_100
    }
  ],
  limit: 2,
  offset: 0,
  total: 333,
  hasMore: true
} as const

const figure = (weiPerMillion: string, usdPerMillion: number) => ({ weiPerMillion, usdPerMillion, provenance: "verified" }) as const

export const PricingResponse = {
  object: "pricing",
  pegUsd: 1,
  models: {
    "anthropic/claude-opus-4.8": {
      input: figure("5250000000000000000", 5.25),
      output: figure("26250000000000000000", 26.25),
      cache: {
        cachedInput: figure("525000000000000000", 0.525),
        cacheWrite5m: figure("6562500000000000000", 6.5625),
        cacheWrite1h: figure("10500000000000000000", 10.5)
      },
      reasoning: { reasoningOutput: figure("26250000000000000000", 26.25) }
    },
    "openai/gpt-5.5": {
      input: figure("5250000000000000000", 5.25),
      output: figure("31500000000000000000", 31.5),
      cache: { cachedInput: figure("525000000000000000", 0.525), cacheWrite5m: null, cacheWrite1h: null },
      reasoning: { reasoningOutput: figure("31500000000000000000", 31.5) }
    }
  },
  embeddingModels: { "openai/text-embedding-3-small": { input: figure("21000000000000000", 0.021) } },
  updatedAt: SCANNED_AT
} as const

export const MethodologyEntry = {
  version: 1,
  title: "Equal-weight geometric mean of family representatives",
  meanType: "geometric",
  weighting: "equal",
  familyRule: {
    oneFamilyOneSlot: true,
    familyKeyScheme: "<provider>.<product-line>",
    representativeSelection:
      "the latest generally available version of the family that meets every listing criterion (public GA, first-party USD pricing, in-scope text model, seasoning, liveness) and no published decision excludes"
  },
  referenceWorkload: WORKLOAD,
  cacheReasoningInIndex: false,
  formulaSummary:
    "cost_m = input_m x 0.001 + output_m x 0.0005 (USD per 1M tokens); SCU = (product of cost_m)^(1/N); computeIndex = baseline / SCU x 100. Exact: usd18 integers, floor N-th root.",
  rationale:
    "A geometric mean weighs every family equally and is insensitive to price scale, so no single premium or budget line dominates; one slot per family keeps a provider's many versions from counting twice.",
  specUrl: "/v1/oracle/methodology/1"
} as const

export const MethodologyChangelog = { activeVersion: 1, entries: [MethodologyEntry] } as const
