/** The simulator's cache memories: the implicit prefix cache and Anthropic's explicit breakpoint cache. */
import { BLOCK, type PromptTokens } from "./text.ts"

/** Implicit prefix cache (OpenAI, Gemini, DeepSeek): prefix >= 1024 tokens, counted in 128-token blocks. */
export class PrefixMemory {
  private readonly byModel = new Map<string, Set<number>>()
  lookupAndStore(model: string, prompt: PromptTokens, minTokens = 1024): number {
    let seen = this.byModel.get(model)
    if (!seen) {
      seen = new Set()
      this.byModel.set(model, seen)
    }
    const blocks = prompt.blocks
    const usable = Math.min(blocks.length, Math.floor((prompt.count - 1) / BLOCK))
    let hit = 0
    for (let k = usable - 1; k >= 0; k--) {
      if (seen.has(blocks[k]!)) {
        hit = (k + 1) * BLOCK
        break
      }
    }
    if (seen.size > 500_000) seen.clear()
    for (let k = 0; k < blocks.length; k++) seen.add(blocks[k]!)
    return hit >= minTokens ? hit : 0
  }
  clear(): void {
    this.byModel.clear()
  }
}

export type Ttl = "5m" | "1h"
export interface Breakpoint {
  readonly mark: number
  readonly ttl: Ttl
}
export interface CacheOutcome {
  readonly read: number
  readonly write5m: number
  readonly write1h: number
  /** prefix length covered by the last breakpoint (0 when none) */
  readonly covered: number
}
const TTL_MS: Record<Ttl, number> = { "5m": 5 * 60_000, "1h": 60 * 60_000 }
const LOOKBACK_BLOCKS = 20

/**
 * Explicit prompt cache (Anthropic): entries are written at breakpoints; a lookup checks each breakpoint and up to
 * 20 block boundaries before it, so a conversation that moves its breakpoint forward reads the earlier prefix.
 */
export class BreakpointCache {
  private readonly byModel = new Map<string, Map<number, { expires: number; ttlMs: number }>>()
  resolve(model: string, prompt: PromptTokens, breakpoints: readonly Breakpoint[], now = Date.now()): CacheOutcome {
    if (breakpoints.length === 0) return { read: 0, write5m: 0, write1h: 0, covered: 0 }
    let entries = this.byModel.get(model)
    if (!entries) {
      entries = new Map()
      this.byModel.set(model, entries)
    }
    const marks = prompt.marks
    const sorted = [...breakpoints].sort((a, b) => a.mark - b.mark)
    let read = 0
    let readKey: number | undefined
    for (let b = sorted.length - 1; b >= 0; b--) {
      const from = sorted[b]!.mark
      for (let j = from; j >= 0 && j >= from - LOOKBACK_BLOCKS; j--) {
        const mark = marks[j]!
        if (mark.at <= read) break
        const entry = entries.get(mark.key)
        if (entry && entry.expires > now) {
          read = mark.at
          readKey = mark.key
          break
        }
      }
    }
    if (readKey !== undefined) {
      const entry = entries.get(readKey)!
      entry.expires = now + entry.ttlMs
    }
    let write5m = 0
    let write1h = 0
    let previous = 0
    for (const bp of sorted) {
      const mark = marks[bp.mark]!
      const segment = mark.at - Math.max(read, previous)
      if (segment > 0) {
        if (bp.ttl === "1h") write1h += segment
        else write5m += segment
      }
      previous = Math.max(previous, mark.at)
      const existing = entries.get(mark.key)
      const ttlMs = Math.max(TTL_MS[bp.ttl], existing && existing.expires > now ? existing.ttlMs : 0)
      entries.set(mark.key, { expires: now + ttlMs, ttlMs })
    }
    if (entries.size > 200_000) entries.clear()
    return { read, write5m, write1h, covered: previous }
  }
  clear(): void {
    this.byModel.clear()
  }
}

export interface Memory {
  readonly implicit: PrefixMemory
  readonly explicit: BreakpointCache
}
