/**
 * Spending pools inside an organization (SPEC.md "Organization rules"; issue 12 item 4): create, list, read, edit and
 * delete pools and manage who is in them (Owners and Admins; every member may look). Each pool's caps are checked at
 * reservation by `ledger_reserve` (migration 0014) under the organization's account lock, against the charges and
 * live holds recorded with the pool; what the windows used is shown beside each cap. Every change runs in one
 * transaction that locks the organization's row, so two edits of one organization's pools queue.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { capWindows, earliestWindowStart } from "../../domain/accounts/ledger.ts"
import {
  applyCapsChange,
  generatePoolId,
  MAX_POOLS_PER_ORGANIZATION,
  type PoolCaps,
  type PoolCapsChange
} from "../../domain/accounts/pools.ts"
import { Conflict, NotFound } from "../../domain/errors.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { decodedRows } from "../platform/RepositoryBoundary.ts"
import { currentCfId } from "./CurrentIdentity.ts"
import { CfId, type OrgId, PoolId } from "../../domain/accounts/ids.ts"
import { Organizations } from "./Organizations.ts"

export interface PoolMemberView {
  readonly cfId: CfId
  readonly displayName: string
  readonly addedAt: string
}

export interface PoolView {
  readonly id: PoolId
  readonly name: string
  readonly caps: PoolCaps
  /** Charges in the current UTC day, week (from Monday) and month, plus live holds: what the caps are checked against. */
  readonly used: { readonly dailyWei: bigint; readonly weeklyWei: bigint; readonly monthlyWei: bigint }
  readonly members: ReadonlyArray<PoolMemberView>
  readonly createdAt: string
}

export interface NewPool extends PoolCapsChange {
  readonly name: string
}

export interface PoolChange extends PoolCapsChange {
  readonly name?: string | undefined
}

const WeiText = Schema.String.pipe(Schema.pattern(/^-?\d+$/))

const PoolRow = Schema.Struct({
  id: PoolId,
  name: Schema.String,
  dailyLimitWei: Schema.NullOr(WeiText),
  weeklyLimitWei: Schema.NullOr(WeiText),
  monthlyLimitWei: Schema.NullOr(WeiText),
  createdAt: Schema.DateFromSelf,
  usedDay: WeiText,
  usedWeek: WeiText,
  usedMonth: WeiText
})

const MemberRow = Schema.Struct({
  poolId: PoolId,
  cfId: CfId,
  displayName: Schema.String,
  addedAt: Schema.DateFromSelf
})

const wei = (text: string | null) => (text === null ? null : BigInt(text))
const text = (value: bigint | null) => (value === null ? null : value.toString())

const poolNotFound = (poolId: string) => new NotFound({ message: `No spending pool ${poolId} in this organization.` })

export class Pools extends Effect.Service<Pools>()("Pools", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const orgs = yield* Organizations
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(sql.withTransaction(effect))

    /** Takes the organization's row lock: pool changes of one organization run one at a time. */
    const lockOrganization = (accountId: string) => sql`SELECT 1 FROM organizations WHERE account_id = ${accountId}::bigint FOR UPDATE`

    /** The organization's live pools (one when `poolId` is given) with what their windows used. */
    const rows = (accountId: string, poolId?: string) =>
      Effect.gen(function* () {
        const windows = capWindows(new Date(yield* Clock.currentTimeMillis))
        const since = earliestWindowStart(windows)
        return yield* decodedRows(PoolRow, sql`
          SELECT p.id, p.name, p.daily_limit_wei::text AS daily_limit_wei, p.weekly_limit_wei::text AS weekly_limit_wei,
            p.monthly_limit_wei::text AS monthly_limit_wei, p.created_at,
            (c.day + h.live)::text AS used_day, (c.week + h.live)::text AS used_week, (c.month + h.live)::text AS used_month
          FROM spending_pools p
          CROSS JOIN LATERAL (
            SELECT COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= ${windows.dayStart}), 0) AS day,
                   COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= ${windows.weekStart}), 0) AS week,
                   COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= ${windows.monthStart}), 0) AS month
            FROM ledger_entries e WHERE e.pool_id = p.id AND e.kind = 'charge' AND e.created_at >= ${since}) c
          CROSS JOIN LATERAL (
            SELECT COALESCE(SUM(x.amount_wei), 0) AS live
            FROM holds x WHERE x.pool_id = p.id AND x.released_at IS NULL AND x.settled_at IS NULL) h
          WHERE p.account_id = ${accountId}::bigint AND p.deleted_at IS NULL
            ${poolId === undefined ? sql`` : sql`AND p.id = ${poolId}`}
          ORDER BY p.created_at, p.id`)
      })

    const memberRows = (accountId: string) =>
      decodedRows(MemberRow, sql`
        SELECT m.pool_id, m.cf_id, i.display_name, m.added_at
        FROM spending_pool_members m JOIN identities i ON i.cf_id = m.cf_id
        WHERE m.account_id = ${accountId}::bigint
        ORDER BY m.added_at, m.cf_id`)

    const views = (accountId: string, poolId?: string) =>
      Effect.gen(function* () {
        const pools = yield* rows(accountId, poolId)
        const members = yield* memberRows(accountId)
        return pools.map((row): PoolView => ({
          id: row.id,
          name: row.name,
          caps: { dailyWei: wei(row.dailyLimitWei), weeklyWei: wei(row.weeklyLimitWei), monthlyWei: wei(row.monthlyLimitWei) },
          used: { dailyWei: BigInt(row.usedDay), weeklyWei: BigInt(row.usedWeek), monthlyWei: BigInt(row.usedMonth) },
          members: members
            .filter((m) => m.poolId === row.id)
            .map((m) => ({ cfId: m.cfId, displayName: m.displayName, addedAt: m.addedAt.toISOString() })),
          createdAt: row.createdAt.toISOString()
        }))
      })

    const one = (accountId: string, poolId: string) =>
      Effect.flatMap(views(accountId, poolId), (found) => (found[0] === undefined ? Effect.fail(poolNotFound(poolId)) : Effect.succeed(found[0])))

    /** Refuses a name another live pool of the organization has (whatever its case). */
    const nameFree = (accountId: string, name: string, except?: string) =>
      Effect.flatMap(
        decodedRows(Schema.Struct({ id: Schema.String }), sql`
          SELECT id FROM spending_pools
          WHERE account_id = ${accountId}::bigint AND deleted_at IS NULL AND lower(name) = lower(${name})
            ${except === undefined ? sql`` : sql`AND id <> ${except}`}`),
        (taken) => (taken.length === 0 ? Effect.void : Effect.fail(new Conflict({ message: `A spending pool named "${name}" exists already.` })))
      )

    const create = Effect.fn("Pools.create")(function* (orgId: OrgId, pool: NewPool) {
      const cfId = yield* currentCfId
      return yield* transaction(
        Effect.gen(function* () {
          const m = yield* orgs.authorised(orgId, "managePools", "Creating spending pools")
          yield* lockOrganization(m.accountId)
          const [count] = yield* decodedRows(Schema.Struct({ n: Schema.Int }), sql`
            SELECT count(*)::int AS n FROM spending_pools WHERE account_id = ${m.accountId}::bigint AND deleted_at IS NULL`)
          if ((count?.n ?? 0) >= MAX_POOLS_PER_ORGANIZATION) {
            return yield* new Conflict({ message: `An organization holds at most ${MAX_POOLS_PER_ORGANIZATION} spending pools.` })
          }
          yield* nameFree(m.accountId, pool.name)
          const caps = applyCapsChange({ dailyWei: null, weeklyWei: null, monthlyWei: null }, pool)
          const id = generatePoolId()
          yield* sql`
            INSERT INTO spending_pools (id, account_id, name, daily_limit_wei, weekly_limit_wei, monthly_limit_wei, created_by_cf_id)
            VALUES (${id}, ${m.accountId}::bigint, ${pool.name}, ${text(caps.dailyWei)}::numeric, ${text(caps.weeklyWei)}::numeric,
              ${text(caps.monthlyWei)}::numeric, ${cfId})`
          return yield* one(m.accountId, id)
        })
      )
    })

    // Every role may see pools (SPEC "Organization rules"): membership is the whole check.
    const list = Effect.fn("Pools.list")(function* (orgId: OrgId) {
      const m = yield* orgs.membership(orgId)
      return yield* ofAccount(m.accountId)
    })

    const read = Effect.fn("Pools.read")(function* (orgId: OrgId, poolId: PoolId) {
      const m = yield* orgs.membership(orgId)
      return yield* orDieUnlessUnavailable(one(m.accountId, poolId))
    })

    /** The pools of an organization's account, for a reader that already holds its membership (an app grant's tools). */
    const ofAccount = (accountId: string) => orDieUnlessUnavailable(views(accountId))

    /** Renames it or changes its caps; the caps bind from the next reservation. */
    const update = Effect.fn("Pools.update")(function* (orgId: OrgId, poolId: PoolId, change: PoolChange) {
      return yield* transaction(
        Effect.gen(function* () {
          const m = yield* orgs.authorised(orgId, "managePools", "Editing spending pools")
          yield* lockOrganization(m.accountId)
          const current = yield* one(m.accountId, poolId)
          if (change.name !== undefined) yield* nameFree(m.accountId, change.name, poolId)
          const caps = applyCapsChange(current.caps, change)
          yield* sql`
            UPDATE spending_pools SET name = ${change.name ?? current.name}, daily_limit_wei = ${text(caps.dailyWei)}::numeric,
              weekly_limit_wei = ${text(caps.weeklyWei)}::numeric, monthly_limit_wei = ${text(caps.monthlyWei)}::numeric
            WHERE id = ${poolId}`
          return yield* one(m.accountId, poolId)
        })
      )
    })

    /** Its members leave it (their requests then count against no pool); its history stays with its charges. */
    const remove = Effect.fn("Pools.remove")(function* (orgId: OrgId, poolId: PoolId) {
      return yield* transaction(
        Effect.gen(function* () {
          const m = yield* orgs.authorised(orgId, "managePools", "Deleting spending pools")
          yield* lockOrganization(m.accountId)
          yield* one(m.accountId, poolId)
          yield* sql`DELETE FROM spending_pool_members WHERE pool_id = ${poolId}`
          yield* sql`UPDATE spending_pools SET deleted_at = ${new Date(yield* Clock.currentTimeMillis)}::timestamptz WHERE id = ${poolId}`
          return { deleted: poolId }
        })
      )
    })

    /** Puts a member of the organization in the pool; one already in another pool is refused (leave that one first). */
    const addMember = Effect.fn("Pools.addMember")(function* (orgId: OrgId, poolId: PoolId, memberCfId: CfId) {
      return yield* transaction(
        Effect.gen(function* () {
          const m = yield* orgs.authorised(orgId, "managePools", "Managing who is in a spending pool")
          yield* lockOrganization(m.accountId)
          yield* one(m.accountId, poolId)
          const [member] = yield* decodedRows(Schema.Struct({ cfId: Schema.String }), sql`
            SELECT cf_id FROM organization_members WHERE account_id = ${m.accountId}::bigint AND cf_id = ${memberCfId}`)
          if (member === undefined) return yield* new NotFound({ message: `${memberCfId} is not a member of ${orgId}.` })
          const [current] = yield* decodedRows(Schema.Struct({ poolId: Schema.String, name: Schema.String }), sql`
            SELECT m.pool_id, p.name FROM spending_pool_members m JOIN spending_pools p ON p.id = m.pool_id
            WHERE m.account_id = ${m.accountId}::bigint AND m.cf_id = ${memberCfId}`)
          if (current !== undefined && current.poolId !== poolId) {
            return yield* new Conflict({
              message: `${memberCfId} is in the spending pool "${current.name}" (${current.poolId}); a member is in at most one pool, so take them out of it first.`
            })
          }
          if (current === undefined) {
            yield* sql`INSERT INTO spending_pool_members (account_id, cf_id, pool_id) VALUES (${m.accountId}::bigint, ${memberCfId}, ${poolId})`
          }
          return yield* one(m.accountId, poolId)
        })
      )
    })

    const removeMember = Effect.fn("Pools.removeMember")(function* (orgId: OrgId, poolId: PoolId, memberCfId: CfId) {
      return yield* transaction(
        Effect.gen(function* () {
          const m = yield* orgs.authorised(orgId, "managePools", "Managing who is in a spending pool")
          yield* lockOrganization(m.accountId)
          yield* one(m.accountId, poolId)
          const removed = yield* decodedRows(Schema.Struct({ cfId: Schema.String }), sql`
            DELETE FROM spending_pool_members WHERE pool_id = ${poolId} AND cf_id = ${memberCfId} RETURNING cf_id`)
          if (removed.length === 0) return yield* new NotFound({ message: `${memberCfId} is not in the spending pool ${poolId}.` })
          return yield* one(m.accountId, poolId)
        })
      )
    })

    return { create, list, read, ofAccount, update, remove, addMember, removeMember } as const
  })
}) {}
