/**
 * Pure rules of the credit ledger (DESIGN.md section 10, "Ledger"): the UTC windows spending caps are counted in,
 * the cap check itself, and the wei amounts the ledger takes in and gives out. No I/O.
 */
import { Either, ParseResult, Schema } from "effect"
import { InsufficientBalance, type SpendingScope as SpendingScopeSchema } from "../errors.ts"
import { formatUsd18, parseUsd18Either, Usd18, type Wei, Wei as toWei } from "../money.ts"

export const LedgerEntryKind = Schema.Literal(
  "grant",
  "deposit",
  "withdrawal",
  "withdrawal_refund",
  "charge",
  "adjustment",
  "transfer_in",
  "transfer_out"
)
export type LedgerEntryKind = typeof LedgerEntryKind.Type

export type SpendingScope = typeof SpendingScopeSchema.Type

// ---------------------------------------------------------------------------
// Windows

const DAY_MS = 86_400_000

export interface CapWindows {
  /** 00:00 UTC of the day of `at`. */
  readonly dayStart: Date
  /** 00:00 UTC of the Monday of the week of `at`. */
  readonly weekStart: Date
  /** 00:00 UTC of the first day of the month of `at`. */
  readonly monthStart: Date
}

/** The UTC day, week (starting Monday) and calendar month that contain `at`. */
export const capWindows = (at: Date): CapWindows => {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())
  const daysSinceMonday = (at.getUTCDay() + 6) % 7
  return {
    dayStart: new Date(day),
    weekStart: new Date(day - daysSinceMonday * DAY_MS),
    monthStart: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
  }
}

/** When each cap window of `windows` ends (and the next begins): the next UTC day, Monday, first of the month. */
export const capWindowEnds = (windows: CapWindows): CapWindows => ({
  dayStart: new Date(windows.dayStart.getTime() + DAY_MS),
  weekStart: new Date(windows.weekStart.getTime() + 7 * DAY_MS),
  monthStart: new Date(Date.UTC(windows.monthStart.getUTCFullYear(), windows.monthStart.getUTCMonth() + 1, 1))
})

/** The spend the overview reports: today (UTC), and the last 7 and 30 UTC days, today included. */
export const spendWindows = (at: Date): { readonly today: Date; readonly last7Days: Date; readonly last30Days: Date } => {
  const today = capWindows(at).dayStart.getTime()
  return { today: new Date(today), last7Days: new Date(today - 6 * DAY_MS), last30Days: new Date(today - 29 * DAY_MS) }
}

/** What a cap leaves: its limit less what its window used (live holds included), never below zero; null: no cap. */
export const capLeft = (check: Pick<CapCheck, "limitWei" | "usedWei">): bigint | null =>
  check.limitWei === null ? null : check.limitWei > check.usedWei ? check.limitWei - check.usedWei : 0n

/** The earliest window start: charges before it count towards no cap. */
export const earliestWindowStart = (windows: CapWindows): Date =>
  windows.weekStart < windows.monthStart ? windows.weekStart : windows.monthStart

// ---------------------------------------------------------------------------
// Caps

/** One cap that may apply to a reservation: its limit (null when unset) and what the window has used already. */
export interface CapCheck {
  readonly scope: SpendingScope
  readonly limitWei: bigint | null
  /** Charges in the window plus live holds. */
  readonly usedWei: bigint
}

/** What a reservation of `amountWei` finds: enough available (balance minus live holds), or not. */
export const coversAmount = (balanceWei: bigint, reservedWei: bigint, amountWei: bigint): boolean =>
  balanceWei - reservedWei >= amountWei

/** The 402 a debit or reservation answers when the available credit is short; details say by how much. */
export const insufficientBalance = (balanceWei: bigint, reservedWei: bigint, requiredWei: bigint) =>
  new InsufficientBalance({
    message:
      balanceWei < 0n
        ? "The account's balance is negative; add credits before making requests."
        : "The account's available credit is below the amount this request needs.",
    details: { availableWei: (balanceWei - reservedWei).toString(), requiredWei: requiredWei.toString() }
  })

/**
 * How an operator names an account: a CF ID, an e-mail address or a wallet address (the personal account), or an
 * organization's id (its account: funding never reaches one otherwise, SPEC "Organization rules").
 */
export const identifierKind = (identifier: string): "cfId" | "email" | "wallet" | "organization" =>
  /^0x[0-9a-fA-F]{40}$/.test(identifier)
    ? "wallet"
    : identifier.includes("@")
      ? "email"
      : identifier.startsWith("org_") ? "organization" : "cfId"

// ---------------------------------------------------------------------------
// Amounts on the wire and in storage

const NUMERIC_MAX_DIGITS = 78
const DIGITS = /^[0-9]{1,78}$/

/** A signed `numeric(78,0)` as the database returns it ("-12", "0", "340..."). */
export const WeiFromNumeric = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (s, _, ast) =>
    /^-?[0-9]{1,78}$/.test(s)
      ? ParseResult.succeed(BigInt(s))
      : ParseResult.fail(new ParseResult.Type(ast, s, `${JSON.stringify(s)} is not an integer of at most ${NUMERIC_MAX_DIGITS} digits (wei)`)),
  encode: (n) => ParseResult.succeed(n.toString())
}).annotations({ identifier: "WeiFromNumeric" })

const describeWei = "a positive amount of wei: a digit string (\"1000000000000000000\") or a safe integer"

/**
 * A positive wei amount from a request. SPEC.md: wei quantities may be numbers or digit strings. Numbers must be
 * safe integers (a larger JSON number has already lost digits); strings at most 78 digits (uint256 fits).
 */
export const PositiveWei = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.BigIntFromSelf, {
  strict: true,
  decode: (input, _, ast) => {
    const value =
      typeof input === "number"
        ? Number.isSafeInteger(input) ? BigInt(input) : undefined
        : DIGITS.test(input) ? BigInt(input) : undefined
    return value !== undefined && value > 0n
      ? ParseResult.succeed(value)
      : ParseResult.fail(new ParseResult.Type(ast, input, `expected ${describeWei}`))
  },
  encode: (n) => ParseResult.succeed(n.toString())
}).annotations({
  identifier: "PositiveWei",
  description: describeWei,
  jsonSchema: { anyOf: [{ type: "string", pattern: "^[0-9]{1,78}$" }, { type: "integer", minimum: 1 }] }
})

/** A wei amount in a response: always a digit string (negative for a balance below zero). */
export const WeiDigits = Schema.String.annotations({ description: "wei, as a decimal digit string", examples: ["1000000000000000000"] })

/**
 * Credits typed by an operator ("25", "0.5"), 18 decimals, into wei exactly. The decimal rule is money.ts's:
 * digits, an optional dot and at most 18 fractional digits, no sign, no exponent.
 */
export const parseCredits = (text: string): Either.Either<Wei, string> =>
  Either.flatMap(
    Either.mapLeft(parseUsd18Either(text), (message) => message.replaceAll("USD amount", "credit amount")),
    (scaled) =>
      scaled > 0n
        ? Either.right(toWei(scaled))
        : Either.left(`credit amount ${JSON.stringify(text)} must be more than zero`)
  )

/** Wei shown as credit tokens (18 decimals) for an operator: "25", "0.5", "-1.25" (money.ts's decimal text, same scale). */
export const formatCredits = (wei: bigint): string => formatUsd18(Usd18(wei))

/**
 * What the account can still spend now (SPEC "Usage response"): the available credit, narrowed by every cap that
 * applies (cap minus what its window used); never below zero.
 */
export const remainingBudget = (availableWei: bigint, checks: ReadonlyArray<CapCheck>): bigint => {
  let remaining = availableWei
  for (const check of checks) {
    if (check.limitWei !== null && check.limitWei - check.usedWei < remaining) remaining = check.limitWei - check.usedWei
  }
  return remaining < 0n ? 0n : remaining
}
