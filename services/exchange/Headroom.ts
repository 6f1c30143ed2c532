/**
 * What this replica last saw of each account's room to spend (DESIGN.md section 10, "Overlap"): the headroom its last
 * hold left when only the balance limited it. Where that leaves room for OVERLAP_HOLDS more holds of a request's
 * size, requests in flight on this replica and on others cannot exhaust it before the request's own reservation
 * lands, so the reservation cannot be refused by them. Two things lean on that: the upstream call may start while the
 * reservation is in flight, and the hold may be sized on the input's byte bound instead of its token count.
 * A missing entry only means neither happens.
 */
import { Effect } from "effect"

/** How many holds of room the last-seen headroom must leave. */
export const OVERLAP_HOLDS = 32n

/** Accounts a replica remembers (it starts over past this). */
const HEADROOM_ENTRIES = 100_000

export class Headroom extends Effect.Service<Headroom>()("Headroom", {
  sync: () => {
    const seen = new Map<string, bigint>()
    return {
      /** After a reservation: the room it left, or null when a cap applied or it was refused. */
      note: (accountId: string, wei: bigint | null): void => {
        if (wei === null) seen.delete(accountId)
        else {
          if (seen.size >= HEADROOM_ENTRIES) seen.clear()
          seen.set(accountId, wei)
        }
      },
      /** Whether the account was last seen with room for OVERLAP_HOLDS holds of `holdWei`. */
      allows: (accountId: string, holdWei: bigint): boolean => (seen.get(accountId) ?? 0n) >= OVERLAP_HOLDS * holdWei
    } as const
  }
}) {}
