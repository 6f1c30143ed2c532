/**
 * The ledger's hot path as DESIGN.md section 10 decided it: settlements group-committed (many in one statement, an
 * outcome per item), a settlement that finds no hold still charging once by request id, and the reservation
 * committing asynchronously for its own transaction only. Plus the group commit itself: what queues while a batch
 * runs goes in the next one.
 */
import { it as effect } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Either, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ledger, type SettleInput } from "../services/accounts/Ledger.ts"
import { makeGroupCommit } from "../services/platform/GroupCommit.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { createIdentity, startLedger } from "./support/ledger.ts"

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
let requests = 0
const requestId = () => `req-batch-${Date.now()}-${++requests}`

const funded = async (balance: bigint) => {
  const identity = await harness.run(createIdentity)
  await ledger((l) => l.grant(identity.accountId, balance, "test funds"))
  return identity
}

const hold = async (accountId: string, amountWei: bigint) => (await ledger((l) => l.reserve({ accountId, requestId: requestId(), amountWei }))).requestId

const query = <Row extends object>(text: string) => harness.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(text)))

const entriesOf = (accountId: string) =>
  query<{ kind: string; amount: string; reference: string | null; key: string | null }>(
    `SELECT kind, amount_wei::text AS amount, reference, api_key_id AS key FROM ledger_entries WHERE account_id = ${accountId} ORDER BY id`
  )

const sumOfEntries = async (accountId: string) =>
  (await entriesOf(accountId)).reduce((sum, entry) => sum + BigInt(entry.amount), 0n)

/** Each item's outcome as a plain value: the settlement's figures, or the refusal's tag. */
const outcomes = (results: ReadonlyArray<Either.Either<{ chargedWei: bigint; balanceWei: bigint; alreadySettled: boolean; holdFound: boolean }, { _tag: string }>>) =>
  results.map(Either.match({
    onLeft: (error) => error._tag,
    onRight: ({ alreadySettled, balanceWei, chargedWei, holdFound }) => ({ chargedWei, balanceWei, alreadySettled, holdFound })
  }))

describe("a settlement batch", () => {
  it("applies items of several accounts in their order in one statement, and a refused item changes nothing", async () => {
    const a = await funded(1000n)
    const b = await funded(500n)
    const [a1, a2, b1] = [await hold(a.accountId, 100n), await hold(a.accountId, 50n), await hold(b.accountId, 200n)]
    const nobody = requestId()
    const unknownAccount = requestId()
    const batch: ReadonlyArray<SettleInput> = [
      { requestId: a1, chargeWei: 80n },
      { requestId: b1, chargeWei: 250n },
      { requestId: nobody, chargeWei: 5n },
      { requestId: a2, chargeWei: 10n },
      { requestId: unknownAccount, chargeWei: 7n, chargeTo: { accountId: "999999999", apiKeyId: null, memberCfId: null } }
    ]
    const first = await ledger((l) => l.settleBatch(batch))
    expect(outcomes(first)).toEqual([
      { chargedWei: 80n, balanceWei: 920n, alreadySettled: false, holdFound: true },
      // Above its hold: charged in full (the balance may go below what was held).
      { chargedWei: 250n, balanceWei: 250n, alreadySettled: false, holdFound: true },
      "NotFound",
      { chargedWei: 10n, balanceWei: 910n, alreadySettled: false, holdFound: true },
      "NotFound"
    ])
    expect(await ledger((l) => l.account(a.accountId))).toMatchObject({ balanceWei: 910n, reservedWei: 0n, spentWei: 90n })
    expect(await ledger((l) => l.account(b.accountId))).toMatchObject({ balanceWei: 250n, reservedWei: 0n, spentWei: 250n })
    expect(await sumOfEntries(a.accountId)).toBe(910n)
    expect(await sumOfEntries(b.accountId)).toBe(250n)
    const refused = await query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ledger_entries WHERE reference IN ('${nobody}', '${unknownAccount}')`
    )
    expect(refused[0]!.n).toBe("0")

    // The same batch again charges nothing: each item answers what it was charged the first time.
    const again = await ledger((l) => l.settleBatch(batch))
    expect(outcomes(again)).toEqual([
      { chargedWei: 80n, balanceWei: 910n, alreadySettled: true, holdFound: true },
      { chargedWei: 250n, balanceWei: 250n, alreadySettled: true, holdFound: true },
      "NotFound",
      { chargedWei: 10n, balanceWei: 910n, alreadySettled: true, holdFound: true },
      "NotFound"
    ])
    expect(await sumOfEntries(a.accountId)).toBe(910n)
  })

  it("charges a settlement whose hold is gone once, to the account and key it names, and the key's cap counts it", async () => {
    const { accountId } = await funded(1000n)
    const lost = requestId()
    const chargeTo = { accountId, apiKeyId: "key_lost_hold", memberCfId: null }
    const settled = await ledger((l) => l.settle({ requestId: lost, chargeWei: 300n, chargeTo }))
    expect(settled).toMatchObject({ chargedWei: 300n, balanceWei: 700n, alreadySettled: false, holdFound: false })
    const twice = await ledger((l) => l.settle({ requestId: lost, chargeWei: 300n, chargeTo }))
    expect(twice).toMatchObject({ chargedWei: 300n, balanceWei: 700n, alreadySettled: true, holdFound: false })
    expect((await entriesOf(accountId)).filter((e) => e.kind === "charge")).toEqual([
      { kind: "charge", amount: "-300", reference: lost, key: "key_lost_hold" }
    ])
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: 700n, reservedWei: 0n, spentWei: 300n })
    // The key's daily cap of 301 wei has 1 wei left after that charge.
    const apiKey = { id: "key_lost_hold", dailyLimitWei: 301n, monthlyLimitWei: null }
    const refused = await harness.run(
      Effect.flip(Effect.flatMap(Ledger, (l) => l.reserve({ accountId, requestId: requestId(), amountWei: 2n, apiKey })))
    )
    expect(refused).toMatchObject({ _tag: "SpendingLimitReached", details: { scope: "key_daily" } })
    // Without whom to charge, a request with no hold is not found, as before.
    const unknown = await harness.run(Effect.flip(Effect.flatMap(Ledger, (l) => l.settle({ requestId: requestId(), chargeWei: 1n }))))
    expect(unknown._tag).toBe("NotFound")
  })

  it("settles a hold the sweeper released, giving nothing back twice", async () => {
    const { accountId } = await funded(1000n)
    const id = await hold(accountId, 100n)
    expect(await ledger((l) => l.release(id))).toEqual({ released: true })
    const settled = await ledger((l) => l.settle({ requestId: id, chargeWei: 60n }))
    expect(settled).toMatchObject({ chargedWei: 60n, balanceWei: 940n, holdFound: true })
    expect(await ledger((l) => l.account(accountId))).toMatchObject({ balanceWei: 940n, reservedWei: 0n })
  })
})

describe("the reservation", () => {
  it("commits asynchronously, for its own transaction alone", async () => {
    const { accountId } = await funded(1000n)
    const inside = await harness.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(
          Effect.zipRight(
            Effect.flatMap(Ledger, (l) => l.reserve({ accountId, requestId: requestId(), amountWei: 10n })),
            sql<{ synchronousCommit: string }>`SHOW synchronous_commit`
          )
        ))
    )
    expect(inside[0]!.synchronousCommit).toBe("off")
    const after = await query<{ synchronousCommit: string }>("SHOW synchronous_commit")
    expect(after[0]!.synchronousCommit).toBe("on")
  })
})

describe("group commit", () => {
  effect.scoped("runs what queued while a batch ran as the next batch, each caller getting its own result", () =>
    Effect.gen(function* () {
      const sizes: Array<number> = []
      const gate = yield* Deferred.make<void>()
      const batches = yield* makeGroupCommit({
        run: (items: ReadonlyArray<number>) =>
          Effect.zipRight(
            Effect.sync(() => sizes.push(items.length)),
            // The first batch waits until everything else has queued behind it.
            Effect.as(sizes.length === 1 ? Deferred.await(gate) : Effect.void, items.map((n) => (n % 5 === 0 ? Either.left(`refused ${n}`) : Either.right(n * 2))))
          ),
        maxBatch: 100
      })
      const first = yield* Effect.fork(Effect.either(batches.submit(1)))
      yield* Effect.yieldNow()
      const rest = yield* Effect.fork(Effect.forEach(Array.from({ length: 20 }, (_, i) => i + 2), (n) => Effect.either(batches.submit(n)), { concurrency: "unbounded" }))
      yield* Effect.repeat(Effect.yieldNow(), { times: 20 })
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(first)).toEqual(Either.right(2))
      const results = yield* Fiber.join(rest)
      expect(sizes).toEqual([1, 20])
      expect(results[3]).toEqual(Either.left("refused 5"))
      expect(results[0]).toEqual(Either.right(4))
    }))
})
