/**
 * Issue 9 item 11: reservations racing for one account. Against a balance that covers exactly K holds, 200
 * concurrent reservations succeed exactly K times, the reserved total never exceeds the balance, and afterwards
 * the ledger entries sum to the balance. On PostgreSQL (row locks) and on PGlite (one session).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Fiber, Ref } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ledger } from "../services/accounts/Ledger.ts"
import { availableBackend, type Backend, createTestDatabase, type TestDatabase } from "./support/database.ts"
import { createIdentity, startLedger } from "./support/ledger.ts"

const backends: ReadonlyArray<Backend> = availableBackend() === "postgres" ? ["postgres", "pglite"] : ["pglite"]

const K = 37
const HOLD = 1_000_000_000_000_000n
const ATTEMPTS = 200

describe.each(backends)("on %s", (backend) => {
  let database: TestDatabase
  let harness: Awaited<ReturnType<typeof startLedger>>

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    harness = await startLedger(database.url)
  }, 60_000)

  afterAll(async () => {
    await harness?.close()
    await database?.close()
  })

  const balances = (accountId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ balance: string; reserved: string; live: string; entries: string }>`
        SELECT a.balance_wei::text AS balance, a.reserved_wei::text AS reserved,
               (SELECT COALESCE(SUM(amount_wei), 0) FROM holds
                 WHERE account_id = a.id AND released_at IS NULL AND settled_at IS NULL)::text AS live,
               (SELECT COALESCE(SUM(amount_wei), 0) FROM ledger_entries WHERE account_id = a.id)::text AS entries
        FROM accounts a WHERE a.id = ${accountId}`
    ).pipe(
      Effect.map(([row]) => ({
        balance: BigInt(row!.balance),
        reserved: BigInt(row!.reserved),
        live: BigInt(row!.live),
        entries: BigInt(row!.entries)
      }))
    )

  it(`${ATTEMPTS} concurrent reservations against a balance for ${K} succeed exactly ${K} times`, async () => {
    const outcome = await harness.run(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const { accountId } = yield* createIdentity
        yield* ledger.grant(accountId, HOLD * BigInt(K), "exactly K holds")

        // Watch the account while the reservations race: reserved may never pass the balance.
        const samples = yield* Ref.make<Array<{ balance: bigint; reserved: bigint }>>([])
        const watcher = yield* Effect.fork(
          Effect.forever(
            Effect.flatMap(balances(accountId), (row) => Ref.update(samples, (all) => [...all, row])).pipe(
              Effect.zipRight(Effect.sleep("2 millis"))
            )
          )
        )
        const results = yield* Effect.forEach(
          Array.from({ length: ATTEMPTS }, (_, i) => `race-${backend}-${i}`),
          (requestId) =>
            ledger.reserve({ accountId, requestId, amountWei: HOLD }).pipe(
              Effect.map(() => ({ requestId, ok: true as const })),
              Effect.catchTag("InsufficientBalance", () => Effect.succeed({ requestId, ok: false as const }))
            ),
          { concurrency: "unbounded" }
        )
        yield* Fiber.interrupt(watcher)
        const afterReserve = yield* balances(accountId)

        // Settle the winners at varied costs (one above its hold), release a few: the entries still sum to the balance.
        const winners = results.filter((r) => r.ok).map((r) => r.requestId)
        yield* Effect.forEach(
          winners,
          (requestId, i) =>
            i % 5 === 0
              ? Effect.asVoid(ledger.release(requestId))
              : Effect.asVoid(ledger.settle({ requestId, chargeWei: i === 1 ? HOLD * 2n : HOLD / BigInt(i + 1) })),
          { concurrency: "unbounded" }
        )
        return { winners: winners.length, samples: yield* Ref.get(samples), afterReserve, afterSettle: yield* balances(accountId) }
      })
    )

    expect(outcome.winners).toBe(K)
    expect(outcome.samples.length).toBeGreaterThan(0)
    for (const sample of [...outcome.samples, outcome.afterReserve]) expect(sample.reserved <= sample.balance).toBe(true)
    expect(outcome.afterReserve).toEqual({ balance: HOLD * BigInt(K), reserved: HOLD * BigInt(K), live: HOLD * BigInt(K), entries: HOLD * BigInt(K) })
    expect(outcome.afterSettle.reserved).toBe(0n)
    expect(outcome.afterSettle.live).toBe(0n)
    expect(outcome.afterSettle.entries).toBe(outcome.afterSettle.balance)
    expect(outcome.afterSettle.balance < HOLD * BigInt(K)).toBe(true)
  }, 60_000)
})
