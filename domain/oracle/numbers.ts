/**
 * How the oracle's exact values are written in JSON: usd18 integers as numbers (rendered from the exact value),
 * instants as ISO-8601, the compute index against the baseline.
 */
import { computeIndex18 } from "../index/scu.ts"
import { usd18ToNumber, type Usd18 } from "../money.ts"

export const iso = (date: Date): string => date.toISOString()

export const num = (value: bigint): number => usd18ToNumber(value as Usd18)

/** part / whole as a plain ratio; null when the whole is zero. */
export const ratio = (part: Usd18, whole: Usd18): number | null => (whole === 0n ? null : Number(part) / Number(whole))

export const indexNumber = (baseline: Usd18, scu: Usd18): number => num(computeIndex18(baseline, scu))
