/**
 * Referral rules (SPEC "Referral", "Referral rules", "Limits"): the `cf_ref` cookie a referral link sets, the click
 * limit, which code a sign-up is attributed to, and the dashboard's conversion rate.
 */
import { REFERRAL_CODE_PATTERN } from "./ids.ts"
import type { CountPolicy } from "./policies.ts"

export const REFERRAL_COOKIE = "cf_ref"
/** SPEC: the cookie lives 30 days (`Max-Age=2592000`); that lifetime is the attribution window. */
export const REFERRAL_WINDOW_SECONDS = 30 * 24 * 3600
/** SPEC "Limits": 100 clicks per code per hour; excess clicks are not recorded (the visitor is still redirected). */
export const REFERRAL_CLICKS_PER_CODE: CountPolicy = { name: "referral_clicks_per_code", limit: 100, windowMs: 3_600_000 }
/** Where a referral link leads: the site root. */
export const REFERRAL_REDIRECT = "/"
/** The most user agent text a click keeps. */
export const MAX_USER_AGENT_LENGTH = 512
/** The dashboard lists at most this many referred users (newest first). */
export const MAX_LISTED_REFERRALS = 100

/** A value shaped like a referral code (`cf_ref_` + 8 base32 characters); whether it names anyone is the database's. */
export const isReferralCode = (value: string | undefined): value is string => value !== undefined && REFERRAL_CODE_PATTERN.test(value)

/**
 * The codes a sign-up may be attributed to, in the order they are tried: the `cf_ref` cookie first (set by the first
 * link clicked: first touch), then a code the client sent. Malformed ones are dropped silently.
 */
export const referralCandidates = (cookie: string | undefined, sent: string | undefined): ReadonlyArray<string> =>
  [...new Set([cookie, sent].filter(isReferralCode))]

/** Signups divided by clicks; 0 when there are no clicks. */
export const conversionRate = (signups: number, clicks: number): number => (clicks === 0 ? 0 : signups / clicks)
