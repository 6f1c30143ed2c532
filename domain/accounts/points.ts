/**
 * Points (SPEC "Points ledger entry", "Points earning", "Tiers"): what each channel is worth, the tiers, UTC days and
 * streaks, and the `source` of each entry. The source is also the entry's frequency key: the ledger holds at most one
 * entry per (identity, type, source), so a rule such as "once per day" or "one per model per day" is a unique index,
 * not a read followed by a write.
 */

export const POINT_TYPES = ["signup", "referral", "referral_welcome", "daily_login", "streak_bonus", "oracle_interaction"] as const
export type PointType = (typeof POINT_TYPES)[number]

/** SPEC "Points earning": points per entry of each channel. */
export const POINTS: Readonly<Record<PointType, number>> = {
  signup: 100,
  referral: 250,
  referral_welcome: 50,
  daily_login: 10,
  streak_bonus: 50,
  oracle_interaction: 5
}

/** Consecutive UTC days of sign-in that complete a streak. */
export const STREAK_DAYS = 7
/** SPEC "Limits": oracle interaction points, 12 per day (one per model). */
export const ORACLE_INTERACTIONS_PER_DAY = 12
/** SPEC "Limits": the leaderboard shows the top 50. */
export const LEADERBOARD_SIZE = 50

/** SPEC "Tiers", ascending by minimum points. */
export const TIERS = [
  { name: "Explorer", minimum: 0 },
  { name: "Starter", minimum: 500 },
  { name: "Builder", minimum: 2000 },
  { name: "Architect", minimum: 5000 },
  { name: "Titan", minimum: 15000 }
] as const
export type TierName = (typeof TIERS)[number]["name"]
export const TIER_NAMES = TIERS.map((tier) => tier.name) as unknown as readonly [TierName, ...Array<TierName>]

/** The highest tier whose minimum `total` reaches. */
export const tierOf = (total: number): TierName => {
  let reached: TierName = TIERS[0].name
  for (const tier of TIERS) if (total >= tier.minimum) reached = tier.name
  return reached
}

const DAY_MS = 86_400_000

/** The UTC calendar day of an instant, `YYYY-MM-DD`. */
export const utcDay = (epochMillis: number): string => new Date(epochMillis).toISOString().slice(0, 10)

/** Days since 1970-01-01 of a `YYYY-MM-DD` day. */
const dayIndex = (day: string): number => Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS)

/** The day `offset` days after `day` (negative: before). */
export const addDays = (day: string, offset: number): string => utcDay((dayIndex(day) + offset) * DAY_MS)

/**
 * How many consecutive days end at `day` among `loginDays` (any order, duplicates allowed): 0 when `day` itself has no
 * sign-in.
 */
export const runEndingAt = (loginDays: Iterable<string>, day: string): number => {
  const present = new Set(loginDays)
  let run = 0
  while (present.has(addDays(day, -run))) run++
  return run
}

/** A streak completes on every 7th consecutive day of a run (day 7, 14, ...): each completion earns its bonus once. */
export const completesStreak = (runLength: number): boolean => runLength > 0 && runLength % STREAK_DAYS === 0

export interface Streaks {
  /** The run of consecutive sign-in days ending today, or yesterday while today's sign-in is still to come; else 0. */
  readonly current: number
  readonly longest: number
}

/** Streaks from the days with a sign-in (any order). A missed UTC day ends a run. */
export const streaksOf = (loginDays: ReadonlyArray<string>, today: string): Streaks => {
  const indices = [...new Set(loginDays.map(dayIndex))].sort((a, b) => a - b)
  let longest = 0
  let run = 0
  for (let i = 0; i < indices.length; i++) {
    run = i > 0 && indices[i]! - indices[i - 1]! === 1 ? run + 1 : 1
    longest = Math.max(longest, run)
  }
  const todayIndex = dayIndex(today)
  const last = indices.filter((index) => index <= todayIndex).at(-1)
  const current = last !== undefined && todayIndex - last <= 1 ? runEndingAt(loginDays, utcDay(last * DAY_MS)) : 0
  return { current, longest }
}

/** The `source` of each kind of entry: a descriptor that is also the entry's frequency key. */
export const pointSource = {
  signup: () => "signup",
  /** Once per referred identity. */
  referral: (referredCfId: string) => `referral:${referredCfId}`,
  /** Once per account (a partial unique index on the type), naming the code it came through. */
  referralWelcome: (referralCode: string) => `referral_welcome:${referralCode}`,
  dailyLogin: (day: string) => `daily_login:${day}`,
  /** The day the streak completed. */
  streakBonus: (day: string) => `streak_bonus:${day}`,
  oracleInteraction: (day: string, modelKey: string) => `oracle_interaction:${day}:${modelKey}`
} as const
