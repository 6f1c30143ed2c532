/**
 * The same migrations and the same queries on both backends: real PostgreSQL (when the machine has it)
 * and embedded PGlite through its loopback socket, both through the one PgClient configuration.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Layer, Logger, LogLevel, Redacted, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Usd18FromNumericString, parseUsd18 } from "../domain/money.ts"
import { pgClientLayer } from "../services/platform/Database.ts"
import { migrations } from "../migrations/index.ts"
import { runMigrations } from "../services/platform/Migrations.ts"
import { availableBackend, type Backend, createTestDatabase, type TestDatabase } from "./support/database.ts"

const backends: ReadonlyArray<Backend> = availableBackend() === "postgres" ? ["postgres", "pglite"] : ["pglite"]
if (!backends.includes("postgres")) console.log("[test] database.test.ts: no PostgreSQL reachable, running on PGlite only")

describe.each(backends)("on %s", (backend) => {
  let database: TestDatabase
  let scope: Scope.CloseableScope
  let run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(
      Layer.buildWithScope(
        pgClientLayer({ url: Redacted.make(database.url), poolSize: 4, connectTimeoutMs: 5000 }),
        scope
      )
    )
    run = (effect) =>
      Effect.runPromise(effect.pipe(Effect.provide(context), Logger.withMinimumLogLevel(LogLevel.Warning)))
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.close()
  })

  it("applies every migration once, and a second run applies none", async () => {
    const first = await run(runMigrations)
    const expected = Object.keys(migrations).map((key) => key.replace(/^0+/, ""))
    expect(first.map(([id, name]) => `${id}_${name}`)).toEqual(expected)
    const second = await run(runMigrations)
    expect(second).toEqual([])
    const recorded = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ migrationId: number }>`SELECT migration_id FROM schema_migrations`)
    )
    expect(recorded.map((row) => Number(row.migrationId)).sort((a, b) => a - b)).toEqual(
      expected.map((key) => Number(key.split("_")[0]))
    )
  })

  it("records job runs with camelCase names in and snake_case columns out", async () => {
    const rows = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO job_runs ${sql.insert({ job: "price-scan", instanceId: "replica-a" })}`
        yield* sql`UPDATE job_runs SET finished_at = now(), outcome = 'succeeded', summary = ${"3 changes"} WHERE job = 'price-scan'`
        return yield* sql<{ job: string; instanceId: string; outcome: string; summary: string; finishedAt: Date }>`
          SELECT job, instance_id, outcome, summary, finished_at FROM job_runs WHERE job = ${"price-scan"}`
      })
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ job: "price-scan", instanceId: "replica-a", outcome: "succeeded", summary: "3 changes" })
    expect(rows[0]!.finishedAt).toBeInstanceOf(Date)
  })

  it("enforces the job_runs constraints", async () => {
    const badName = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO job_runs (job, instance_id) VALUES ('Bad Name', 'x')`).pipe(
        Effect.exit
      )
    )
    expect(Exit.isFailure(badName)).toBe(true)
    const halfFinished = await run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`INSERT INTO job_runs (job, instance_id, finished_at) VALUES ('scan', 'x', now())`
      ).pipe(Effect.exit)
    )
    expect(Exit.isFailure(halfFinished)).toBe(true)
  })

  it("makes a table append-only with forbid_mutation(): UPDATE and DELETE are refused", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE ledger_probe (id serial PRIMARY KEY, amount numeric(78,0) NOT NULL)`
        yield* sql`CREATE TRIGGER ledger_probe_append_only BEFORE UPDATE OR DELETE ON ledger_probe
                   FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`
        yield* sql`INSERT INTO ledger_probe (amount) VALUES (1)`
        const update = yield* Effect.exit(sql`UPDATE ledger_probe SET amount = 2`)
        const remove = yield* Effect.exit(sql`DELETE FROM ledger_probe`)
        const rows = yield* sql<{ amount: string }>`SELECT amount FROM ledger_probe`
        return { update, remove, rows }
      })
    )
    expect(Exit.isFailure(outcome.update)).toBe(true)
    expect(Exit.isFailure(outcome.remove)).toBe(true)
    const reason = (exit: Exit.Exit<unknown, unknown>) =>
      Exit.isFailure(exit) ? String((Cause.squash(exit.cause) as { cause?: { message?: string } }).cause?.message) : ""
    expect(reason(outcome.update)).toMatch(/ledger_probe is append-only: UPDATE refused/)
    expect(reason(outcome.remove)).toMatch(/ledger_probe is append-only: DELETE refused/)
    expect(outcome.rows).toEqual([{ amount: "1" }])
  })

  it("stores usd18 amounts exactly in numeric(78,0)", async () => {
    const price = parseUsd18("123456789012345678901234567890.123456789012345678")
    const encoded = Schema.encodeSync(Usd18FromNumericString)(price)
    const rows = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE money_probe (amount numeric(78,0) NOT NULL)`
        yield* sql`INSERT INTO money_probe (amount) VALUES (${encoded})`
        return yield* sql<{ amount: string }>`SELECT amount FROM money_probe`
      })
    )
    expect(Schema.decodeUnknownSync(Usd18FromNumericString)(rows[0]!.amount)).toBe(price)
  })

  it("rolls back every statement of a failed transaction", async () => {
    const result = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE tx_probe (id int PRIMARY KEY)`
        const failed = yield* Effect.exit(
          sql.withTransaction(
            Effect.zipRight(sql`INSERT INTO tx_probe VALUES (1)`, sql`INSERT INTO tx_probe VALUES (1)`)
          )
        )
        const rows = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM tx_probe`
        return { failed, count: rows[0]!.count }
      })
    )
    expect(Exit.isFailure(result.failed)).toBe(true)
    expect(result.count).toBe("0")
  })
})
