/**
 * The public oracle's resources, built from confirmed revisions and the live catalog (SPEC "Resources and their
 * fields"). Pure: the snapshot service loads the inputs, these functions shape them.
 */
import type { MarkedPrice, ModelCard, PricePoint, ProviderRecord } from "../catalog/card.ts"
import type { Manifest } from "../index/manifest.ts"
import { computeIndex18 } from "../index/scu.ts"
import { applyMarkup, referenceCost18, REFERENCE_WORKLOAD, ROUTING_FEE_RATE, usd18ToNumber, usd18ToWei, type Usd18 } from "../money.ts"

export interface ConfirmedRevision {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly scuUsd18: Usd18
  readonly contentHash: string
  readonly metadataHash: string
  readonly manifest: Manifest | null
  readonly publishedAt: Date
  readonly publishedBlock: bigint
  readonly confirmedAt: Date
  readonly txHash: string
}

export interface CatalogListing {
  readonly card: ModelCard
  readonly price: PricePoint & { readonly observedAt: Date }
}

export interface OracleInputs {
  readonly revisions: ReadonlyArray<ConfirmedRevision>
  readonly catalog: ReadonlyArray<CatalogListing>
  readonly providers: ReadonlyArray<ProviderRecord>
  readonly pegUsd18: Usd18
  /** Models the exchange can route today (none until the exchange is built). */
  readonly routable: ReadonlySet<string>
  readonly now: Date
}

const iso = (date: Date) => date.toISOString()
const num = (value: bigint) => usd18ToNumber(value as Usd18)
const ratio = (part: Usd18, whole: Usd18): number | null => (whole === 0n ? null : Number(part) / Number(whole))

export const indexNumber = (baseline: Usd18, scu: Usd18): number => num(computeIndex18(baseline, scu))

const component = (mark: MarkedPrice | null, input: Usd18, point: { sourceUrl: string; observedAt: Date }) =>
  mark === null
    ? null
    : {
        usdPerMillion: num(mark.usd18),
        ratioOfInput: ratio(mark.usd18, input),
        source: "catalog" as const,
        sourceUrl: point.sourceUrl,
        provenance: mark.provenance,
        createdAt: iso(point.observedAt)
      }

export const cacheBlock = (price: CatalogListing["price"]) => {
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

export const reasoningBlock = (listing: CatalogListing) =>
  !listing.card.reasoning || listing.price.reasoningOutput === null
    ? null
    : { reasoningOutput: component(listing.price.reasoningOutput, listing.price.input.usd18, listing.price)! }

const providerOf = (providers: ReadonlyArray<ProviderRecord>, key: string) => {
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

export const latestRevision = (inputs: OracleInputs): ConfirmedRevision | undefined => inputs.revisions[inputs.revisions.length - 1]

/** Basket members from the latest manifest; prices attested there, cache and reasoning from the live catalog. */
export const memberEntries = (inputs: OracleInputs) => {
  const latest = latestRevision(inputs)
  if (latest === undefined || latest.manifest === null) return []
  const listings = new Map(inputs.catalog.map((l) => [l.card.id, l]))
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
export const modelsView = (inputs: OracleInputs) => {
  const members = memberEntries(inputs).map((entry) => ({ ...entry, inBasket: true, retiredAtRevision: null }))
  const inBasket = new Set(members.map((m) => m.id))
  const lastAppearance = new Map<string, number>()
  for (const revision of inputs.revisions) {
    for (const m of revision.manifest?.models ?? []) lastAppearance.set(m.modelKey, revision.revisionVersion)
  }
  const listings = new Map(inputs.catalog.map((l) => [l.card.id, l]))
  const exMembers = [...lastAppearance.entries()]
    .filter(([key]) => !inBasket.has(key) && listings.has(key))
    .map(([key, last]) => {
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

export const scuView = (inputs: OracleInputs) => {
  const latest = latestRevision(inputs)
  if (latest === undefined) return undefined
  const baseline = inputs.revisions[0]!.scuUsd18
  return {
    scuUsd: num(latest.scuUsd18),
    computeIndex: indexNumber(baseline, latest.scuUsd18),
    referenceWorkload: { ...REFERENCE_WORKLOAD },
    methodologyVersion: latest.methodologyVersion,
    breakdown: {
      methodologyVersion: 1 as const,
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

export const basketView = (inputs: OracleInputs) => {
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

export const latestView = (inputs: OracleInputs) => {
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

export const baselineView = (inputs: OracleInputs) => {
  const genesis = inputs.revisions[0]
  if (genesis === undefined) return undefined
  return { date: iso(genesis.publishedAt).slice(0, 10), scuUsd: num(genesis.scuUsd18), methodologyVersion: genesis.methodologyVersion }
}

/** The revision in force at `at`: the latest with publishedAt <= at; on equal publishedAt the highest number. */
export const revisionAt = (revisions: ReadonlyArray<ConfirmedRevision>, at: Date): ConfirmedRevision | undefined => {
  let found: ConfirmedRevision | undefined
  for (const revision of revisions) {
    if (revision.publishedAt.getTime() <= at.getTime()) found = revision
    else break
  }
  return found
}

export const scuAtView = (inputs: OracleInputs, at: Date) => {
  const revision = revisionAt(inputs.revisions, at)
  if (revision === undefined) return undefined
  return {
    at: iso(at),
    scuUsd: num(revision.scuUsd18),
    scuUsd18: revision.scuUsd18.toString(),
    computeIndex: indexNumber(inputs.revisions[0]!.scuUsd18, revision.scuUsd18),
    revisionVersion: revision.revisionVersion,
    methodologyVersion: revision.methodologyVersion,
    publishedAt: iso(revision.publishedAt),
    metadataHash: revision.metadataHash
  }
}

export const revisionView = (revision: ConfirmedRevision, baseUrl: string) => ({
  revisionVersion: revision.revisionVersion,
  methodologyVersion: revision.methodologyVersion,
  publishedAt: iso(revision.publishedAt),
  publishedBlock: Number(revision.publishedBlock),
  txHash: revision.txHash,
  scuUsd: num(revision.scuUsd18),
  scuUsd18: revision.scuUsd18.toString(),
  basketSize: revision.manifest?.models.length ?? 0,
  basket: { schemaVersion: revision.manifest?.schemaVersion ?? 1, models: revision.manifest?.models ?? [] },
  status: "CONFIRMED" as const,
  confirmedAt: iso(revision.confirmedAt),
  manifestUrl: revision.manifest === null ? null : `${baseUrl}/v1/oracle/manifest/${revision.metadataHash}`
})

export type { Granularity } from "./schemas.ts"
import type { Granularity } from "./schemas.ts"

const DAY_MS = 86_400_000
const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS
/** Weeks start on Monday, 00:00 UTC (ISO 8601). */
const startOfWeek = (ms: number) => {
  const day = startOfDay(ms)
  const weekday = (new Date(day).getUTCDay() + 6) % 7
  return day - weekday * DAY_MS
}

/**
 * The SCU series. per-revision: one point per revision published in [from, to]. daily/weekly: one point per bucket
 * start (midnight UTC) in [from, to], each the revision in force at that instant, carried forward across buckets
 * without a revision. At most `limit` points; the oldest are dropped first.
 */
export const historyView = (
  inputs: OracleInputs,
  query: { readonly granularity: Granularity; readonly from: Date | null; readonly to: Date | null; readonly limit: number }
) => {
  const revisions = inputs.revisions
  const baseline = revisions[0]?.scuUsd18
  const point = (revision: ConfirmedRevision, date: Date) => ({
    date: iso(date),
    scuUsd: num(revision.scuUsd18),
    computeIndex: baseline === undefined ? null : indexNumber(baseline, revision.scuUsd18),
    revisionVersion: revision.revisionVersion,
    methodologyVersion: revision.methodologyVersion,
    metadataHash: revision.metadataHash
  })
  const from = query.from ?? revisions[0]?.publishedAt ?? inputs.now
  const to = query.to ?? inputs.now
  let data: Array<ReturnType<typeof point>> = []
  if (query.granularity === "per-revision") {
    data = revisions.filter((r) => r.publishedAt >= from && r.publishedAt <= to).map((r) => point(r, r.publishedAt))
  } else if (revisions.length > 0) {
    const step = query.granularity === "daily" ? DAY_MS : 7 * DAY_MS
    const align = query.granularity === "daily" ? startOfDay : startOfWeek
    let cursor = align(Math.max(from.getTime(), startOfDay(revisions[0]!.publishedAt.getTime())))
    if (cursor < from.getTime()) cursor += step
    // Walk buckets and revisions together: the series is linear in both.
    let index = -1
    for (; cursor <= to.getTime(); cursor += step) {
      while (index + 1 < revisions.length && revisions[index + 1]!.publishedAt.getTime() <= cursor) index++
      if (index >= 0) data.push(point(revisions[index]!, new Date(cursor)))
    }
  }
  const truncated = data.length > query.limit
  if (truncated) data = data.slice(data.length - query.limit)
  return {
    from: iso(from),
    to: iso(to),
    granularity: query.granularity,
    count: data.length,
    truncated,
    data
  }
}

export const HISTORY_CSV_HEADER = "date,scuUsd,computeIndex,revisionVersion,methodologyVersion,metadataHash"

/** RFC 4180: CRLF line ends; no field here needs quoting (numbers, ISO dates, hex). */
export const historyCsv = (view: ReturnType<typeof historyView>): string =>
  [HISTORY_CSV_HEADER, ...view.data.map((p) => [p.date, p.scuUsd, p.computeIndex ?? "", p.revisionVersion, p.methodologyVersion, p.metadataHash].join(","))]
    .join("\r\n") + "\r\n"

export const CATALOG_LIMIT = 1000

/** Every listed model with a catalog price, newest release first; at most 1000 (the oldest dropped). */
export const catalogView = (inputs: OracleInputs) => {
  const latest = latestRevision(inputs)
  const members = new Set((latest?.manifest?.models ?? []).map((m) => m.modelKey))
  const sorted = [...inputs.catalog].sort(
    (a, b) => b.card.releasedAt.getTime() - a.card.releasedAt.getTime() || (a.card.id < b.card.id ? -1 : 1)
  )
  const truncated = sorted.length > CATALOG_LIMIT
  const models = sorted.slice(0, CATALOG_LIMIT).map((listing) => {
    const { card, price } = listing
    return {
      modelKey: card.id,
      displayName: card.displayName,
      provider: providerOf(inputs.providers, card.providerKey),
      family: card.family,
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
      ...(price.contextTiers.length === 0
        ? {}
        : {
            contextTiers: price.contextTiers.map((tier) => ({
              fromInputTokens: tier.fromInputTokens,
              inputPriceUsdPerMillion: num(tier.input.usd18),
              outputPriceUsdPerMillion: num(tier.output.usd18),
              provenance: { input: tier.input.provenance, output: tier.output.provenance }
            }))
          }),
      ...(card.maxInputTokens === null ? {} : { maxInputTokens: card.maxInputTokens }),
      integrated: inputs.routable.has(card.id)
    }
  })
  return { models, truncated, generatedAt: iso(inputs.now) }
}

const markedUp = (mark: MarkedPrice, peg: Usd18) => ({
  weiPerMillion: usd18ToWei(applyMarkup(mark.usd18), peg).toString(),
  usdPerMillion: num(applyMarkup(mark.usd18)),
  provenance: mark.provenance
})

/** Prices as billed: every figure with the 5% markup, in USD and in credit-token wei at the peg. */
export const pricingView = (inputs: OracleInputs) => {
  const peg = inputs.pegUsd18
  const models: Record<string, unknown> = {}
  for (const { card, price } of [...inputs.catalog].sort((a, b) => (a.card.id < b.card.id ? -1 : 1))) {
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
  const observed = inputs.catalog.map((l) => l.price.observedAt.getTime())
  return {
    object: "pricing" as const,
    pegUsd: num(peg),
    models,
    updatedAt: iso(new Date(observed.length === 0 ? inputs.now.getTime() : Math.max(...observed)))
  }
}

export interface LogInput {
  readonly id: string
  readonly revisionVersion: number
  readonly previousVersion: number | null
  readonly publishedAt: Date
  readonly methodologyVersion: number
  readonly summary: string
  readonly scuBeforeUsd18: bigint | null
  readonly scuAfterUsd18: bigint
  readonly changes: ReadonlyArray<{ readonly type: "ModelAdded" | "ModelRemoved" | "PriceChanged"; readonly modelKey: string; readonly description: string }>
  readonly txHash: string
}

export const reconstitutionsView = (log: ReadonlyArray<LogInput>) => ({
  entries: log.map((entry) => ({
    id: entry.id,
    revisionVersion: entry.revisionVersion,
    previousVersion: entry.previousVersion,
    publishedAt: iso(entry.publishedAt),
    methodologyVersion: entry.methodologyVersion,
    summary: entry.summary,
    scuBefore: entry.scuBeforeUsd18 === null ? null : num(entry.scuBeforeUsd18),
    scuAfter: num(entry.scuAfterUsd18),
    changes: entry.changes.map((c) => ({ type: c.type, modelKey: c.modelKey, description: c.description })),
    txHash: entry.txHash
  }))
})

/** The whole log as a Markdown document, newest first. */
export const reconstitutionsMarkdown = (log: ReadonlyArray<LogInput>, generatedAt: Date): string => {
  const lines = [
    "# SCU index reconstitution log",
    "",
    `Generated ${iso(generatedAt)}. ${log.length} revisions. SCU in USD for the reference workload (1000 input + 500 output tokens).`,
    ""
  ]
  for (const entry of [...log].reverse()) {
    lines.push(`## Revision ${entry.revisionVersion} (${iso(entry.publishedAt).slice(0, 10)})`, "")
    lines.push(`- Published: ${iso(entry.publishedAt)}`)
    lines.push(`- Methodology: ${entry.methodologyVersion}`)
    lines.push(`- SCU: ${entry.scuBeforeUsd18 === null ? "(genesis)" : num(entry.scuBeforeUsd18)} -> ${num(entry.scuAfterUsd18)}`)
    lines.push(`- Transaction: \`${entry.txHash}\``)
    lines.push(`- Summary: ${entry.summary}`, "")
    if (entry.changes.length > 0) {
      lines.push("| change | model | description |", "|---|---|---|")
      for (const change of entry.changes) {
        lines.push(`| ${change.type} | \`${change.modelKey}\` | ${change.description.replace(/\|/g, "\\|")} |`)
      }
      lines.push("")
    }
  }
  return `${lines.join("\n")}\n`
}

/** Aggregate protocol statistics (`/v1/oracle/stats`, shape designed here; see docs/decisions.md). */
export const statsView = (inputs: OracleInputs, log: ReadonlyArray<LogInput>) => {
  const revisions = inputs.revisions
  const first = revisions[0]
  const latest = latestRevision(inputs)
  const everInBasket = new Set(revisions.flatMap((r) => (r.manifest?.models ?? []).map((m) => m.modelKey)))
  let low: ConfirmedRevision | undefined
  let high: ConfirmedRevision | undefined
  for (const r of revisions) {
    if (low === undefined || r.scuUsd18 < low.scuUsd18) low = r
    if (high === undefined || r.scuUsd18 > high.scuUsd18) high = r
  }
  const byType = { ModelAdded: 0, ModelRemoved: 0, PriceChanged: 0 }
  for (const entry of log) for (const change of entry.changes) byType[change.type]++
  const extreme = (r: ConfirmedRevision | undefined) =>
    r === undefined ? null : { scuUsd: num(r.scuUsd18), revisionVersion: r.revisionVersion, publishedAt: iso(r.publishedAt) }
  return {
    revisions: {
      confirmed: revisions.length,
      genesis: first === undefined ? null : { revisionVersion: first.revisionVersion, publishedAt: iso(first.publishedAt) },
      latest: latest === undefined ? null : { revisionVersion: latest.revisionVersion, publishedAt: iso(latest.publishedAt) }
    },
    basketSize: latest?.manifest?.models.length ?? 0,
    catalog: {
      providers: new Set(inputs.catalog.map((l) => l.card.providerKey)).size,
      families: new Set(inputs.catalog.map((l) => l.card.family)).size,
      models: inputs.catalog.length,
      modelsEverInBasket: everInBasket.size
    },
    scu: {
      currentUsd: latest === undefined ? null : num(latest.scuUsd18),
      baselineUsd: first === undefined ? null : num(first.scuUsd18),
      computeIndex: latest === undefined || first === undefined ? null : indexNumber(first.scuUsd18, latest.scuUsd18),
      lowest: extreme(low),
      highest: extreme(high)
    },
    reconstitutionChanges: byType,
    generatedAt: iso(inputs.now)
  }
}

export type ActivityType = "revision.published" | "model.added" | "model.removed" | "price.changed"

export interface ActivityEvent {
  readonly id: string
  readonly type: ActivityType
  readonly occurredAt: string
  readonly revisionVersion: number
  readonly modelKey: string | null
  readonly description: string
  readonly txHash: string
}

const changeEventType = { ModelAdded: "model.added", ModelRemoved: "model.removed", PriceChanged: "price.changed" } as const

/** Every protocol event, newest first: each revision's publication, then its change items. */
export const activityEvents = (log: ReadonlyArray<LogInput>): ReadonlyArray<ActivityEvent> =>
  [...log].reverse().flatMap((entry) => [
    {
      id: `r${entry.revisionVersion}`,
      type: "revision.published" as const,
      occurredAt: iso(entry.publishedAt),
      revisionVersion: entry.revisionVersion,
      modelKey: null,
      description: `Revision ${entry.revisionVersion} published: ${entry.summary}`,
      txHash: entry.txHash
    },
    ...entry.changes.map((change, i) => ({
      id: `r${entry.revisionVersion}.${i + 1}`,
      type: changeEventType[change.type],
      occurredAt: iso(entry.publishedAt),
      revisionVersion: entry.revisionVersion,
      modelKey: change.modelKey,
      description: change.description,
      txHash: entry.txHash
    }))
  ])
