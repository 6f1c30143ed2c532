/**
 * Named limits of sign-in (DESIGN section 12: policies in one place). The numbers SPEC.md gives are cited; the others
 * are ours (docs/decisions.md, "Accounts: identity").
 */

export interface CountPolicy {
  readonly name: string
  readonly limit: number
  readonly windowMs: number
}

const HOUR = 3_600_000

/** SPEC "Limits": 10 CF ID creations per IP per 24 h. */
export const SIGNUPS_PER_IP: CountPolicy = { name: "signups_per_ip", limit: 10, windowMs: 24 * HOUR }
/** Codes sent to one address per hour: enough for typos and slow mail, too few to mail-bomb a mailbox. */
export const CODES_PER_ADDRESS: CountPolicy = { name: "codes_per_address", limit: 5, windowMs: HOUR }
/** Codes requested from one IP per hour, whatever the addresses. */
export const CODES_PER_IP: CountPolicy = { name: "codes_per_ip", limit: 20, windowMs: HOUR }

/** DESIGN section 11: sessions live 30 days, sliding. */
export const SESSION_LIFETIME_MS = 30 * 24 * HOUR
/** A session is extended (and its cookie sent again) at most once per this interval, not on every request. */
export const SESSION_REFRESH_AFTER_MS = 24 * HOUR
/** How long a SIWE nonce may wait for its signed message. */
export const SIWE_NONCE_LIFETIME_MS = 10 * 60_000

/** Seconds until the oldest counted event leaves the window: when the policy admits one more. */
export const retryAfterSeconds = (policy: CountPolicy, oldestInWindow: Date, now: Date): number =>
  Math.max(1, Math.ceil((oldestInWindow.getTime() + policy.windowMs - now.getTime()) / 1000))
