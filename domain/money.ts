/**
 * The one money module (DESIGN.md §4). Pure bigint arithmetic: independent verifiers
 * must reproduce every figure bit-exactly, so no float ever enters a calculation.
 * Floors are true floors (toward -infinity), which for the non-negative amounts used
 * here is the same as bigint truncation.
 */
import { Brand, Either, ParseResult, Schema } from "effect"

export type Usd18 = bigint & Brand.Brand<"Usd18">
export type Wei = bigint & Brand.Brand<"Wei">

/** Unchecked brand constructors for values already in the right unit. */
export const Usd18 = Brand.nominal<Usd18>()
export const Wei = Brand.nominal<Wei>()

export const USD18_SCALE = 10n ** 18n
const USD18_DECIMALS = 18
const PER_MILLION = 1_000_000n
/** numeric(78,0) holds at most 78 digits. */
const NUMERIC_MAX_DIGITS = 78

const floorDiv = (n: bigint, d: bigint): bigint => {
  const q = n / d
  return n % d !== 0n && (n < 0n) !== (d < 0n) ? q - 1n : q
}

// ---------------------------------------------------------------------------
// Decimal text <-> Usd18

/**
 * Accepted form: one or more ASCII digits, optionally followed by "." and 1..18 digits
 * ("3", "0.15", "1.250", "007.5"). Leading zeros are tolerated because the value is
 * unambiguous; everything else ("", " 1", "-1", "+1", "1e3", "1.", ".5", 19 fractional
 * digits) is rejected rather than guessed at.
 */
const DECIMAL_RE = /^([0-9]+)(?:\.([0-9]{1,18}))?$/

const describeBadDecimal = (s: string): string => {
  const shown = JSON.stringify(s)
  if (s.length === 0) return "empty string is not a USD amount"
  if (/\s/.test(s)) return `USD amount ${shown} must not contain whitespace`
  if (/^[+-]/.test(s)) return `USD amount ${shown} must be an unsigned decimal (no sign)`
  if (/[eE]/.test(s)) return `USD amount ${shown} must be a plain decimal (no exponent)`
  const frac = /^[0-9]+\.([0-9]+)$/.exec(s)?.[1]
  if (frac !== undefined && frac.length > USD18_DECIMALS) {
    return `USD amount ${shown} has ${frac.length} fractional digits; at most ${USD18_DECIMALS} allowed`
  }
  if (/^\.[0-9]/.test(s)) return `USD amount ${shown} needs a digit before the dot (write "0${s}")`
  if (/^[0-9]+\.$/.test(s)) return `USD amount ${shown} must not end with a dot`
  return `USD amount ${shown} is not a decimal of the form 123 or 123.456 (at most ${USD18_DECIMALS} fractional digits)`
}

export const parseUsd18Either = (decimal: string): Either.Either<Usd18, string> => {
  const m = DECIMAL_RE.exec(decimal)
  if (m === null) return Either.left(describeBadDecimal(decimal))
  const intPart = m[1] ?? "0"
  const fracPart = (m[2] ?? "").padEnd(USD18_DECIMALS, "0")
  return Either.right(Usd18(BigInt(intPart) * USD18_SCALE + BigInt(fracPart)))
}

/** Throwing convenience for literals and trusted config; use parseUsd18Either on input. */
export const parseUsd18 = (decimal: string): Usd18 =>
  Either.getOrThrowWith(parseUsd18Either(decimal), (msg) => new RangeError(msg))

/** Canonical text: no trailing fractional zeros, no trailing dot. Negative values get a "-". */
export const formatUsd18 = (v: Usd18): string => {
  const negative = v < 0n
  const abs = negative ? -v : v
  const intPart = (abs / USD18_SCALE).toString()
  const frac = abs % USD18_SCALE
  const fracText = frac === 0n ? "" : "." + frac.toString().padStart(USD18_DECIMALS, "0").replace(/0+$/, "")
  return (negative ? "-" : "") + intPart + fracText
}

/** Integer digit string of the scaled value, for numeric(78,0) and manifests. */
export const usd18ToDigits = (v: Usd18): string => v.toString()

/** For JSON display only. Going through the exact decimal text makes Number() round once, correctly. */
export const usd18ToNumber = (v: Usd18): number => Number(formatUsd18(v))

const Usd18Self = Schema.BigIntFromSelf.pipe(Schema.nonNegativeBigInt(), Schema.brand("Usd18"))

export const Usd18FromDecimalString = Schema.transformOrFail(Schema.String, Usd18Self, {
  strict: true,
  decode: (s, _, ast) =>
    Either.match(parseUsd18Either(s), {
      onLeft: (msg) => ParseResult.fail(new ParseResult.Type(ast, s, msg)),
      onRight: (v) => ParseResult.succeed(v)
    }),
  encode: (v) => ParseResult.succeed(formatUsd18(Usd18(v)))
}).annotations({ identifier: "Usd18FromDecimalString" })

export const Usd18FromNumericString = Schema.transformOrFail(Schema.String, Usd18Self, {
  strict: true,
  decode: (s, _, ast) =>
    /^[0-9]+$/.test(s) && s.length <= NUMERIC_MAX_DIGITS
      ? ParseResult.succeed(Usd18(BigInt(s)))
      : ParseResult.fail(
        new ParseResult.Type(
          ast,
          s,
          `${JSON.stringify(s)} is not a non-negative integer digit string of at most ${NUMERIC_MAX_DIGITS} digits (usd18)`
        )
      ),
  encode: (v, _, ast) => {
    const digits = usd18ToDigits(Usd18(v))
    return digits.length <= NUMERIC_MAX_DIGITS
      ? ParseResult.succeed(digits)
      : ParseResult.fail(new ParseResult.Type(ast, v, `usd18 value has more than ${NUMERIC_MAX_DIGITS} digits`))
  }
}).annotations({ identifier: "Usd18FromNumericString" })

// ---------------------------------------------------------------------------
// Peg: USD per 1 credit token, as Usd18

export const DEFAULT_PEG_USD18: Usd18 = Usd18(USD18_SCALE)

const assertPeg = (peg: Usd18): void => {
  if (peg <= 0n) throw new RangeError(`peg must be positive, got usd18 ${peg.toString()}`)
}

/** wei = usd18 * 10^18 / peg (floor). */
export const usd18ToWei = (usd: Usd18, peg: Usd18): Wei => {
  assertPeg(peg)
  return Wei(floorDiv(usd * USD18_SCALE, peg))
}

/** usd18 = wei * peg / 10^18 (floor). */
export const weiToUsd18 = (wei: Wei, peg: Usd18): Usd18 => {
  assertPeg(peg)
  return Usd18(floorDiv(wei * peg, USD18_SCALE))
}

// ---------------------------------------------------------------------------
// Routing markup

export const ROUTING_MARKUP = { numerator: 105n, denominator: 100n } as const
/** The figure the API shows as routingFeeRate; never used in arithmetic. */
export const ROUTING_FEE_RATE = 0.05

export const applyMarkup = <A extends Usd18 | Wei>(base: A): A =>
  floorDiv(base * ROUTING_MARKUP.numerator, ROUTING_MARKUP.denominator) as A

// ---------------------------------------------------------------------------
// Reference workload (index)

export const REFERENCE_WORKLOAD = { inputTokens: 1000, outputTokens: 500 } as const

/** cost18 = (in18 * 1000 + out18 * 500) / 1_000_000 (floor); prices are per million tokens. */
export const referenceCost18 = (in18: Usd18, out18: Usd18): Usd18 =>
  Usd18(
    floorDiv(
      in18 * BigInt(REFERENCE_WORKLOAD.inputTokens) + out18 * BigInt(REFERENCE_WORKLOAD.outputTokens),
      PER_MILLION
    )
  )

// ---------------------------------------------------------------------------
// Per-token charging

export interface ChargeLeg {
  readonly pricePerMillion18: Usd18
  readonly tokens: bigint
}

const assertTokens = (tokens: bigint): void => {
  if (tokens < 0n) throw new RangeError(`token count must be non-negative, got ${tokens.toString()}`)
}

/** Cost of one leg on its own (floor). Not for billing a request: see settleCharge. */
export const costForTokens = (pricePerMillion18: Usd18, tokens: bigint): Usd18 => {
  assertTokens(tokens)
  return Usd18(floorDiv(pricePerMillion18 * tokens, PER_MILLION))
}

/** Exact sum of price18 * tokens over the legs, still scaled by 10^6 (per-million) — no rounding yet. */
export const sumLegsExact = (legs: ReadonlyArray<ChargeLeg>): bigint => {
  let sum = 0n
  for (const leg of legs) {
    assertTokens(leg.tokens)
    sum += leg.pricePerMillion18 * leg.tokens
  }
  return sum
}

/**
 * The debit for a request, in wei. Single-floor rule: the legs are summed exactly, and the
 * per-million division, the 5% markup and the peg conversion are folded into one
 * expression, `sum * 105 * 10^18 / (1_000_000 * 100 * peg)`, so the result is floored
 * exactly once. Flooring per leg or per step would under-bill and would not match
 * other implementations.
 */
export const settleCharge = (legs: ReadonlyArray<ChargeLeg>, peg: Usd18): Wei => {
  assertPeg(peg)
  const sum = sumLegsExact(legs)
  return Wei(
    floorDiv(
      sum * ROUTING_MARKUP.numerator * USD18_SCALE,
      PER_MILLION * ROUTING_MARKUP.denominator * peg
    )
  )
}
