/**
 * The SCU and the compute index in exact integer arithmetic (DESIGN.md section 4). Independent verifiers must
 * reproduce every published value bit for bit, so nothing here touches a float.
 */
import { referenceCost18, USD18_SCALE, type Usd18 } from "../money.ts"

/** The largest r with r^n <= x (x >= 0, n >= 1), by integer Newton iteration from above. */
export const floorNthRoot = (x: bigint, n: number): bigint => {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`root degree must be a positive integer, got ${n}`)
  if (x < 0n) throw new RangeError("cannot take the root of a negative number")
  if (x < 2n || n === 1) return x
  const degree = BigInt(n)
  // 2^ceil(bits/n) is at least the root, so the iteration decreases monotonically onto it.
  let root = 1n << BigInt(Math.ceil(x.toString(2).length / n))
  for (;;) {
    const next = ((degree - 1n) * root + x / root ** (degree - 1n)) / degree
    if (next >= root) break
    root = next
  }
  while (root ** degree > x) root -= 1n
  while ((root + 1n) ** degree <= x) root += 1n
  return root
}

export interface PricedMember {
  readonly inputPrice18: Usd18
  readonly outputPrice18: Usd18
}

/** SCU18 = floorNthRoot(product of each member's reference-workload cost18, N). */
export const scu18 = (members: ReadonlyArray<PricedMember>): Usd18 => {
  if (members.length === 0) throw new RangeError("the SCU of an empty basket is undefined")
  let product = 1n
  for (const member of members) product *= referenceCost18(member.inputPrice18, member.outputPrice18)
  return floorNthRoot(product, members.length) as Usd18
}

/** computeIndex18 = baseline18 * 100 * 10^18 / SCU18 (floor): 100 at genesis, higher as compute gets cheaper. */
export const computeIndex18 = (baseline18: Usd18, scu: Usd18): bigint => {
  if (scu <= 0n) throw new RangeError("the SCU must be positive")
  return (baseline18 * 100n * USD18_SCALE) / scu
}
