/**
 * The credit ledger (issue 9, items 5 and 9): append-only entries, idempotent credits, reserve / settle / release
 * with the balance and every spending cap checked in one transaction, the sweeper of expired holds, and the UTC
 * windows the caps are counted in.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { capLeft, capWindowEnds, capWindows, parseCredits, spendWindows } from "../domain/accounts/ledger.ts"
import { sweepHolds } from "../services/accounts/HoldSweeper.ts"
import { type ApiKeyCaps, Ledger, type ReserveInput } from "../services/accounts/Ledger.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { at, createIdentity, startLedger } from "./support/ledger.ts"

let database: TestDatabase
let harness: Awaited<ReturnType<typeof startLedger>>

beforeAll(async () => {
  database = await createTestDatabase()
  harness = await startLedger(database.url, { HOLD_TTL_SECONDS: "600" })
}, 60_000)

afterAll(async () => {
  await harness?.close()
  await database?.close()
})

const ledger = <A, E>(f: (ledger: Ledger) => Effect.Effect<A, E>) => harness.run(Effect.flatMap(Ledger, f))
const newAccount = () => harness.run(createIdentity)
let requests = 0
const requestId = () => `req-${Date.now()}-${++requests}`

/** An account holding `balance` wei. */
const funded = async (balance: bigint) => {
  const identity = await newAccount()
  await ledger((l) => l.grant(identity.accountId, balance, "test funds"))
  return identity
}

/** The error code a refused reservation answers with, or "ok". */
const attempt = (input: Omit<ReserveInput, "requestId">, instant?: string) =>
  harness.run(
    Effect.flatMap(Ledger, (l) => l.reserve({ ...input, requestId: requestId() })).pipe(
      instant === undefined ? (e) => e : at(instant),
      Effect.match({
        onSuccess: (hold) => ({ outcome: "ok" as const, requestId: hold.requestId }),
        onFailure: (error) => ({
          outcome: error._tag,
          requestId: undefined,
          scope: error._tag === "SpendingLimitReached" ? error.details.scope : undefined
        })
      })
    )
  )

const settleAt = (id: string, chargeWei: bigint, instant: string) =>
  harness.run(Effect.flatMap(Ledger, (l) => l.settle({ requestId: id, chargeWei })).pipe(at(instant)))

const sumOfEntries = (accountId: string) =>
  harness.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ sum: string }>`SELECT COALESCE(SUM(amount_wei), 0)::text AS sum FROM ledger_entries WHERE account_id = ${accountId}`
    )
  ).then((rows) => BigInt(rows[0]!.sum))

describe("ledger entries", () => {
  it("are append-only: the trigger refuses UPDATE and DELETE", async () => {
    const { accountId } = await funded(100n)
    for (const statement of [
      `UPDATE ledger_entries SET note = 'rewritten' WHERE account_id = ${accountId}`,
      `DELETE FROM ledger_entries WHERE account_id = ${accountId}`
    ]) {
      const failure = await harness.run(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.flip, Effect.map((e) => String(e.cause)))
      )
      expect(failure).toMatch(/ledger_entries is append-only: (UPDATE|DELETE) refused/)
    }
    expect(await sumOfEntries(accountId)).toBe(100n)
  })
})

describe("credits", () => {
  it("a grant with a reference, and a deposit, are credited once however often they are asked for", async () => {
    const { accountId } = await newAccount()
    const first = await ledger((l) => l.grant(accountId, 500n, "welcome", "promo-1"))
    const again = await ledger((l) => l.grant(accountId, 500n, "welcome", "promo-1"))
    expect(first).toMatchObject({ applied: true, balanceWei: 500n })
    expect(again).toMatchObject({ applied: false, balanceWei: 500n })
    expect(again.entry.id).toBe(first.entry.id)

    const reference = `0x${"ab".repeat(32)}:${requests++}`
    const deposit = await ledger((l) => l.deposit(accountId, 1000n, reference))
    const replay = await ledger((l) => l.deposit(accountId, 1000n, reference))
    expect(deposit).toMatchObject({ applied: true, balanceWei: 1500n })
    expect(replay).toMatchObject({ applied: false, balanceWei: 1500n })
    expect((await ledger((l) => l.account(accountId))).balanceWei).toBe(1500n)
    expect(await sumOfEntries(accountId)).toBe(1500n)
  })

  it("a withdrawal is refused beyond the available credit, and refunded once", async () => {
    const { accountId } = await funded(100n)
    const hold = await ledger((l) => l.reserve({ accountId, requestId: requestId(), amountWei: 30n }))
    const refused = await harness.run(Effect.flip(Effect.flatMap(Ledger, (l) => l.withdraw(accountId, 71n, "w-1"))))
    expect(refused._tag).toBe("InsufficientBalance")
    expect(await ledger((l) => l.withdraw(accountId, 70n, "w-1"))).toMatchObject({ applied: true, balanceWei: 30n })
    expect(await ledger((l) => l.refundWithdrawal("w-1"))).toMatchObject({ applied: true, balanceWei: 100n })
    expect(await ledger((l) => l.refundWithdrawal("w-1"))).toMatchObject({ applied: false, balanceWei: 100n })
    await ledger((l) => l.release(hold.requestId))
    expect(await sumOfEntries(accountId)).toBe(100n)
  })
})

describe("reserve, settle, release", () => {
  it("refuses a reservation above the available credit with insufficient_balance", async () => {
    const { accountId } = await funded(100n)
    expect(await attempt({ accountId, amountWei: 101n })).toMatchObject({ outcome: "InsufficientBalance" })
    expect(await attempt({ accountId, amountWei: 60n })).toMatchObject({ outcome: "ok" })
    // The live hold counts: 40 remain available.
    expect(await attempt({ accountId, amountWei: 41n })).toMatchObject({ outcome: "InsufficientBalance" })
    expect(await attempt({ accountId, amountWei: 40n })).toMatchObject({ outcome: "ok" })
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: 100n, reservedWei: 100n })
  })

  it("settles the actual cost, which may leave the balance negative; then every reservation is refused", async () => {
    const { accountId } = await funded(100n)
    const hold = await ledger((l) => l.reserve({ accountId, requestId: requestId(), amountWei: 80n }))
    const settled = await ledger((l) => l.settle({ requestId: hold.requestId, chargeWei: 130n }))
    expect(settled).toMatchObject({ chargedWei: 130n, balanceWei: -30n, alreadySettled: false })
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: -30n, reservedWei: 0n, spentWei: 130n })
    expect(await attempt({ accountId, amountWei: 1n })).toMatchObject({ outcome: "InsufficientBalance" })

    // Settling again charges nothing more.
    const twice = await ledger((l) => l.settle({ requestId: hold.requestId, chargeWei: 130n }))
    expect(twice).toMatchObject({ chargedWei: 130n, balanceWei: -30n, alreadySettled: true })
    expect(await sumOfEntries(accountId)).toBe(-30n)
  })

  it("settles below the hold and gives the rest back", async () => {
    const { accountId } = await funded(100n)
    const hold = await ledger((l) => l.reserve({ accountId, requestId: requestId(), amountWei: 80n }))
    await ledger((l) => l.settle({ requestId: hold.requestId, chargeWei: 25n }))
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: 75n, reservedWei: 0n, spentWei: 25n })
    const entries = await ledger((l) => l.entries(accountId, { limit: 10 }))
    expect(entries.entries.map((e) => [e.kind, e.amountWei, e.balanceAfterWei, e.reference])).toEqual([
      ["charge", -25n, 75n, hold.requestId],
      ["grant", 100n, 100n, null]
    ])
  })

  it("releases a hold once, charging nothing", async () => {
    const { accountId } = await funded(100n)
    const hold = await ledger((l) => l.reserve({ accountId, requestId: requestId(), amountWei: 100n }))
    expect(await ledger((l) => l.release(hold.requestId))).toEqual({ released: true })
    expect(await ledger((l) => l.release(hold.requestId))).toEqual({ released: false })
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: 100n, reservedWei: 0n, spentWei: 0n })
    const unknown = await harness.run(Effect.flip(Effect.flatMap(Ledger, (l) => l.release("no-such-request"))))
    expect(unknown._tag).toBe("NotFound")
  })

  it("refuses a second reservation under the same request id", async () => {
    const { accountId } = await funded(100n)
    const id = requestId()
    await ledger((l) => l.reserve({ accountId, requestId: id, amountWei: 10n }))
    const again = await harness.run(Effect.flip(Effect.flatMap(Ledger, (l) => l.reserve({ accountId, requestId: id, amountWei: 10n }))))
    expect(again._tag).toBe("Conflict")
  })

  it("the sweeper releases holds past their expiry and leaves the others", async () => {
    const { accountId } = await funded(100n)
    const old = await harness.run(Effect.flatMap(Ledger, (l) => l.reserve({ accountId, requestId: requestId(), amountWei: 30n })).pipe(at("2026-01-10T12:00:00Z")))
    const recent = await harness.run(Effect.flatMap(Ledger, (l) => l.reserve({ accountId, requestId: requestId(), amountWei: 20n })).pipe(at("2026-01-10T12:09:00Z")))
    expect(old.expiresAt.toISOString()).toBe("2026-01-10T12:10:00.000Z")

    // Ten minutes after the first: it has expired (expiry is inclusive), the second has not.
    const swept = await harness.run(sweepHolds.pipe(at("2026-01-10T12:10:00Z")))
    expect(swept._tag === "Some" && swept.value).toBeGreaterThanOrEqual(1)
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: 100n, reservedWei: 20n })
    expect(await ledger((l) => l.release(old.requestId))).toEqual({ released: false })
    expect(await ledger((l) => l.release(recent.requestId))).toEqual({ released: true })
  })
})

describe("spending caps", () => {
  const limits = (daily: bigint | null, weekly: bigint | null, monthly: bigint | null) => ({
    dailyWei: daily,
    weeklyWei: weekly,
    monthlyWei: monthly
  })

  it("refuses a reservation over each account cap with spending_limit_reached naming the scope", async () => {
    for (const [scope, caps] of [
      ["account_daily", limits(50n, null, null)],
      ["account_weekly", limits(null, 50n, null)],
      ["account_monthly", limits(null, null, 50n)]
    ] as const) {
      const { accountId } = await funded(1000n)
      await ledger((l) => l.setLimits(accountId, caps))
      // Charges and live holds both count.
      const first = await attempt({ accountId, amountWei: 20n })
      await ledger((l) => l.settle({ requestId: first.requestId!, chargeWei: 20n }))
      expect(await attempt({ accountId, amountWei: 20n })).toMatchObject({ outcome: "ok" })
      expect(await attempt({ accountId, amountWei: 11n })).toEqual({ outcome: "SpendingLimitReached", scope })
      expect(await attempt({ accountId, amountWei: 10n })).toMatchObject({ outcome: "ok" })
    }
  })

  it("checks a key's daily and monthly caps in the same transaction, before the account's", async () => {
    const { accountId } = await funded(1000n)
    await ledger((l) => l.setLimits(accountId, limits(30n, null, null)))
    const apiKey: ApiKeyCaps = { id: "key_00000000000000aa", dailyLimitWei: 50n, monthlyLimitWei: 80n }
    const day1 = "2026-04-14T10:00:00Z"
    const day2 = "2026-04-15T10:00:00Z"
    const first = await attempt({ accountId, amountWei: 40n, apiKey }, day1)
    expect(first).toEqual({ outcome: "SpendingLimitReached", scope: "account_daily" })
    await ledger((l) => l.setLimits(accountId, limits(null, null, null)))
    const charged = await attempt({ accountId, amountWei: 40n, apiKey }, day1)
    await settleAt(charged.requestId!, 40n, day1)
    expect(await attempt({ accountId, amountWei: 41n, apiKey }, day2)).toEqual({ outcome: "SpendingLimitReached", scope: "key_monthly" })
    expect(await attempt({ accountId, amountWei: 40n, apiKey }, day2)).toMatchObject({ outcome: "ok" })
    // That live hold fills the month; another key of the same account is unaffected.
    expect(await attempt({ accountId, amountWei: 1n, apiKey }, day2)).toEqual({ outcome: "SpendingLimitReached", scope: "key_monthly" })
    const other: ApiKeyCaps = { id: "key_00000000000000bb", dailyLimitWei: 5n, monthlyLimitWei: null }
    expect(await attempt({ accountId, amountWei: 6n, apiKey: other }, day2)).toEqual({ outcome: "SpendingLimitReached", scope: "key_daily" })
    expect(await attempt({ accountId, amountWei: 5n, apiKey: other }, day2)).toMatchObject({ outcome: "ok" })
  })

  it("counts charges in UTC windows: the day at midnight, the week on Monday, the month on the 1st", async () => {
    const { accountId } = await funded(10_000n)
    await ledger((l) => l.setLimits(accountId, limits(100n, 150n, 200n)))
    // Saturday 2026-02-28, late: 90 charged in February, in the week that began on Monday 2026-02-23.
    const saturday = await attempt({ accountId, amountWei: 90n }, "2026-02-28T23:59:59.999Z")
    await settleAt(saturday.requestId!, 90n, "2026-02-28T23:59:59.999Z")
    expect(await attempt({ accountId, amountWei: 11n }, "2026-02-28T23:59:59.999Z")).toEqual({ outcome: "SpendingLimitReached", scope: "account_daily" })

    // Sunday 2026-03-01 00:00: a new day and a new month, the same week.
    expect(await attempt({ accountId, amountWei: 61n }, "2026-03-01T00:00:00Z")).toEqual({ outcome: "SpendingLimitReached", scope: "account_weekly" })
    const sunday = await attempt({ accountId, amountWei: 60n }, "2026-03-01T00:00:00Z")
    await settleAt(sunday.requestId!, 60n, "2026-03-01T00:00:00Z")
    expect(await attempt({ accountId, amountWei: 1n }, "2026-03-01T23:59:59.999Z")).toEqual({ outcome: "SpendingLimitReached", scope: "account_weekly" })

    // Monday 2026-03-02 00:00: a new week; March has 60 charged, so 140 remain of the month and 100 of the day.
    expect(await attempt({ accountId, amountWei: 101n }, "2026-03-02T00:00:00Z")).toEqual({ outcome: "SpendingLimitReached", scope: "account_daily" })
    const monday = await attempt({ accountId, amountWei: 100n }, "2026-03-02T00:00:00Z")
    await settleAt(monday.requestId!, 100n, "2026-03-02T00:00:00Z")
    expect(await attempt({ accountId, amountWei: 41n }, "2026-03-03T00:00:00Z")).toEqual({ outcome: "SpendingLimitReached", scope: "account_monthly" })
    expect(await attempt({ accountId, amountWei: 40n }, "2026-03-03T00:00:00Z")).toMatchObject({ outcome: "ok" })
  })

  it("windows are computed in UTC whatever the instant's offset", () => {
    const windows = (instant: string) => {
      const w = capWindows(new Date(instant))
      return [w.dayStart, w.weekStart, w.monthStart].map((d) => d.toISOString())
    }
    expect(windows("2026-03-01T23:59:59.999Z")).toEqual(["2026-03-01T00:00:00.000Z", "2026-02-23T00:00:00.000Z", "2026-03-01T00:00:00.000Z"])
    expect(windows("2026-03-02T00:00:00.000Z")).toEqual(["2026-03-02T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-01T00:00:00.000Z"])
    // 01:30 in Paris on Monday is still Sunday in UTC.
    expect(windows("2026-03-02T00:30:00+01:00")).toEqual(["2026-03-01T00:00:00.000Z", "2026-02-23T00:00:00.000Z", "2026-03-01T00:00:00.000Z"])
    expect(windows("2028-02-29T12:00:00Z")).toEqual(["2028-02-29T00:00:00.000Z", "2028-02-28T00:00:00.000Z", "2028-02-01T00:00:00.000Z"])
    expect(windows("2026-01-01T00:00:00Z")).toEqual(["2026-01-01T00:00:00.000Z", "2025-12-29T00:00:00.000Z", "2026-01-01T00:00:00.000Z"])
  })

  it("the overview's windows: when each cap window ends, the last 7 and 30 UTC days, and what a cap leaves", () => {
    const ends = (instant: string) => {
      const w = capWindowEnds(capWindows(new Date(instant)))
      return [w.dayStart, w.weekStart, w.monthStart].map((d) => d.toISOString())
    }
    // Sunday the last day of February: the day, the week and the month all end at the same midnight.
    expect(ends("2026-03-01T23:59:59.999Z")).toEqual(["2026-03-02T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-04-01T00:00:00.000Z"])
    expect(ends("2026-12-31T08:00:00Z")).toEqual(["2027-01-01T00:00:00.000Z", "2027-01-04T00:00:00.000Z", "2027-01-01T00:00:00.000Z"])
    const recent = spendWindows(new Date("2026-03-02T00:30:00+01:00"))
    expect([recent.today, recent.last7Days, recent.last30Days].map((d) => d.toISOString())).toEqual([
      "2026-03-01T00:00:00.000Z",
      "2026-02-23T00:00:00.000Z",
      "2026-01-31T00:00:00.000Z"
    ])
    expect(capLeft({ limitWei: 100n, usedWei: 30n })).toBe(70n)
    expect(capLeft({ limitWei: 100n, usedWei: 130n })).toBe(0n)
    expect(capLeft({ limitWei: null, usedWei: 130n })).toBeNull()
  })

  it("allows spending up to a cap exactly, and reports the key's cap before the account's when both are exceeded", async () => {
    const { accountId } = await funded(1000n)
    await ledger((l) => l.setLimits(accountId, limits(50n, null, null)))
    const apiKey: ApiKeyCaps = { id: "key_00000000000000cc", dailyLimitWei: 100n, monthlyLimitWei: null }
    const instant = "2026-05-06T09:00:00Z"
    const charged = await attempt({ accountId, amountWei: 10n, apiKey }, instant)
    await settleAt(charged.requestId!, 10n, instant)
    // 10 used of the account's 50 and of the key's 100: 40 fits exactly, 41 exceeds only the account's cap.
    expect(await attempt({ accountId, amountWei: 41n, apiKey }, instant)).toEqual({ outcome: "SpendingLimitReached", scope: "account_daily" })
    // Both exceeded: the key's (narrower) refusal is the one reported.
    expect(await attempt({ accountId, amountWei: 91n, apiKey }, instant)).toEqual({ outcome: "SpendingLimitReached", scope: "key_daily" })
    expect(await attempt({ accountId, amountWei: 40n, apiKey }, instant)).toMatchObject({ outcome: "ok" })
    // Everything is used now: one wei more exceeds the account's day (the key still has room).
    expect(await attempt({ accountId, amountWei: 1n, apiKey }, instant)).toEqual({ outcome: "SpendingLimitReached", scope: "account_daily" })
  })
})

describe("account summary, limits and entries", () => {
  it("pages entries newest first with a cursor", async () => {
    const { accountId } = await newAccount()
    for (const amount of [1n, 2n, 3n, 4n, 5n]) await ledger((l) => l.grant(accountId, amount, null))
    const first = await ledger((l) => l.entries(accountId, { limit: 2 }))
    expect(first.entries.map((e) => e.amountWei)).toEqual([5n, 4n])
    const second = await ledger((l) => l.entries(accountId, { limit: 2, cursor: first.nextCursor! }))
    expect(second.entries.map((e) => e.amountWei)).toEqual([3n, 2n])
    const last = await ledger((l) => l.entries(accountId, { limit: 2, cursor: second.nextCursor! }))
    expect(last).toMatchObject({ nextCursor: null })
    expect(last.entries.map((e) => e.balanceAfterWei)).toEqual([1n])
  })

  it("sets and clears the account caps", async () => {
    const { accountId } = await newAccount()
    const set = await ledger((l) => l.setLimits(accountId, { dailyWei: 10n, weeklyWei: null, monthlyWei: 10n ** 24n }))
    expect(set).toEqual({ balanceWei: 0n, reservedWei: 0n, spentWei: 0n, limits: { dailyWei: 10n, weeklyWei: null, monthlyWei: 10n ** 24n } })
    const cleared = await ledger((l) => l.setLimits(accountId, { dailyWei: null, weeklyWei: null, monthlyWei: null }))
    expect(cleared.limits).toEqual({ dailyWei: null, weeklyWei: null, monthlyWei: null })
  })

  it("finds an identity's account by CF ID, e-mail (any case) or wallet address (any case)", async () => {
    const identity = await newAccount()
    for (const name of [identity.cfId, identity.email.toUpperCase(), identity.wallet.toUpperCase().replace("0X", "0x")]) {
      expect(await ledger((l) => l.resolveAccount(name))).toEqual({ accountId: identity.accountId, cfId: identity.cfId })
    }
    const unknown = await harness.run(Effect.flip(Effect.flatMap(Ledger, (l) => l.resolveAccount("nobody@example.com"))))
    expect(unknown._tag).toBe("NotFound")
  })
})

describe("credits typed by an operator", () => {
  it("are parsed exactly into wei, 18 decimals", () => {
    expect(parseCredits("25")).toEqual(Either.right(25n * 10n ** 18n))
    expect(parseCredits("0.000000000000000001")).toEqual(Either.right(1n))
    expect(parseCredits("1.5")).toEqual(Either.right(15n * 10n ** 17n))
    for (const bad of ["0", "-1", "1e3", "1.0000000000000000001", "", "abc"]) {
      expect(Either.isLeft(parseCredits(bad))).toBe(true)
    }
    expect(parseCredits("1e3")).toEqual(Either.left('credit amount "1e3" must be a plain decimal (no exponent)'))
  })
})
