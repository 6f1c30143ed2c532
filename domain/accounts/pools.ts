/**
 * Spending pools (issue 12 item 4): named groups of an organization's members, each with optional daily, weekly and
 * monthly caps checked at reservation like the account's (migration 0014, `ledger_reserve`). A member is in at most
 * one pool of an organization. Rules without I/O live here; the id pattern and name length the API checks are in
 * formats.ts, which the browser may import (this module needs node:crypto).
 */
import { randomBytes } from "node:crypto"

/** `pool_` and 16 hex characters: the id the paths use. */
export const generatePoolId = (): string => `pool_${randomBytes(8).toString("hex")}`

/** How many live pools one organization may hold: more would be a mistake, not a team. */
export const MAX_POOLS_PER_ORGANIZATION = 50

export interface PoolCaps {
  readonly dailyWei: bigint | null
  readonly weeklyWei: bigint | null
  readonly monthlyWei: bigint | null
}

/** A change of caps: `undefined` keeps a cap, null removes it. */
export interface PoolCapsChange {
  readonly dailyWei?: bigint | null | undefined
  readonly weeklyWei?: bigint | null | undefined
  readonly monthlyWei?: bigint | null | undefined
}

export const applyCapsChange = (caps: PoolCaps, change: PoolCapsChange): PoolCaps => ({
  dailyWei: change.dailyWei === undefined ? caps.dailyWei : change.dailyWei,
  weeklyWei: change.weeklyWei === undefined ? caps.weeklyWei : change.weeklyWei,
  monthlyWei: change.monthlyWei === undefined ? caps.monthlyWei : change.monthlyWei
})
