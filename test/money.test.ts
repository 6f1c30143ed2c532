import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  applyMarkup,
  costForTokens,
  DEFAULT_PEG_USD18,
  formatUsd18,
  parseUsd18,
  parseUsd18Either,
  REFERENCE_WORKLOAD,
  referenceCost18,
  ROUTING_FEE_RATE,
  ROUTING_MARKUP,
  settleCharge,
  sumLegsExact,
  Usd18,
  USD18_SCALE,
  Usd18FromDecimalString,
  Usd18FromNumericString,
  usd18ToDigits,
  usd18ToNumber,
  usd18ToWei,
  Wei,
  weiToUsd18
} from "../domain/money.ts"

const leftOf = (s: string): string => {
  const r = parseUsd18Either(s)
  if (Either.isRight(r)) throw new Error(`expected ${JSON.stringify(s)} to be rejected`)
  return r.left
}

describe("parseUsd18 / formatUsd18", () => {
  it("parses exact decimals", () => {
    expect(parseUsd18("3")).toBe(3n * USD18_SCALE)
    expect(parseUsd18("0.15")).toBe(150_000_000_000_000_000n)
    expect(parseUsd18("1.250")).toBe(1_250_000_000_000_000_000n)
    expect(parseUsd18("0.000000000000000001")).toBe(1n)
    expect(parseUsd18("0")).toBe(0n)
    expect(parseUsd18("007.5")).toBe(7_500_000_000_000_000_000n)
  })

  it("round-trips with canonical text", () => {
    for (const s of ["3", "0.15", "1.25", "0.000000000000000001", "123456789.123456789123456789", "0"]) {
      expect(formatUsd18(parseUsd18(s))).toBe(s)
    }
  })

  it("normalises trailing zeros and a zero fraction", () => {
    expect(formatUsd18(parseUsd18("1.250"))).toBe("1.25")
    expect(formatUsd18(parseUsd18("3.000000000000000000"))).toBe("3")
    expect(formatUsd18(parseUsd18("0.100"))).toBe("0.1")
  })

  it("formats negative values with a sign", () => {
    expect(formatUsd18(Usd18(-1_500_000_000_000_000_000n))).toBe("-1.5")
  })

  it("rejects bad input with a useful message", () => {
    expect(leftOf("0.0000000000000000001")).toMatch(/19 fractional digits; at most 18/)
    expect(leftOf("-1")).toMatch(/no sign/)
    expect(leftOf("+1")).toMatch(/no sign/)
    expect(leftOf("1e3")).toMatch(/no exponent/)
    expect(leftOf("1E-2")).toMatch(/no exponent/)
    expect(leftOf("")).toMatch(/empty/)
    expect(leftOf(" 1")).toMatch(/whitespace/)
    expect(leftOf("1 ")).toMatch(/whitespace/)
    expect(leftOf("1.")).toMatch(/must not end with a dot/)
    expect(leftOf(".5")).toMatch(/digit before the dot/)
    expect(leftOf("1,5")).toMatch(/not a decimal/)
    expect(leftOf("abc")).toMatch(/not a decimal/)
  })

  it("parseUsd18 throws the same message", () => {
    expect(() => parseUsd18("-1")).toThrow(/no sign/)
  })

  it("usd18ToDigits gives the scaled integer", () => {
    expect(usd18ToDigits(parseUsd18("0.123"))).toBe("123000000000000000")
    expect(usd18ToDigits(parseUsd18("0"))).toBe("0")
  })
})

describe("schemas", () => {
  it("Usd18FromDecimalString decodes and encodes canonically", () => {
    const decoded = Schema.decodeUnknownEither(Usd18FromDecimalString)("1.250")
    expect(decoded).toEqual(Either.right(1_250_000_000_000_000_000n))
    expect(Schema.encodeSync(Usd18FromDecimalString)(parseUsd18("1.250"))).toBe("1.25")
    const typed: Usd18 = Schema.decodeSync(Usd18FromDecimalString)("0.000000000000000001")
    expect(typed).toBe(1n)
  })

  it("refuses to encode a negative Usd18", () => {
    expect(Either.isLeft(Schema.encodeEither(Usd18FromDecimalString)(Usd18(-1n)))).toBe(true)
    expect(Either.isLeft(Schema.encodeEither(Usd18FromNumericString)(Usd18(-1n)))).toBe(true)
  })

  it("Usd18FromDecimalString fails with a clear message", () => {
    const r = Schema.decodeUnknownEither(Usd18FromDecimalString)("1e3")
    expect(Either.isLeft(r)).toBe(true)
    if (Either.isLeft(r)) expect(r.left.message).toMatch(/no exponent/)
    expect(Either.isLeft(Schema.decodeUnknownEither(Usd18FromDecimalString)(1.5))).toBe(true)
  })

  it("Usd18FromNumericString round-trips digit strings", () => {
    const r = Schema.decodeUnknownEither(Usd18FromNumericString)("123000000000000000")
    expect(r).toEqual(Either.right(123_000_000_000_000_000n))
    expect(Schema.encodeSync(Usd18FromNumericString)(parseUsd18("0.123"))).toBe("123000000000000000")
  })

  it("Usd18FromNumericString rejects non-digit strings", () => {
    for (const bad of ["1.5", "-1", "", "1e18", " 1", "1".repeat(79)]) {
      const r = Schema.decodeUnknownEither(Usd18FromNumericString)(bad)
      expect(Either.isLeft(r)).toBe(true)
      if (Either.isLeft(r)) expect(r.left.message).toMatch(/not a non-negative integer digit string/)
    }
  })
})

describe("usd18ToNumber", () => {
  it("is the nearest double to the exact value", () => {
    expect(usd18ToNumber(parseUsd18("0.1"))).toBe(0.1)
    expect(usd18ToNumber(parseUsd18("0.00625"))).toBe(0.00625)
    // 30 significant digits: only a correctly rounded decimal parse is guaranteed to hit the literal.
    const big = Usd18(123456789012345678901234567890n)
    expect(usd18ToNumber(big)).toBe(123456789012.34567890123456789)
  })
})

describe("peg conversions", () => {
  const peg1 = DEFAULT_PEG_USD18
  const peg2 = parseUsd18("2")
  const pegHalf = parseUsd18("0.5")
  const peg3 = parseUsd18("3")

  it("default peg is 1.0 and makes usd18 == wei", () => {
    expect(peg1).toBe(USD18_SCALE)
    const v = parseUsd18("12.345678901234567891")
    expect(usd18ToWei(v, peg1)).toBe(v)
    expect(weiToUsd18(Wei(v), peg1)).toBe(v)
  })

  it("peg 2.0 halves the wei, flooring", () => {
    expect(usd18ToWei(parseUsd18("1.5"), peg2)).toBe(750_000_000_000_000_000n)
    expect(usd18ToWei(Usd18(3n), peg2)).toBe(1n) // 1.5 -> 1
    expect(usd18ToWei(Usd18(1n), peg2)).toBe(0n) // 0.5 -> 0
    expect(weiToUsd18(Wei(3n), peg2)).toBe(6n)
  })

  it("peg 0.5 doubles the wei, inverse floors", () => {
    expect(usd18ToWei(Usd18(1n), pegHalf)).toBe(2n)
    expect(usd18ToWei(parseUsd18("1.5"), pegHalf)).toBe(3n * USD18_SCALE)
    expect(weiToUsd18(Wei(3n), pegHalf)).toBe(1n) // 1.5 -> 1
  })

  it("peg 3.0 floors a non-terminating quotient", () => {
    expect(usd18ToWei(Usd18(10n), peg3)).toBe(3n) // 3.33.. -> 3
    expect(usd18ToWei(parseUsd18("1"), peg3)).toBe(333_333_333_333_333_333n)
  })

  it("rejects a non-positive peg", () => {
    expect(() => usd18ToWei(Usd18(1n), Usd18(0n))).toThrow(RangeError)
    expect(() => weiToUsd18(Wei(1n), Usd18(-1n))).toThrow(RangeError)
  })
})

describe("routing markup", () => {
  it("is 5%, floored, brand-preserving", () => {
    expect(ROUTING_MARKUP).toEqual({ numerator: 105n, denominator: 100n })
    expect(ROUTING_FEE_RATE).toBe(0.05)
    expect(applyMarkup(Usd18(100n))).toBe(105n)
    expect(applyMarkup(Wei(1n))).toBe(1n) // 1.05 -> 1
    expect(applyMarkup(Wei(19n))).toBe(19n) // 19.95 -> 19
    const huge = 10n ** 60n + 7n
    expect(applyMarkup(Usd18(huge))).toBe(105n * 10n ** 58n + 7n) // 7 * 1.05 = 7.35 -> 7
  })
})

describe("referenceCost18", () => {
  it("uses 1000 input and 500 output tokens", () => {
    expect(REFERENCE_WORKLOAD).toEqual({ inputTokens: 1000, outputTokens: 500 })
  })

  it("GPT-like $1.25/M in, $10/M out costs exactly $0.00625", () => {
    const cost = referenceCost18(parseUsd18("1.25"), parseUsd18("10"))
    expect(cost).toBe(6_250_000_000_000_000n)
    expect(formatUsd18(cost)).toBe("0.00625")
  })

  it("floors", () => {
    // (1 * 1000 + 1 * 500) / 1e6 = 0.0015 -> 0
    expect(referenceCost18(Usd18(1n), Usd18(1n))).toBe(0n)
    // (999 * 1000 + 2 * 500) / 1e6 = 1.0 exactly
    expect(referenceCost18(Usd18(999n), Usd18(2n))).toBe(1n)
  })
})

describe("charging", () => {
  it("costForTokens floors one leg", () => {
    expect(costForTokens(parseUsd18("10"), 500n)).toBe(parseUsd18("0.005"))
    expect(costForTokens(Usd18(1n), 999_999n)).toBe(0n)
    expect(() => costForTokens(Usd18(1n), -1n)).toThrow(RangeError)
  })

  it("sumLegsExact keeps the unrounded numerator", () => {
    const legs = [
      { pricePerMillion18: Usd18(1n), tokens: 999_999n },
      { pricePerMillion18: Usd18(3n), tokens: 2n }
    ]
    expect(sumLegsExact(legs)).toBe(1_000_005n)
    expect(sumLegsExact([])).toBe(0n)
  })

  it("settleCharge floors once, not per leg or per step", () => {
    const legs = [
      { pricePerMillion18: Usd18(1n), tokens: 999_999n },
      { pricePerMillion18: Usd18(1n), tokens: 999_999n }
    ]
    const peg = DEFAULT_PEG_USD18
    // Per-leg floors: 0 + 0 -> markup -> 0.
    const perLeg = applyMarkup(
      Usd18(legs.reduce((acc, l) => acc + costForTokens(l.pricePerMillion18, l.tokens), 0n))
    )
    expect(perLeg).toBe(0n)
    // Floor per step: 1_999_998 / 1e6 = 1 -> markup 1.05 -> 1.
    const perStep = applyMarkup(Usd18(sumLegsExact(legs) / 1_000_000n))
    expect(perStep).toBe(1n)
    // Single floor: 1_999_998 * 1.05 / 1e6 = 2.0999979 -> 2.
    expect(settleCharge(legs, peg)).toBe(2n)
  })

  it("settleCharge folds the peg into the same floor", () => {
    const legs = [
      { pricePerMillion18: parseUsd18("1.25"), tokens: 333n },
      { pricePerMillion18: parseUsd18("10"), tokens: 777n }
    ]
    // sum = 8186.25e18; /1e6 = 0.00818625 USD; *1.05 = 0.0085955625 USD
    expect(settleCharge(legs, DEFAULT_PEG_USD18)).toBe(8_595_562_500_000_000n)
    // peg 3.0: 0.0085955625 / 3 = 0.0028651875 tokens exactly
    expect(settleCharge(legs, parseUsd18("3"))).toBe(2_865_187_500_000_000n)
    // peg 7.0: 0.0085955625 / 7 = 0.00122793750000000000.. -> floor at 18 decimals
    expect(settleCharge(legs, parseUsd18("7"))).toBe(8_595_562_500_000_000n / 7n)
    // stepwise via usd18ToWei(applyMarkup(...)) agrees when nothing is lost earlier
    expect(settleCharge(legs, parseUsd18("7"))).toBe(
      usd18ToWei(applyMarkup(Usd18(sumLegsExact(legs) / 1_000_000n)), parseUsd18("7"))
    )
  })

  it("settleCharge rejects a bad peg and negative tokens", () => {
    expect(() => settleCharge([], Usd18(0n))).toThrow(RangeError)
    expect(() => settleCharge([{ pricePerMillion18: Usd18(1n), tokens: -1n }], DEFAULT_PEG_USD18)).toThrow(RangeError)
  })
})
