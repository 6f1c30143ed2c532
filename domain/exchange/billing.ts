/**
 * Pricing a request (SPEC "Billing" 1-3, DESIGN.md section 10 "Money"), pure: the usage a vendor reported, the
 * live price point of the model that served, and the peg in; the legs, the tier and the debit out. All money
 * arithmetic is money.ts's (settleCharge: legs summed exactly, one markup, one floor); this module only decides
 * which rate each token count is billed at.
 */
import { type ContextTier, type MarkedPrice, type PriceComponent, type PricePoint, type Provenance, requireOutput } from "../catalog/card.ts"
import { type ChargeLeg, settleCharge, sumLegsExact, Usd18, type Wei } from "../money.ts"
import { inputSide, type Usage } from "./canonical.ts"

export type LegKind = "input" | "cachedInput" | "cacheWrite5m" | "cacheWrite1h" | "output" | "reasoningOutput"

export interface BillLeg {
  readonly kind: LegKind
  readonly tokens: number
  readonly rateUsd18PerMillion: Usd18
  readonly provenance: Provenance
  /** The component whose rate was used: the leg's own, or its side's when the model prices none (cache at input). */
  readonly pricedAs: PriceComponent
}

export interface Bill {
  /** The context tier the input side selected (its threshold), or null for the base rates. */
  readonly tierFromInputTokens: number | null
  /** In a fixed order (input, cachedInput, cacheWrite5m, cacheWrite1h, output, reasoningOutput); no 0-token leg. */
  readonly legs: ReadonlyArray<BillLeg>
  /** The legs' exact sum, floored once, before markup and peg: for display, never for charging. */
  readonly subtotalUsd18: Usd18
  /** The debit: settleCharge over the legs (markup once, peg, single floor). */
  readonly chargeWei: Wei
}

/** The input and output rates in force for an input side of `inputTokens`. */
export interface SideRates {
  readonly tierFromInputTokens: number | null
  readonly input: MarkedPrice
  /** Null for a model priced per input token only (an embedding model): no output may be billed at it. */
  readonly output: MarkedPrice | null
}

/**
 * The highest tier whose threshold the input side reaches (an input exactly on a threshold takes that tier, SPEC
 * Billing 2); the base rates below the first. Cards keep tiers in increasing order, but nothing here relies on it.
 */
export const sideRatesAt = (point: PricePoint, inputTokens: number): SideRates => {
  let chosen: ContextTier | undefined
  for (const tier of point.contextTiers) {
    if (tier.fromInputTokens <= inputTokens && (chosen === undefined || tier.fromInputTokens > chosen.fromInputTokens)) {
      chosen = tier
    }
  }
  return chosen === undefined
    ? { tierFromInputTokens: null, input: point.input, output: point.output }
    : { tierFromInputTokens: chosen.fromInputTokens, input: chosen.input, output: chosen.output }
}

/** A reported count as a billable number: unreported is 0 (SPEC: the bill is the provider-reported counts). */
const tokensOf = (count: number | undefined, what: string): number => {
  const n = count ?? 0
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} token count must be a non-negative integer, got ${n}`)
  return n
}

interface Rate {
  readonly price: MarkedPrice
  readonly pricedAs: PriceComponent
}

/** A component's own rate, or its side's when the model does not price it separately (SPEC Billing 1). */
const ownOr = (own: MarkedPrice | null, component: PriceComponent, side: Rate): Rate =>
  own === null ? side : { price: own, pricedAs: component }

/**
 * Prices one request's usage.
 *
 * - The whole input side (fresh + cache reads + cache writes) selects the context tier, whose input and output
 *   rates then apply (SPEC Billing 2).
 * - Cache and reasoning rates are not tiered on the cards (a card has one cachedInput, one reasoningOutput per
 *   point), so they are the point's own at every tier; when a model prices none, they fall back to the TIERED side
 *   rate, which is what the vendor would charge for those tokens as plain input / output.
 * - `output` includes reasoning: the visible part is billed at the output rate, the reasoning part at the
 *   reasoningOutput rate. A vendor reporting more reasoning than output is taken at its larger figure: reasoning
 *   tokens were generated, and billing max(output, reasoning) in all never bills less than either report.
 */
export const priceUsage = (point: PricePoint, usage: Usage, peg: Usd18): Bill => {
  const fresh = tokensOf(usage.freshInput, "freshInput")
  const cacheRead = tokensOf(usage.cacheRead, "cacheRead")
  const write5m = tokensOf(usage.cacheWrite5m, "cacheWrite5m")
  const write1h = tokensOf(usage.cacheWrite1h, "cacheWrite1h")
  const reasoning = tokensOf(usage.reasoning, "reasoning")
  const output = Math.max(tokensOf(usage.output, "output"), reasoning)

  const side = sideRatesAt(point, inputSide({ freshInput: fresh, cacheRead, cacheWrite5m: write5m, cacheWrite1h: write1h }))
  const inputRate: Rate = { price: side.input, pricedAs: "input" }
  // An input-only point (an embedding model) prices no output: billing output tokens at it is a defect.
  const outputRate: Rate | undefined = side.output === null && output === 0 ? undefined : { price: side.output ?? requireOutput(point), pricedAs: "output" }

  const planned: ReadonlyArray<readonly [LegKind, number, Rate]> = [
    ["input", fresh, inputRate],
    ["cachedInput", cacheRead, ownOr(point.cachedInput, "cachedInput", inputRate)],
    ["cacheWrite5m", write5m, ownOr(point.cacheWrite5m, "cacheWrite5m", inputRate)],
    ["cacheWrite1h", write1h, ownOr(point.cacheWrite1h, "cacheWrite1h", inputRate)],
    ...(outputRate === undefined ? [] : [
      ["output", output - reasoning, outputRate] as const,
      ["reasoningOutput", reasoning, ownOr(point.reasoningOutput, "reasoningOutput", outputRate)] as const
    ])
  ]
  const legs: Array<BillLeg> = planned
    .filter(([, tokens]) => tokens > 0)
    .map(([kind, tokens, rate]) => ({
      kind,
      tokens,
      rateUsd18PerMillion: rate.price.usd18,
      provenance: rate.price.provenance,
      pricedAs: rate.pricedAs
    }))
  const chargeLegs = legs.map(chargeLegOf)
  return {
    tierFromInputTokens: side.tierFromInputTokens,
    legs,
    subtotalUsd18: Usd18(sumLegsExact(chargeLegs) / 1_000_000n),
    chargeWei: settleCharge(chargeLegs, peg)
  }
}

/** A bill's leg as money.ts charges it (for re-running a stored bill's arithmetic). */
export const chargeLegOf = (leg: BillLeg): ChargeLeg => ({ pricePerMillion18: leg.rateUsd18PerMillion, tokens: BigInt(leg.tokens) })

/**
 * The hold for a request before it is routed (SPEC Billing 4): the worst case of the estimate. The input is priced
 * as fresh (the estimate is not cache-aware) at the tier the estimated input selects; the output at the dearer of
 * the output and reasoning rates of that tier, since the split between them is unknown until the vendor reports.
 */
export const holdWei = (
  point: PricePoint,
  estimate: { readonly inputTokens: number; readonly outputTokens: number },
  peg: Usd18
): Wei => {
  const inputTokens = tokensOf(estimate.inputTokens, "estimated input")
  const outputTokens = tokensOf(estimate.outputTokens, "estimated output")
  const side = sideRatesAt(point, inputTokens)
  // An input-only point (an embedding model) holds for no output; output on it is a defect.
  const sideOutput = side.output === null && outputTokens === 0 ? undefined : side.output ?? requireOutput(point)
  const reasoningRate = sideOutput === undefined ? Usd18(0n) : (point.reasoningOutput ?? sideOutput).usd18
  const outputRate = sideOutput === undefined ? Usd18(0n) : reasoningRate > sideOutput.usd18 ? reasoningRate : sideOutput.usd18
  return settleCharge(
    [
      { pricePerMillion18: side.input.usd18, tokens: BigInt(inputTokens) },
      { pricePerMillion18: outputRate, tokens: BigInt(outputTokens) }
    ],
    peg
  )
}
