/**
 * Spending pools of an organization: decode, call Pools with the signed-in identity, encode.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type PoolView as Pool, Pools } from "../../services/accounts/Pools.ts"
import type { PoolView } from "../api/PoolsApi.ts"
import { CurrentIdentity } from "../api/SessionAuth.ts"
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
    const cfId = Effect.map(CurrentIdentity, (identity) => identity.cfId)
    return handlers
      .handle("createPool", ({ path, payload }) => Effect.map(Effect.flatMap(cfId, (id) => pools.create(id, path.id, payload)), poolView))
      .handle("listPools", ({ path }) =>
        Effect.map(Effect.flatMap(cfId, (id) => pools.list(id, path.id)), (data) => ({ object: "list" as const, data: data.map(poolView) }))
      )
      .handle("getPool", ({ path }) => Effect.map(Effect.flatMap(cfId, (id) => pools.read(id, path.id, path.poolId)), poolView))
      .handle("updatePool", ({ path, payload }) =>
        Effect.map(Effect.flatMap(cfId, (id) => pools.update(id, path.id, path.poolId, payload)), poolView)
      )
      .handle("deletePool", ({ path }) => Effect.flatMap(cfId, (id) => pools.remove(id, path.id, path.poolId)))
      .handle("addPoolMember", ({ path }) =>
        Effect.map(Effect.flatMap(cfId, (id) => pools.addMember(id, path.id, path.poolId, path.cfId)), poolView)
      )
      .handle("removePoolMember", ({ path }) =>
        Effect.map(Effect.flatMap(cfId, (id) => pools.removeMember(id, path.id, path.poolId, path.cfId)), poolView)
      )
  })
)
