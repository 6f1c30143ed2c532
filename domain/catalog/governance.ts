/**
 * Basket governance (SPEC "Price index" items 2, 12, 13; docs/methodology.md): which model holds each family's
 * slot at an instant, at what price, and why the basket differs from the one before. Pure: the same catalog,
 * decisions and rules give the same basket.
 */
import { formatUsd18, referenceCost18, type Usd18 } from "../money.ts"
import { type FamilyRecord, type ModelCard, type PricePoint, requireOutput } from "./card.ts"
import { decisionActiveAt, type FamilyDecision } from "./decisions.ts"

export interface GovernanceRules {
  /** Days after its GA release before a model may take a slot. */
  readonly seasoningDays: number
  /** A model must have been seen on its card in at least one of the last this-many scans. */
  readonly livenessScans: number
  /** A move of more than this percentage of input or output price within 24 hours is held. */
  readonly holdThresholdPercent: number
  /** How long a held price change waits before it reaches the basket. */
  readonly holdHours: number
}

export const DEFAULT_RULES: GovernanceRules = {
  seasoningDays: 7,
  livenessScans: 3,
  holdThresholdPercent: 30,
  holdHours: 24
}

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000

/** A model as governance sees it: its card (with its full price history) and the catalog's view of it. */
export interface ModelState {
  readonly card: ModelCard
  /** Removed from the catalog by an operator (gone from its card). */
  readonly deletedAt: Date | null
  /** Seen on its card within the liveness window (only meaningful for the present; replay passes true). */
  readonly live: boolean
}

export interface BasketMember {
  readonly family: string
  readonly modelKey: string
  readonly displayName: string
  readonly providerKey: string
  readonly sdkId: string
  readonly inputPrice18: Usd18
  readonly outputPrice18: Usd18
  /** When the price in the basket took effect at the vendor. */
  readonly priceFrom: Date
}

export type BasketChangeType = "ModelAdded" | "ModelRemoved" | "ModelReplaced" | "PriceChanged"

export interface BasketChange {
  readonly type: BasketChangeType
  readonly family: string
  readonly modelKey: string
  readonly previousModelKey: string | null
  readonly description: string
}

export interface HeldChange {
  readonly modelKey: string
  readonly until: Date
  readonly description: string
}

export interface Exclusion {
  readonly modelKey: string
  readonly family: string
  readonly reasons: ReadonlyArray<string>
}

export interface BasketProposal {
  readonly asOf: Date
  /** One per family with an eligible model, sorted by modelKey (the manifest's order). */
  readonly members: ReadonlyArray<BasketMember>
  /** Why this basket differs from the previous one; empty when it does not. */
  readonly changes: ReadonlyArray<BasketChange>
  readonly held: ReadonlyArray<HeldChange>
  readonly excluded: ReadonlyArray<Exclusion>
  /** Families with an in-scope (text) model on the cards but no eligible one now; a family of embedding models is not one. */
  readonly familiesWithoutMember: ReadonlyArray<string>
}

const day = (date: Date) => date.toISOString().slice(0, 10)

/** The price point in force at `t`: the latest with effectiveFrom <= t. */
export const pricePointAt = (prices: ReadonlyArray<PricePoint>, t: Date): PricePoint | undefined => {
  let found: PricePoint | undefined
  for (const point of prices) {
    if (point.effectiveFrom <= t) found = point
    else break
  }
  return found
}

/** The output price of a point the basket uses: only a model that has one can be eligible (ineligibilityReasons). */
const outputOf = (point: PricePoint): Usd18 => requireOutput(point).usd18

/** Percentage move from `before` to `after`, in hundredths of a percent (exact integers). */
const moveBasisPoints = (before: Usd18, after: Usd18): bigint => {
  if (before === after) return 0n
  if (before === 0n) return 1_000_000n
  const delta = after > before ? after - before : before - after
  return (delta * 10_000n) / before
}

interface ResolvedPrice {
  readonly point: PricePoint
  readonly held: HeldChange | null
}

/**
 * The price the basket uses for `card` at `t`. A change that moved input or output by more than the threshold
 * against the price in force 24 hours before it is held: until holdHours after it took effect, the basket keeps
 * the earlier price.
 */
export const basketPriceAt = (card: ModelCard, t: Date, rules: GovernanceRules): ResolvedPrice | undefined => {
  const point = pricePointAt(card.prices, t)
  if (point === undefined) return undefined
  const releaseAt = new Date(point.effectiveFrom.getTime() + rules.holdHours * HOUR_MS)
  if (t >= releaseAt) return { point, held: null }
  const index = card.prices.indexOf(point)
  if (index === 0) return { point, held: null }
  const dayBefore = new Date(point.effectiveFrom.getTime() - DAY_MS)
  const before = pricePointAt(card.prices, dayBefore) ?? card.prices[index - 1]!
  const threshold = BigInt(Math.round(rules.holdThresholdPercent * 100))
  const inputMove = moveBasisPoints(before.input.usd18, point.input.usd18)
  const outputMove = moveBasisPoints(outputOf(before), outputOf(point))
  if (inputMove <= threshold && outputMove <= threshold) return { point, held: null }
  const percent = (bp: bigint) => `${bp / 100n}.${String(bp % 100n).padStart(2, "0")}%`
  return {
    point: before,
    held: {
      modelKey: card.id,
      until: releaseAt,
      description:
        `price change of ${day(point.effectiveFrom)} held until ${releaseAt.toISOString()}: input moved ${percent(inputMove)}, ` +
        `output ${percent(outputMove)} within 24 hours (threshold ${rules.holdThresholdPercent}%)`
    }
  }
}

/** Every reason `state` cannot hold a slot at `t`; empty when it can. */
export const ineligibilityReasons = (
  state: ModelState,
  t: Date,
  rules: GovernanceRules,
  decisions: ReadonlyArray<FamilyDecision>
): ReadonlyArray<string> => {
  const { card } = state
  const reasons: Array<string> = []
  if (state.deletedAt !== null && state.deletedAt <= t) reasons.push(`removed from the catalog on ${day(state.deletedAt)}`)
  if (card.kind !== "text") reasons.push(`out of scope: a ${card.kind} model, not a text model`)
  if (card.availability !== "ga") reasons.push("not generally available (preview)")
  if (card.releasedAt > t) reasons.push(`not released until ${day(card.releasedAt)}`)
  else {
    const seasonedAt = new Date(card.releasedAt.getTime() + rules.seasoningDays * DAY_MS)
    if (t < seasonedAt) reasons.push(`seasoning: released ${day(card.releasedAt)}, eligible from ${day(seasonedAt)}`)
  }
  if (card.retiredAt !== null && card.retiredAt <= t) reasons.push(`retired on ${day(card.retiredAt)}`)
  // First-party USD pricing: a price in force on the provider's own USD card. Provenance marks describe how
  // the operator checked a number; they never decide what enters the index (SPEC "Provenance marks").
  const point = pricePointAt(card.prices, t)
  if (point === undefined) reasons.push(`no price on its provider's card in force at ${t.toISOString()}`)
  else if (point.output === null) reasons.push("priced per input token only: no output price for the reference workload")
  else if (referenceCost18(point.input.usd18, point.output.usd18) === 0n) {
    reasons.push("free: a zero reference-workload cost cannot enter a geometric mean")
  }
  if (!state.live) reasons.push(`not seen on its price card in the last ${rules.livenessScans} scans`)
  for (const decision of decisions) {
    if (decision.effect === "exclude" && decision.model === card.id && decisionActiveAt(decision, t)) {
      reasons.push(`excluded by decision ${decision.id}: ${decision.ruling}`)
    }
  }
  return reasons
}

const byReleaseThenId = (a: ModelState, b: ModelState) =>
  b.card.releasedAt.getTime() - a.card.releasedAt.getTime() || (a.card.id < b.card.id ? 1 : a.card.id > b.card.id ? -1 : 0)

const describeChange = (
  family: string,
  previous: BasketMember | undefined,
  next: BasketMember | undefined,
  chosen: ModelState | undefined,
  excluded: ReadonlyMap<string, ReadonlyArray<string>>,
  preferred: FamilyDecision | undefined
): BasketChange | undefined => {
  const price = (member: BasketMember) =>
    `input ${formatUsd18(member.inputPrice18)}, output ${formatUsd18(member.outputPrice18)} USD per million tokens`
  if (previous === undefined && next !== undefined) {
    return {
      type: "ModelAdded",
      family,
      modelKey: next.modelKey,
      previousModelKey: null,
      description: `${next.displayName} enters as the representative of ${family} (${price(next)})`
    }
  }
  if (previous !== undefined && next === undefined) {
    const why = excluded.get(previous.modelKey)
    return {
      type: "ModelRemoved",
      family,
      modelKey: previous.modelKey,
      previousModelKey: null,
      description: `${previous.displayName} leaves ${family} and no other model qualifies${why ? `: ${why.join("; ")}` : ""}`
    }
  }
  if (previous === undefined || next === undefined) return undefined
  if (previous.modelKey !== next.modelKey) {
    const why = excluded.get(previous.modelKey)
    const reason = preferred
      ? `decision ${preferred.id}: ${preferred.ruling}`
      : why
        ? `${previous.displayName} no longer qualifies (${why.join("; ")})`
        : `${next.displayName} is the latest generally available version (released ${day(chosen!.card.releasedAt)})`
    return {
      type: "ModelReplaced",
      family,
      modelKey: next.modelKey,
      previousModelKey: previous.modelKey,
      description: `${next.displayName} replaces ${previous.displayName} in ${family}: ${reason}`
    }
  }
  if (previous.inputPrice18 !== next.inputPrice18 || previous.outputPrice18 !== next.outputPrice18) {
    return {
      type: "PriceChanged",
      family,
      modelKey: next.modelKey,
      previousModelKey: null,
      description:
        `${next.displayName} price changed on ${day(next.priceFrom)}: input ${formatUsd18(previous.inputPrice18)} -> ` +
        `${formatUsd18(next.inputPrice18)}, output ${formatUsd18(previous.outputPrice18)} -> ${formatUsd18(next.outputPrice18)}`
    }
  }
  return undefined
}

/**
 * The basket at `asOf`: for each family the latest generally available model that meets every listing criterion
 * (or the model a `prefer` decision names), at its basket price (holds applied), with the changes against
 * `previous`. Only input and output prices enter; cache and reasoning prices never do.
 */
export const proposeBasket = (input: {
  readonly asOf: Date
  readonly families: ReadonlyArray<FamilyRecord>
  readonly models: ReadonlyArray<ModelState>
  readonly decisions: ReadonlyArray<FamilyDecision>
  readonly rules: GovernanceRules
  readonly previous: ReadonlyArray<BasketMember>
}): BasketProposal => {
  const { asOf, rules, decisions } = input
  const excludedReasons = new Map<string, ReadonlyArray<string>>()
  const eligibleByFamily = new Map<string, Array<ModelState>>()
  const excluded: Array<Exclusion> = []
  for (const state of input.models) {
    const reasons = ineligibilityReasons(state, asOf, rules, decisions)
    if (reasons.length > 0) {
      excludedReasons.set(state.card.id, reasons)
      excluded.push({ modelKey: state.card.id, family: state.card.family, reasons })
    } else {
      const list = eligibleByFamily.get(state.card.family) ?? []
      list.push(state)
      eligibleByFamily.set(state.card.family, list)
    }
  }

  const members: Array<BasketMember> = []
  const held: Array<HeldChange> = []
  const chosenByFamily = new Map<string, { state: ModelState; preferred: FamilyDecision | undefined }>()
  const familiesWithoutMember: Array<string> = []
  // Only text models are in scope: a family holding none (an embedding line) never has a member and is not missing one.
  const inScopeFamilies = new Set(input.models.filter((m) => m.card.kind === "text").map((m) => m.card.family))
  for (const family of input.families) {
    const candidates = (eligibleByFamily.get(family.key) ?? []).sort(byReleaseThenId)
    const preferred = decisions.find(
      (d) =>
        d.effect === "prefer" &&
        decisionActiveAt(d, asOf) &&
        candidates.some((c) => c.card.id === d.model)
    )
    const chosen = preferred ? candidates.find((c) => c.card.id === preferred.model) : candidates[0]
    if (chosen === undefined) {
      if (inScopeFamilies.has(family.key)) familiesWithoutMember.push(family.key)
      continue
    }
    const price = basketPriceAt(chosen.card, asOf, rules)!
    if (price.held !== null) held.push(price.held)
    chosenByFamily.set(family.key, { state: chosen, preferred })
    members.push({
      family: family.key,
      modelKey: chosen.card.id,
      displayName: chosen.card.displayName,
      providerKey: chosen.card.providerKey,
      sdkId: chosen.card.sdkId,
      inputPrice18: price.point.input.usd18,
      outputPrice18: outputOf(price.point),
      priceFrom: price.point.effectiveFrom
    })
  }
  members.sort((a, b) => (a.modelKey < b.modelKey ? -1 : a.modelKey > b.modelKey ? 1 : 0))

  const previousByFamily = new Map(input.previous.map((m) => [m.family, m]))
  const nextByFamily = new Map(members.map((m) => [m.family, m]))
  const changes: Array<BasketChange> = []
  for (const family of [...new Set([...previousByFamily.keys(), ...nextByFamily.keys()])].sort()) {
    const chosen = chosenByFamily.get(family)
    const change = describeChange(
      family,
      previousByFamily.get(family),
      nextByFamily.get(family),
      chosen?.state,
      excludedReasons,
      chosen?.preferred && chosen.preferred.model !== previousByFamily.get(family)?.modelKey ? chosen.preferred : undefined
    )
    if (change !== undefined) changes.push(change)
  }

  return { asOf, members, changes, held, excluded, familiesWithoutMember }
}

/**
 * Every instant at which the basket may change: a model seasoning or retiring, a price taking effect or a hold
 * ending, a decision starting or ending. Replaying the index evaluates the basket at each of these.
 */
export const basketChangeInstants = (
  models: ReadonlyArray<ModelState>,
  decisions: ReadonlyArray<FamilyDecision>,
  rules: GovernanceRules
): ReadonlyArray<Date> => {
  const instants = new Set<number>()
  for (const { card, deletedAt } of models) {
    instants.add(card.releasedAt.getTime() + rules.seasoningDays * DAY_MS)
    if (card.retiredAt !== null) instants.add(card.retiredAt.getTime())
    if (deletedAt !== null) instants.add(deletedAt.getTime())
    for (const point of card.prices) {
      instants.add(point.effectiveFrom.getTime())
      instants.add(point.effectiveFrom.getTime() + rules.holdHours * HOUR_MS)
    }
  }
  for (const decision of decisions) {
    instants.add((decision.validFrom ?? decision.decidedOn).getTime())
    if (decision.validUntil !== null) instants.add(decision.validUntil.getTime())
  }
  return [...instants].sort((a, b) => a - b).map((ms) => new Date(ms))
}
