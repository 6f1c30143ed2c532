/**
 * Spending pools of an organization: decode, call Pools (which acts for the CurrentIdentity), encode.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type PoolView as Pool, Pools } from "../../services/accounts/Pools.ts"
import type { PoolView } from "../api/PoolsApi.ts"
import { ServerApi } from "../api/ServerApi.ts"

const digits = (value: bigint | null) => (value === null ? null : value.toString())

const poolView = (pool: Pool): typeof PoolView.Type => ({
  id: pool.id,
  name: pool.name,
  caps: { dailyWei: digits(pool.caps.dailyWei), weeklyWei: digits(pool.caps.weeklyWei), monthlyWei: digits(pool.caps.monthlyWei) },
  used: { dailyWei: pool.used.dailyWei.toString(), weeklyWei: pool.used.weeklyWei.toString(), monthlyWei: pool.used.monthlyWei.toString() },
  members: pool.members,
  createdAt: pool.createdAt
})

export const PoolsHandlers = HttpApiBuilder.group(ServerApi, "pools", (handlers) =>
  Effect.gen(function* () {
    const pools = yield* Pools
    return handlers
      .handle("createPool", ({ path, payload }) => Effect.map(pools.create(path.id, payload), poolView))
      .handle("listPools", ({ path }) =>
        Effect.map(pools.list(path.id), (data) => ({ object: "list" as const, data: data.map(poolView) }))
      )
      .handle("getPool", ({ path }) => Effect.map(pools.read(path.id, path.poolId), poolView))
      .handle("updatePool", ({ path, payload }) =>
        Effect.map(pools.update(path.id, path.poolId, payload), poolView)
      )
      .handle("deletePool", ({ path }) => pools.remove(path.id, path.poolId))
      .handle("addPoolMember", ({ path }) =>
        Effect.map(pools.addMember(path.id, path.poolId, path.cfId), poolView)
      )
      .handle("removePoolMember", ({ path }) =>
        Effect.map(pools.removeMember(path.id, path.poolId, path.cfId), poolView)
      )
  })
)
