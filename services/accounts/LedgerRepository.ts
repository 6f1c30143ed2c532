/**
 * The ledger's statements: accounts' balance columns, ledger entries and holds. Every read is decoded through a row
 * schema (amounts as bigints, kinds against their literals). These are building blocks: the Ledger service composes
 * them into its transactions and is the only caller, so nothing here changes a balance on its own authority.
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { LedgerEntryKind, WeiFromNumeric } from "../../domain/accounts/ledger.ts"
import { ReleaseOutcome, ReserveOutcome, SettleOutcome } from "../../domain/accounts/ledgerOutcomes.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

const Timestamp = Schema.DateFromSelf
const NullableWei = Schema.NullOr(WeiFromNumeric)

export const AccountRow = Schema.Struct({
  id: Schema.String,
  balanceWei: WeiFromNumeric,
  reservedWei: WeiFromNumeric,
  dailyLimitWei: NullableWei,
  weeklyLimitWei: NullableWei,
  monthlyLimitWei: NullableWei
})
export type AccountRow = typeof AccountRow.Type

export const EntryRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  kind: LedgerEntryKind,
  amountWei: WeiFromNumeric,
  balanceAfterWei: WeiFromNumeric,
  reference: Schema.NullOr(Schema.String),
  apiKeyId: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  createdAt: Timestamp
})
export type EntryRow = typeof EntryRow.Type

export const HoldRow = Schema.Struct({
  id: Schema.String,
  requestId: Schema.String,
  accountId: Schema.String,
  apiKeyId: Schema.NullOr(Schema.String),
  amountWei: WeiFromNumeric,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  releasedAt: Schema.NullOr(Timestamp),
  settledAt: Schema.NullOr(Timestamp),
  chargedWei: NullableWei
})
export type HoldRow = typeof HoldRow.Type

const settleItemsJson = (items: ReadonlyArray<SettleItem>) =>
  JSON.stringify(items.map((item) => ({
    request_id: item.requestId,
    charge: item.chargeWei.toString(),
    account_id: item.accountId,
    api_key_id: item.apiKeyId,
    member: item.memberCfId
  })))

const ACCOUNT_COLUMNS = "id, balance_wei, reserved_wei, daily_limit_wei, weekly_limit_wei, monthly_limit_wei"
const ENTRY_COLUMNS = "id, account_id, kind, amount_wei, balance_after_wei, reference, api_key_id, note, created_at"

const Sums = Schema.Struct({ day: WeiFromNumeric, week: WeiFromNumeric, month: WeiFromNumeric })
const KeySums = Schema.Struct({ day: WeiFromNumeric, month: WeiFromNumeric, live: WeiFromNumeric })
const NullableLimit = Schema.NullOr(WeiFromNumeric)
/** A member's spending pool: its caps, and its charges in each window plus its live holds (what ledger_reserve checks). */
const PoolSums = Schema.Struct({
  dailyLimitWei: NullableLimit,
  weeklyLimitWei: NullableLimit,
  monthlyLimitWei: NullableLimit,
  day: WeiFromNumeric,
  week: WeiFromNumeric,
  month: WeiFromNumeric
})
export type PoolUsage = typeof PoolSums.Type

export interface NewEntry {
  readonly accountId: string
  readonly kind: LedgerEntryKind
  readonly amountWei: bigint
  readonly balanceAfterWei: bigint
  readonly reference: string | null
  readonly apiKeyId: string | null
  readonly note: string | null
  readonly createdAt: Date
}

/** Arguments of `ledger_reserve`: amounts as decimal strings, the cap windows computed by the caller. */
export interface ReserveCall {
  readonly accountId: string
  readonly requestId: string
  readonly amountWei: string
  readonly keyId: string | null
  readonly keyDailyWei: string | null
  readonly keyMonthlyWei: string | null
  readonly day: Date
  readonly week: Date
  readonly month: Date
  readonly at: Date
  readonly expiresAt: Date
  /** The CF ID that issued the request's key or grant: its spending pool in an organization applies. */
  readonly memberCfId: string | null
}

/** One settlement of a batch: what `ledger_settle_batch` (migrations/repeatable/ledger.ts) reads from its JSON array. */
export interface SettleItem {
  readonly requestId: string
  readonly chargeWei: bigint
  /** What a settlement whose hold is gone charges: the account, the credential, the member whose pool counts it. */
  readonly accountId: string | null
  readonly apiKeyId: string | null
  readonly memberCfId: string | null
}

export const SettledRow = Schema.Struct({
  requestId: Schema.String,
  outcome: SettleOutcome,
  holdFound: Schema.Boolean,
  chargedWei: NullableWei,
  balanceWei: NullableWei
})
export type SettledRow = typeof SettledRow.Type

export class LedgerRepository extends Effect.Service<LedgerRepository>()("LedgerRepository", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findAccount = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, lock: Schema.Boolean }),
      Result: AccountRow,
      execute: ({ accountId, lock }) =>
        lock
          ? sql`SELECT ${sql.unsafe(ACCOUNT_COLUMNS)} FROM accounts WHERE id = ${accountId} FOR UPDATE`
          : sql`SELECT ${sql.unsafe(ACCOUNT_COLUMNS)} FROM accounts WHERE id = ${accountId}`
    })

    /** Moves the balance and the reserved total by signed deltas, answering the new figures. */
    const moveBalance = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, balanceDelta: Schema.BigIntFromSelf, reservedDelta: Schema.BigIntFromSelf }),
      Result: Schema.Struct({ balanceWei: WeiFromNumeric, reservedWei: WeiFromNumeric }),
      execute: ({ accountId, balanceDelta, reservedDelta }) => sql`
        UPDATE accounts
        SET balance_wei = balance_wei + ${balanceDelta.toString()}::numeric,
            reserved_wei = reserved_wei + ${reservedDelta.toString()}::numeric
        WHERE id = ${accountId}
        RETURNING balance_wei, reserved_wei`
    })

    const insertEntry = SqlSchema.single({
      Request: Schema.Any as Schema.Schema<NewEntry>,
      Result: EntryRow,
      execute: (entry) => sql`
        INSERT INTO ledger_entries (account_id, kind, amount_wei, balance_after_wei, reference, api_key_id, note, created_at)
        VALUES (${entry.accountId}, ${entry.kind}, ${entry.amountWei.toString()}::numeric, ${entry.balanceAfterWei.toString()}::numeric,
                ${entry.reference}, ${entry.apiKeyId}, ${entry.note}, ${entry.createdAt})
        RETURNING ${sql.unsafe(ENTRY_COLUMNS)}`
    })

    const findEntry = SqlSchema.findOne({
      Request: Schema.Struct({ kind: LedgerEntryKind, reference: Schema.String }),
      Result: EntryRow,
      execute: ({ kind, reference }) =>
        sql`SELECT ${sql.unsafe(ENTRY_COLUMNS)} FROM ledger_entries WHERE kind = ${kind} AND reference = ${reference}`
    })

    const entriesPage = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, beforeId: Schema.NullOr(Schema.String), limit: Schema.Int }),
      Result: EntryRow,
      execute: ({ accountId, beforeId, limit }) => sql`
        SELECT ${sql.unsafe(ENTRY_COLUMNS)} FROM ledger_entries
        WHERE account_id = ${accountId} ${beforeId === null ? sql`` : sql`AND id < ${beforeId}`}
        ORDER BY id DESC LIMIT ${limit}`
    })

    const totalSpent = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ spent: WeiFromNumeric }),
      execute: (accountId) => sql`
        SELECT COALESCE(-SUM(amount_wei), 0)::text AS spent FROM ledger_entries WHERE account_id = ${accountId} AND kind = 'charge'`
    })

    /** An account's charges since each window start (a charge is negative; the sums are what was spent). */
    const accountCharges = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, day: Timestamp, week: Timestamp, month: Timestamp, since: Timestamp }),
      Result: Sums,
      execute: ({ accountId, day, week, month, since }) => sql`
        SELECT COALESCE(-SUM(amount_wei) FILTER (WHERE created_at >= ${day}), 0)::text AS day,
               COALESCE(-SUM(amount_wei) FILTER (WHERE created_at >= ${week}), 0)::text AS week,
               COALESCE(-SUM(amount_wei) FILTER (WHERE created_at >= ${month}), 0)::text AS month
        FROM ledger_entries
        WHERE account_id = ${accountId} AND kind = 'charge' AND created_at >= ${since}`
    })

    /** A key's charges in its day and month, and its live holds. */
    const keyUsage = SqlSchema.single({
      Request: Schema.Struct({ apiKeyId: Schema.String, day: Timestamp, month: Timestamp }),
      Result: KeySums,
      execute: ({ apiKeyId, day, month }) => sql`
        SELECT
          (SELECT COALESCE(-SUM(amount_wei), 0) FROM ledger_entries
            WHERE api_key_id = ${apiKeyId} AND kind = 'charge' AND created_at >= ${day})::text AS day,
          (SELECT COALESCE(-SUM(amount_wei), 0) FROM ledger_entries
            WHERE api_key_id = ${apiKeyId} AND kind = 'charge' AND created_at >= ${month})::text AS month,
          (SELECT COALESCE(SUM(amount_wei), 0) FROM holds
            WHERE api_key_id = ${apiKeyId} AND released_at IS NULL AND settled_at IS NULL)::text AS live`
    })

    /** The pool `memberCfId` is in on the account (none outside organizations), as `ledger_reserve` counts it. */
    const poolUsage = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, memberCfId: Schema.String, day: Timestamp, week: Timestamp, month: Timestamp, since: Timestamp }),
      Result: PoolSums,
      execute: ({ accountId, day, memberCfId, month, since, week }) => sql`
        SELECT p.daily_limit_wei::text AS daily_limit_wei, p.weekly_limit_wei::text AS weekly_limit_wei,
          p.monthly_limit_wei::text AS monthly_limit_wei,
          (c.day + h.live)::text AS day, (c.week + h.live)::text AS week, (c.month + h.live)::text AS month
        FROM spending_pool_members m JOIN spending_pools p ON p.id = m.pool_id AND p.deleted_at IS NULL
        CROSS JOIN LATERAL (
          SELECT COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= ${day}), 0) AS day,
                 COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= ${week}), 0) AS week,
                 COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= ${month}), 0) AS month
          FROM ledger_entries e WHERE e.pool_id = p.id AND e.kind = 'charge' AND e.created_at >= ${since}) c
        CROSS JOIN LATERAL (
          SELECT COALESCE(SUM(x.amount_wei), 0) AS live
          FROM holds x WHERE x.pool_id = p.id AND x.released_at IS NULL AND x.settled_at IS NULL) h
        WHERE m.account_id = ${accountId}::bigint AND m.cf_id = ${memberCfId}`
    })

    /**
     * `ledger_reserve` (migrations/repeatable/ledger.ts): the whole reservation, checks included, in one statement;
     * `capped` says whether any cap (key, pool, account) applied besides the balance.
     */
    const reserve = SqlSchema.single({
      Request: Schema.Any as Schema.Schema<ReserveCall>,
      Result: Schema.Struct({
        outcome: ReserveOutcome,
        balanceWei: NullableWei,
        reservedWei: NullableWei,
        holdId: Schema.NullOr(Schema.String),
        poolId: Schema.NullOr(Schema.String),
        poolName: Schema.NullOr(Schema.String),
        capped: Schema.Boolean
      }),
      execute: (call) => sql`
        SELECT outcome, balance_wei::text AS balance_wei, reserved_wei::text AS reserved_wei, hold_id::text AS hold_id, pool_id, pool_name, capped
        FROM ledger_reserve(${call.accountId}::bigint, ${call.requestId}, ${call.amountWei}::numeric, ${call.keyId},
          ${call.keyDailyWei}::numeric, ${call.keyMonthlyWei}::numeric, ${call.day}, ${call.week}, ${call.month}, ${call.at},
          ${call.expiresAt}, ${call.memberCfId})`
    })

    /**
     * `ledger_settle_batch` (migrations/repeatable/ledger.ts): the items in one statement, so one transaction and one
     * WAL flush, with `alongside` (a data-modifying statement reading the function's rows as `settled`) in the same
     * statement. The statement's text does not depend on the batch's size, so PostgreSQL plans it once per connection.
     */
    const settleBatch = SqlSchema.findAll({
      Request: Schema.Any as Schema.Schema<{ items: ReadonlyArray<SettleItem>; at: Date; alongside: Statement.Fragment | undefined }>,
      Result: SettledRow,
      execute: ({ alongside, at, items }) => sql`
        WITH settled AS MATERIALIZED (SELECT * FROM ledger_settle_batch(${settleItemsJson(items)}::jsonb, ${at}))
        ${alongside === undefined ? sql`` : sql`, alongside AS (${alongside})`}
        SELECT request_id, outcome, hold_found, charged_wei::text AS charged_wei, balance_wei::text AS balance_wei FROM settled`
    })

    /** `ledger_release` (migrations/repeatable/ledger.ts). */
    const release = SqlSchema.single({
      Request: Schema.Struct({ requestId: Schema.String, at: Timestamp }),
      Result: Schema.Struct({ outcome: ReleaseOutcome }),
      execute: ({ at, requestId }) => sql`SELECT outcome FROM ledger_release(${requestId}, ${at})`
    })

    const expiredHolds = SqlSchema.findAll({
      Request: Schema.Struct({ now: Timestamp, limit: Schema.Int }),
      Result: Schema.Struct({ requestId: Schema.String }),
      execute: ({ limit, now }) => sql`
        SELECT request_id FROM holds
        WHERE released_at IS NULL AND settled_at IS NULL AND expires_at <= ${now}
        ORDER BY expires_at LIMIT ${limit}`
    })

    /** The open holds: their number and what they reserve (the partial index holds_live_expiry covers them). */
    const liveHolds = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ count: Schema.NumberFromString, reservedWei: WeiFromNumeric }),
      execute: () => sql`
        SELECT count(*)::text AS count, coalesce(sum(amount_wei), 0)::text AS reserved_wei FROM holds
        WHERE released_at IS NULL AND settled_at IS NULL`
    })

    const updateLimits = (accountId: string, limits: { daily: bigint | null; weekly: bigint | null; monthly: bigint | null }) => {
      const text = (value: bigint | null) => (value === null ? null : value.toString())
      return sql`
        UPDATE accounts
        SET daily_limit_wei = ${text(limits.daily)}::numeric,
            weekly_limit_wei = ${text(limits.weekly)}::numeric,
            monthly_limit_wei = ${text(limits.monthly)}::numeric
        WHERE id = ${accountId}
        RETURNING id`
    }

    /** The personal account of the identity named by its CF ID, e-mail or wallet address (both stored lower-case). */
    const accountOfIdentity = SqlSchema.findOne({
      Request: Schema.Struct({ by: Schema.Literal("cfId", "email", "wallet", "organization"), value: Schema.String }),
      Result: Schema.Struct({ accountId: Schema.String, cfId: Schema.String }),
      execute: ({ by, value }) => {
        if (by === "organization") {
          return sql`
            SELECT account_id::text AS account_id, owner_cf_id AS cf_id FROM organizations WHERE id = ${value} AND deleted_at IS NULL`
        }
        const match =
          by === "cfId"
            ? sql`i.cf_id = ${value}`
            : by === "email"
              ? sql`i.email = lower(${value})`
              : sql`i.wallet_address = lower(${value})`
        return sql`
          SELECT a.id AS account_id, i.cf_id FROM identities i JOIN accounts a ON a.owner_cf_id = i.cf_id
          WHERE ${match} AND a.kind = 'personal'
          ORDER BY a.id LIMIT 1`
      }
    })

    return {
      findAccount: (accountId: string, lock: boolean) => orDieAtRepository(findAccount({ accountId, lock })),
      moveBalance: (accountId: string, balanceDelta: bigint, reservedDelta: bigint) =>
        orDieAtRepository(moveBalance({ accountId, balanceDelta, reservedDelta })),
      insertEntry: (entry: NewEntry) => orDieAtRepository(insertEntry(entry)),
      findEntry: (kind: LedgerEntryKind, reference: string) => orDieAtRepository(findEntry({ kind, reference })),
      entriesPage: (accountId: string, beforeId: string | null, limit: number) =>
        orDieAtRepository(entriesPage({ accountId, beforeId, limit })),
      totalSpent: (accountId: string) => orDieAtRepository(Effect.map(totalSpent(accountId), (row) => row.spent)),
      accountCharges: (accountId: string, windows: { day: Date; week: Date; month: Date; since: Date }) =>
        orDieAtRepository(accountCharges({ accountId, ...windows })),
      keyUsage: (apiKeyId: string, windows: { day: Date; month: Date }) => orDieAtRepository(keyUsage({ apiKeyId, ...windows })),
      poolUsage: (accountId: string, memberCfId: string, windows: { day: Date; week: Date; month: Date; since: Date }) =>
        orDieAtRepository(poolUsage({ accountId, memberCfId, ...windows })),
      reserve: (call: ReserveCall) => orDieAtRepository(reserve(call)),
      settleBatch: (items: ReadonlyArray<SettleItem>, at: Date, alongside?: Statement.Fragment) =>
        orDieAtRepository(settleBatch({ items, at, alongside })),
      release: (requestId: string, at: Date) => orDieAtRepository(release({ requestId, at })),
      expiredHolds: (now: Date, limit: number) =>
        orDieAtRepository(Effect.map(expiredHolds({ now, limit }), (rows) => rows.map((row) => row.requestId))),
      liveHolds: orDieAtRepository(liveHolds(undefined)),
      updateLimits: (accountId: string, limits: { daily: bigint | null; weekly: bigint | null; monthly: bigint | null }) =>
        orDieAtRepository(Effect.map(updateLimits(accountId, limits), (rows) => rows.length > 0)),
      accountOfIdentity: (by: "cfId" | "email" | "wallet" | "organization", value: string) => orDieAtRepository(accountOfIdentity({ by, value }))
    } as const
  })
}) {}
