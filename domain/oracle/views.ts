/**
 * The public oracle's resources, built from confirmed revisions and the live catalog (SPEC "Resources and their
 * fields"). Pure: the snapshot service loads the inputs, these functions shape them, typed as their wire schemas.
 * Series live in series.ts, log-based views in log.ts, text renderings in render.ts.
 */
import { type MarkedPrice, sourceOfNumber, weakerMark } from "../catalog/card.ts"
import { applyMarkup, referenceCost18, REFERENCE_WORKLOAD, ROUTING_FEE_RATE, usd18ToWei, type Usd18 } from "../money.ts"
import {
  type CatalogListing,
  type ChatListing,
  chatListings,
  type ConfirmedRevision,
  embeddingListings,
  latestRevision,
  type OracleInputs,
  type StoredPoint
} from "./inputs.ts"
import { indexNumber, iso, num, ratio } from "./numbers.ts"
import type * as S from "./schemas.ts"

type SourcedPoint = { readonly sourceUrl: string; readonly checkedAt: Date | null; readonly observedAt: Date }

const priceSource = (mark: MarkedPrice, point: SourcedPoint): S.PriceSource => {
  const source = sourceOfNumber(mark, point)
  return {
    provenance: mark.provenance,
    sourceUrl: source?.url ?? null,
    checkedAt: source?.checkedAt == null ? null : iso(source.checkedAt),
    derivedFrom: mark.derivedFrom,
    promotionUntil: mark.until === null ? null : iso(mark.until)
  }
}

export const priceSources = (price: ChatListing["price"]): S.PriceSources => {
  const optional = (mark: MarkedPrice | null) => (mark === null ? null : priceSource(mark, price))
  return {
    input: priceSource(price.input, price),
    output: priceSource(price.output, price),
    cachedInput: optional(price.cachedInput),
    cacheWrite5m: optional(price.cacheWrite5m),
    cacheWrite1h: optional(price.cacheWrite1h),
    reasoningOutput: optional(price.reasoningOutput),
    contextTiers: price.contextTiers.map((tier) => ({
      fromInputTokens: tier.fromInputTokens,
      input: priceSource(tier.input, price),
      output: priceSource(tier.output, price)
    })),
    note: price.note
  }
}

const component = (mark: MarkedPrice | null, input: Usd18, point: SourcedPoint) =>
  mark === null
    ? null
    : {
        usdPerMillion: num(mark.usd18),
        ratioOfInput: ratio(mark.usd18, input),
        source: "catalog" as const,
        sourceUrl: sourceOfNumber(mark, point)?.url ?? null,
        provenance: mark.provenance,
        createdAt: iso(point.observedAt)
      }

export const cacheBlock = (price: CatalogListing["price"]): S.CacheBlock => {
  if (price.cachedInput === null && price.cacheWrite5m === null && price.cacheWrite1h === null) return null
  const input = price.input.usd18
  return {
    cachedInput: component(price.cachedInput, input, price),
    cacheWrite5m: component(price.cacheWrite5m, input, price),
    cacheWrite1h: component(price.cacheWrite1h, input, price),
    read_multiplier: price.cachedInput === null ? null : ratio(price.cachedInput.usd18, input),
    write_multiplier_5m: price.cacheWrite5m === null ? null : ratio(price.cacheWrite5m.usd18, input),
    write_multiplier_1h: price.cacheWrite1h === null ? null : ratio(price.cacheWrite1h.usd18, input)
  }
}

export const reasoningBlock = (listing: CatalogListing): S.ReasoningBlock =>
  !listing.card.reasoning || listing.price.reasoningOutput === null
    ? null
    : { reasoningOutput: component(listing.price.reasoningOutput, listing.price.input.usd18, listing.price)! }

export const providerOf = (providers: OracleInputs["providers"], key: string) => {
  const provider = providers.find((p) => p.key === key)
  return { key, name: provider?.name ?? key }
}

const priceBlocks = (input18: Usd18, output18: Usd18, peg: Usd18) => ({
  weiPricePerMillion: { input: usd18ToWei(input18, peg).toString(), output: usd18ToWei(output18, peg).toString() },
  usdPricePerMillion: { input: num(input18), output: num(output18) },
  markedUpWeiPricePerMillion: {
    input: usd18ToWei(applyMarkup(input18), peg).toString(),
    output: usd18ToWei(applyMarkup(output18), peg).toString()
  },
  markedUpUsdPricePerMillion: { input: num(applyMarkup(input18)), output: num(applyMarkup(output18)) }
})

/** Basket members from the latest manifest; prices attested there, cache and reasoning from the live catalog. */
export const memberEntries = (inputs: OracleInputs): Array<S.ModelEntry> => {
  const latest = latestRevision(inputs)
  if (latest === undefined || latest.manifest === null) return []
  const listings = new Map(chatListings(inputs.catalog).map((l) => [l.card.id, l]))
  return latest.manifest.models.map((m) => {
    const listing = listings.get(m.modelKey)
    return {
      id: m.modelKey,
      displayName: m.displayName,
      provider: providerOf(inputs.providers, m.providerKey),
      family: m.family,
      ...priceBlocks(BigInt(m.inputPrice) as Usd18, BigInt(m.outputPrice) as Usd18, inputs.pegUsd18),
      releasedAt: listing === undefined ? null : iso(listing.card.releasedAt),
      cache: listing === undefined ? null : cacheBlock(listing.price),
      reasoning: listing === undefined ? null : reasoningBlock(listing)
    }
  })
}

/** Members plus ex-members (priced from the live catalog), each with inBasket and retiredAtRevision. */
export const modelsView = (inputs: OracleInputs): S.ModelsResponse => {
  const members = memberEntries(inputs).map((entry) => ({ ...entry, inBasket: true, retiredAtRevision: null }))
  const inBasket = new Set(members.map((m) => m.id))
  const lastAppearance = new Map<string, number>()
  for (const revision of inputs.revisions) {
    for (const m of revision.manifest?.models ?? []) lastAppearance.set(m.modelKey, revision.revisionVersion)
  }
  const listings = new Map(chatListings(inputs.catalog).map((l) => [l.card.id, l]))
  const exMembers = [...lastAppearance.entries()]
    .filter(([key]) => !inBasket.has(key) && listings.has(key))
    .map(([key, last]): S.ModelEntry => {
      const listing = listings.get(key)!
      const retiredAt = inputs.revisions.find((r) => r.revisionVersion > last)?.revisionVersion ?? null
      return {
        id: key,
        displayName: listing.card.displayName,
        provider: providerOf(inputs.providers, listing.card.providerKey),
        family: listing.card.family,
        ...priceBlocks(listing.price.input.usd18, listing.price.output.usd18, inputs.pegUsd18),
        releasedAt: iso(listing.card.releasedAt),
        cache: cacheBlock(listing.price),
        reasoning: reasoningBlock(listing),
        inBasket: false,
        retiredAtRevision: retiredAt
      }
    })
    .sort((a, b) => (a.id < b.id ? -1 : 1))
  return { models: [...members, ...exMembers] }
}

export const scuView = (inputs: OracleInputs): S.ScuResponse | undefined => {
  const latest = latestRevision(inputs)
  if (latest === undefined) return undefined
  const baseline = inputs.revisions[0]!.scuUsd18
  return {
    scuUsd: num(latest.scuUsd18),
    computeIndex: indexNumber(baseline, latest.scuUsd18),
    referenceWorkload: { ...REFERENCE_WORKLOAD },
    methodologyVersion: latest.methodologyVersion,
    breakdown: {
      methodologyVersion: 1,
      familyRepresentatives: (latest.manifest?.models ?? []).map((m) => ({
        family: m.family,
        modelKey: m.modelKey,
        inputPriceUsdPerMillion: num(BigInt(m.inputPrice)),
        outputPriceUsdPerMillion: num(BigInt(m.outputPrice)),
        blendedCostUsd: num(referenceCost18(BigInt(m.inputPrice) as Usd18, BigInt(m.outputPrice) as Usd18))
      }))
    },
    updatedAt: iso(latest.publishedAt)
  }
}

export const basketView = (inputs: OracleInputs): S.BasketResponse | undefined => {
  const latest = latestRevision(inputs)
  if (latest === undefined) return undefined
  return {
    models: memberEntries(inputs),
    scuUsd: num(latest.scuUsd18),
    routingFeeRate: ROUTING_FEE_RATE,
    revisionVersion: latest.revisionVersion,
    methodologyVersion: latest.methodologyVersion,
    lastUpdated: iso(latest.publishedAt)
  }
}

export const latestView = (inputs: OracleInputs): S.LatestResponse | undefined => {
  const latest = latestRevision(inputs)
  if (latest === undefined) return undefined
  return {
    revisionVersion: latest.revisionVersion,
    methodologyVersion: latest.methodologyVersion,
    publishedAt: iso(latest.publishedAt),
    confirmedAt: iso(latest.confirmedAt),
    scuUsd: num(latest.scuUsd18),
    computeIndex: indexNumber(inputs.revisions[0]!.scuUsd18, latest.scuUsd18),
    basketSize: latest.manifest?.models.length ?? 0,
    workload: { ...REFERENCE_WORKLOAD },
    metadataHash: latest.metadataHash
  }
}

export const baselineView = (inputs: OracleInputs): S.BaselineResponse | undefined => {
  const genesis = inputs.revisions[0]
  if (genesis === undefined) return undefined
  return { date: iso(genesis.publishedAt).slice(0, 10), scuUsd: num(genesis.scuUsd18), methodologyVersion: genesis.methodologyVersion }
}

export const revisionView = (revision: ConfirmedRevision, baseUrl: string): S.RevisionResponse => ({
  revisionVersion: revision.revisionVersion,
  methodologyVersion: revision.methodologyVersion,
  publishedAt: iso(revision.publishedAt),
  publishedBlock: Number(revision.publishedBlock),
  txHash: revision.txHash,
  scuUsd: num(revision.scuUsd18),
  scuUsd18: revision.scuUsd18.toString(),
  basketSize: revision.manifest?.models.length ?? 0,
  basket: { schemaVersion: revision.manifest?.schemaVersion ?? 1, models: revision.manifest?.models ?? [] },
  status: "CONFIRMED",
  confirmedAt: iso(revision.confirmedAt),
  manifestUrl: revision.manifest === null ? null : `${baseUrl}/v1/oracle/manifest/${revision.metadataHash}`
})

export const CATALOG_LIMIT = 1000

const newestFirst = (a: CatalogListing, b: CatalogListing) =>
  b.card.releasedAt.getTime() - a.card.releasedAt.getTime() || (a.card.id < b.card.id ? -1 : 1)

/**
 * The embedding models of the catalog, newest release first: input price, vectors, batch size and every dated price
 * (`histories`, the catalog's full history per model; the current price alone when a model has none there).
 */
export const embeddingCatalogEntries = (
  inputs: OracleInputs,
  histories: ReadonlyMap<string, ReadonlyArray<StoredPoint>> = new Map()
): Array<S.EmbeddingCatalogEntry> =>
  [...embeddingListings(inputs.catalog)].sort(newestFirst).map(({ card, price }): S.EmbeddingCatalogEntry => {
    const traits = card.embedding
    const history = histories.get(card.id) ?? [price]
    return {
      modelKey: card.id,
      displayName: card.displayName,
      provider: providerOf(inputs.providers, card.providerKey),
      family: card.family,
      kind: "embedding",
      releasedAt: iso(card.releasedAt),
      currentPrice: { inputPriceUsdPerMillion: num(price.input.usd18), provenance: price.input.provenance, observedAt: iso(price.observedAt) },
      priceSources: { input: priceSource(price.input, price), note: price.note },
      ...(traits === null ? {} : { dimensions: traits.dimensions }),
      ...(traits?.dimensionOptions == null ? {} : { dimensionOptions: traits.dimensionOptions }),
      flexibleDimensions: traits?.flexibleDimensions ?? false,
      ...(traits?.maxDimensions == null ? {} : { maxDimensions: traits.maxDimensions }),
      ...(card.maxInputTokens === null ? {} : { maxInputTokens: card.maxInputTokens }),
      ...(traits?.maxBatchInputs == null ? {} : { maxBatchInputs: traits.maxBatchInputs }),
      priceHistory: history.map((point) => ({
        effectiveFrom: iso(point.effectiveFrom),
        inputPriceUsdPerMillion: num(point.input.usd18),
        provenance: point.input.provenance,
        observedAt: iso(point.observedAt)
      })),
      integrated: inputs.routable.has(card.id)
    }
  })

/**
 * Every listed chat model with a catalog price, newest release first, at most 1000 (the oldest dropped); the
 * embedding models (input price only) apart, in `embeddingModels`.
 */
export const catalogView = (inputs: OracleInputs, histories?: ReadonlyMap<string, ReadonlyArray<StoredPoint>>): S.CatalogResponse => {
  const latest = latestRevision(inputs)
  const members = new Set((latest?.manifest?.models ?? []).map((m) => m.modelKey))
  const sorted = [...chatListings(inputs.catalog)].sort(newestFirst)
  const truncated = sorted.length > CATALOG_LIMIT
  const models = sorted.slice(0, CATALOG_LIMIT).map((listing): S.CatalogResponse["models"][number] => {
    const { card, price } = listing
    return {
      modelKey: card.id,
      displayName: card.displayName,
      provider: providerOf(inputs.providers, card.providerKey),
      family: card.family,
      kind: card.kind,
      indexMember: members.has(card.id),
      releasedAt: iso(card.releasedAt),
      cache: cacheBlock(price),
      reasoning: reasoningBlock(listing),
      currentPrice: {
        inputPriceUsdPerMillion: num(price.input.usd18),
        outputPriceUsdPerMillion: num(price.output.usd18),
        provenance: { input: price.input.provenance, output: price.output.provenance },
        observedAt: iso(price.observedAt)
      },
      priceSources: priceSources(price),
      ...(price.contextTiers.length === 0
        ? {}
        : {
            contextTiers: price.contextTiers.map((tier) => ({
              fromInputTokens: tier.fromInputTokens,
              inputPriceUsdPerMillion: num(tier.input.usd18),
              outputPriceUsdPerMillion: num(tier.output.usd18),
              provenance: weakerMark(tier.input.provenance, tier.output.provenance)
            }))
          }),
      ...(card.maxInputTokens === null ? {} : { maxInputTokens: card.maxInputTokens }),
      integrated: inputs.routable.has(card.id)
    }
  })
  return { models, embeddingModels: embeddingCatalogEntries(inputs, histories), truncated, generatedAt: iso(inputs.now) }
}

const markedUp = (mark: MarkedPrice, peg: Usd18) => ({
  weiPerMillion: usd18ToWei(applyMarkup(mark.usd18), peg).toString(),
  usdPerMillion: num(applyMarkup(mark.usd18)),
  provenance: mark.provenance
})

/** Prices as billed: every figure with the 5% markup, in USD and in credit-token wei at the peg. */
export const pricingView = (inputs: OracleInputs): S.PricingResponse => {
  const peg = inputs.pegUsd18
  const models: Record<string, S.PricingResponse["models"][string]> = {}
  const byKey = (a: CatalogListing, b: CatalogListing) => (a.card.id < b.card.id ? -1 : 1)
  for (const { card, price } of [...chatListings(inputs.catalog)].sort(byKey)) {
    const hasCache = price.cachedInput !== null || price.cacheWrite5m !== null || price.cacheWrite1h !== null
    models[card.id] = {
      input: markedUp(price.input, peg),
      output: markedUp(price.output, peg),
      cache: hasCache
        ? {
            cachedInput: price.cachedInput === null ? null : markedUp(price.cachedInput, peg),
            cacheWrite5m: price.cacheWrite5m === null ? null : markedUp(price.cacheWrite5m, peg),
            cacheWrite1h: price.cacheWrite1h === null ? null : markedUp(price.cacheWrite1h, peg)
          }
        : null,
      reasoning: card.reasoning && price.reasoningOutput !== null ? { reasoningOutput: markedUp(price.reasoningOutput, peg) } : null
    }
  }
  const embeddingModels: Record<string, S.PricingResponse["embeddingModels"][string]> = {}
  for (const { card, price } of [...embeddingListings(inputs.catalog)].sort(byKey)) {
    embeddingModels[card.id] = { input: markedUp(price.input, peg) }
  }
  const observed = inputs.catalog.map((l) => l.price.observedAt.getTime())
  return {
    object: "pricing",
    pegUsd: num(peg),
    models,
    embeddingModels,
    updatedAt: iso(new Date(observed.length === 0 ? inputs.now.getTime() : Math.max(...observed)))
  }
}

/** The chain sync's state as last read; how stale it is depends on when it is asked. */
export interface SyncState {
  readonly latestRevisionVersion: number | null
  readonly methodologyVersion: number | null
  readonly latestRevisionConfirmedAt: Date | null
  readonly lastSyncAt: Date | null
  /** Only the age: a broadcast publish's version and hashes are never exposed. */
  readonly pendingRevision: { readonly ageMs: number } | null
}

/** Health at `now` of a sync state read at `readAt`: stale when the last successful sync is too old (or none ran). */
export const healthView = (sync: SyncState, readAt: Date, now: Date, staleAfterMs: number): S.HealthResponse => ({
  latestRevisionVersion: sync.latestRevisionVersion,
  methodologyVersion: sync.methodologyVersion,
  latestRevisionConfirmedAt: sync.latestRevisionConfirmedAt === null ? null : iso(sync.latestRevisionConfirmedAt),
  lastSyncAt: sync.lastSyncAt === null ? null : iso(sync.lastSyncAt),
  stale: sync.lastSyncAt === null || now.getTime() - sync.lastSyncAt.getTime() > staleAfterMs,
  pendingRevision: sync.pendingRevision === null ? null : { ageMs: sync.pendingRevision.ageMs + (now.getTime() - readAt.getTime()) }
})
