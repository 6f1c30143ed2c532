/**
 * One provider's upstream keys as a pool (DESIGN.md section 10): a key is admitted for a request when it is not
 * cooling down and its RPM and TPM windows hold one more request and its estimated tokens; the estimate is counted at
 * admission and corrected to the vendor's count afterwards. A 429 (honouring Retry-After), a 5xx or a timeout cools the
 * key down. Pure state over an injected clock; the service holds one pool per provider.
 *
 * Windows are sliding minutes approximated by two fixed buckets (the previous minute weighted by how much of it is
 * still inside the window, plus the current one): exact enough for admission, O(1) per request.
 */
import type { UpstreamKey } from "./providers.ts"

const MINUTE_MS = 60_000

/** How long a key rests after each kind of failure when the vendor names no time. */
export const COOLDOWN_MS = { rateLimited: 30_000, serverError: 5_000, timeout: 10_000 } as const

interface Bucket {
  start: number
  requests: number
  tokens: number
}

interface KeyState {
  readonly key: UpstreamKey
  previous: Bucket
  current: Bucket
  cooldownUntil: number
}

/** A request admitted on a key: what was counted, and in which minute, so that `reconcile` can correct it once. */
export interface Admission {
  readonly key: UpstreamKey
  /** The estimated tokens counted at admission. */
  readonly tokens: number
  /** The start of the minute whose bucket counted them. */
  readonly minuteStart: number
}

export type FailureKind = "rateLimited" | "serverError" | "timeout"

export interface PoolStatus {
  readonly keys: number
  readonly cooling: number
  /** Whether some key would admit a request of `tokens` now. */
  readonly canAdmit: boolean
}

export class KeyPool {
  private readonly states: Array<KeyState>
  private next = 0

  constructor(keys: ReadonlyArray<UpstreamKey>, now: number) {
    const start = now - (now % MINUTE_MS)
    this.states = keys.map((key) => ({
      key,
      previous: { start: start - MINUTE_MS, requests: 0, tokens: 0 },
      current: { start, requests: 0, tokens: 0 },
      cooldownUntil: 0
    }))
  }

  private roll(state: KeyState, now: number): void {
    const start = now - (now % MINUTE_MS)
    if (state.current.start === start) return
    state.previous = state.current.start === start - MINUTE_MS ? state.current : { start: start - MINUTE_MS, requests: 0, tokens: 0 }
    state.current = { start, requests: 0, tokens: 0 }
  }

  /** Requests and tokens inside the sliding minute ending now. */
  private used(state: KeyState, now: number): { requests: number; tokens: number } {
    this.roll(state, now)
    const weight = 1 - (now - state.current.start) / MINUTE_MS
    return {
      requests: state.previous.requests * weight + state.current.requests,
      tokens: state.previous.tokens * weight + state.current.tokens
    }
  }

  private fits(state: KeyState, tokens: number, now: number): boolean {
    if (state.cooldownUntil > now) return false
    const used = this.used(state, now)
    if (state.key.rpm !== null && used.requests + 1 > state.key.rpm) return false
    if (state.key.tpm !== null && used.tokens + tokens > state.key.tpm) return false
    return true
  }

  /**
   * Admits a request of `tokens` estimated tokens on the next key that can take it (round robin), skipping `exclude`;
   * `prefer` (a pinned conversation's key, whose prompt cache is warm) goes first when it can take it.
   */
  admit(tokens: number, now: number, exclude: ReadonlySet<string> = new Set(), prefer?: string): Admission | undefined {
    const preferred = prefer === undefined ? -1 : this.states.findIndex((s) => s.key.id === prefer)
    for (let i = -1; i < this.states.length; i++) {
      const index = i === -1 ? preferred : (this.next + i) % this.states.length
      if (index === -1) continue
      const state = this.states[index]!
      if (exclude.has(state.key.id) || !this.fits(state, tokens, now)) continue
      if (i !== -1) this.next = (this.next + i + 1) % this.states.length
      state.current.requests += 1
      state.current.tokens += tokens
      return { key: state.key, tokens, minuteStart: state.current.start }
    }
    return undefined
  }

  /**
   * Replaces an admission's token estimate by the vendor's count (0 when nothing was served); once per admission. The
   * minute may have rolled since: the bucket the estimate went into is corrected while it still counts.
   */
  reconcile(admission: Admission, actualTokens: number): void {
    const state = this.states.find((s) => s.key.id === admission.key.id)
    if (state === undefined) return
    const bucket = state.current.start === admission.minuteStart
      ? state.current
      : state.previous.start === admission.minuteStart
      ? state.previous
      : undefined
    if (bucket !== undefined) bucket.tokens += actualTokens - admission.tokens
  }

  /** Rests a key after a failure; a vendor's Retry-After wins over the default. */
  cooldown(keyId: string, kind: FailureKind, now: number, retryAfterMs?: number): void {
    const state = this.states.find((s) => s.key.id === keyId)
    if (state === undefined) return
    const until = now + (retryAfterMs !== undefined && retryAfterMs >= 0 ? retryAfterMs : COOLDOWN_MS[kind])
    state.cooldownUntil = Math.max(state.cooldownUntil, until)
  }

  status(tokens: number, now: number): PoolStatus {
    return {
      keys: this.states.length,
      cooling: this.states.filter((s) => s.cooldownUntil > now).length,
      canAdmit: this.states.some((s) => this.fits(s, tokens, now))
    }
  }
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `now`; undefined when absent or unreadable. */
export const retryAfterMs = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined || header.trim() === "") return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
