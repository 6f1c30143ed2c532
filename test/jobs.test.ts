/**
 * Background jobs run on one replica at a time and leave a record of each run (DESIGN.md section 8).
 */
import { SqlClient } from "@effect/sql"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Conflict } from "../domain/errors.ts"
import { pgClientLayer } from "../services/platform/Database.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { runMigrations } from "../services/platform/Migrations.ts"
import { availableBackend, type Backend, createTestDatabase, type TestDatabase } from "./support/database.ts"

const backends: ReadonlyArray<Backend> = availableBackend() === "postgres" ? ["postgres", "pglite"] : ["pglite"]

/** One "replica": its own pool and its own Jobs service over the shared database. */
const replica = async (url: string, scope: Scope.Scope) => {
  const layer = Jobs.Default.pipe(
    Layer.provideMerge(pgClientLayer({ url: Redacted.make(url), poolSize: 4, connectTimeoutMs: 5000 }))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return <A, E>(effect: Effect.Effect<A, E, Jobs | SqlClient.SqlClient>) =>
    Effect.runPromise(effect.pipe(Effect.provide(context), Logger.withMinimumLogLevel(LogLevel.Warning)))
}

describe.each(backends)("on %s", (backend) => {
  let database: TestDatabase
  let scope: Scope.CloseableScope
  let run: Awaited<ReturnType<typeof replica>>

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    scope = Effect.runSync(Scope.make())
    run = await replica(database.url, scope)
    await run(runMigrations)
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.close()
  })

  it("runs a job and records its outcome and summary", async () => {
    const result = await run(
      Effect.flatMap(Jobs, (jobs) => jobs.runExclusive("price-scan", Effect.succeed(3), (n) => `${n} cards changed`))
    )
    expect(result).toEqual(Option.some(3))
    const last = await run(Effect.flatMap(Jobs, (jobs) => jobs.lastSucceeded("price-scan")))
    expect(Option.getOrThrow(last)).toMatchObject({ job: "price-scan", outcome: "succeeded", summary: "3 cards changed" })
    expect(Option.getOrThrow(last).finishedAt).toBeInstanceOf(Date)
  })

  it("skips a job already running, and runs it again once it has finished", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const release = yield* Deferred.make<void>()
        const started = yield* Deferred.make<void>()
        const first = yield* Effect.fork(
          jobs.runExclusive("chain-sync", Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)))
        )
        yield* Deferred.await(started)
        const whileRunning = yield* jobs.runExclusive("chain-sync", Effect.succeed("second"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        const afterwards = yield* jobs.runExclusive("chain-sync", Effect.succeed("third"))
        return { whileRunning, afterwards }
      })
    )
    expect(outcome.whileRunning).toEqual(Option.none())
    expect(outcome.afterwards).toEqual(Option.some("third"))
  })

  it("refuses an asked-for run with a conflict while the job is running, rather than skipping it silently", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const release = yield* Deferred.make<void>()
        const started = yield* Deferred.make<void>()
        const scheduled = yield* Effect.fork(
          jobs.runExclusive("publish", Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)))
        )
        yield* Deferred.await(started)
        const whileRunning = yield* Effect.exit(jobs.runOrRefuse("publish", Effect.succeed("maintainer")))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(scheduled)
        const afterwards = yield* jobs.runOrRefuse("publish", Effect.succeed("maintainer"), (who) => `asked by the ${who}`)
        const [latest] = yield* jobs.recentRuns("publish", 1)
        return { whileRunning, afterwards, latest }
      })
    )
    expect(Exit.isFailure(outcome.whileRunning)).toBe(true)
    const refusal = Exit.isFailure(outcome.whileRunning) ? Cause.failureOption(outcome.whileRunning.cause) : Option.none()
    expect(Option.getOrThrow(refusal)).toBeInstanceOf(Conflict)
    expect(Option.getOrThrow(refusal)).toMatchObject({ details: { job: "publish" }, message: expect.stringMatching(/already running/) })
    expect(outcome.afterwards).toBe("maintainer")
    expect(outcome.latest).toMatchObject({ outcome: "succeeded", summary: "asked by the maintainer" })
  })

  it("records a failed run and passes its failure on", async () => {
    const exit = await run(
      Effect.flatMap(Jobs, (jobs) => jobs.runExclusive("publish", Effect.fail("rpc refused" as const))).pipe(Effect.exit)
    )
    expect(exit).toEqual(Exit.fail("rpc refused"))
    const [latest] = await run(Effect.flatMap(Jobs, (jobs) => jobs.recentRuns("publish", 1)))
    expect(latest).toMatchObject({ outcome: "failed" })
    expect(latest!.summary).toContain("rpc refused")
    // The lock was released: the job can run again.
    expect(await run(Effect.flatMap(Jobs, (jobs) => jobs.runExclusive("publish", Effect.succeed(1))))).toEqual(Option.some(1))
  })
})

describe.runIf(availableBackend() === "postgres")("across replicas on PostgreSQL", () => {
  let database: TestDatabase
  let scope: Scope.CloseableScope

  beforeAll(async () => {
    database = await createTestDatabase("postgres")
    scope = Effect.runSync(Scope.make())
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.close()
  })

  it("lets one replica run a job while the other skips it", async () => {
    const replicaA = await replica(database.url, scope)
    const replicaB = await replica(database.url, scope)
    await replicaA(runMigrations)

    const release = Effect.runSync(Deferred.make<void>())
    const started = Effect.runSync(Deferred.make<void>())
    const onA = replicaA(
      Effect.flatMap(Jobs, (jobs) =>
        jobs.runExclusive("price-scan", Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)))
      )
    )
    await Effect.runPromise(Deferred.await(started))
    const onB = await replicaB(Effect.flatMap(Jobs, (jobs) => jobs.runExclusive("price-scan", Effect.succeed("b"))))
    expect(onB).toEqual(Option.none())
    await Effect.runPromise(Deferred.succeed(release, undefined))
    expect(Option.isSome(await onA)).toBe(true)

    const afterA = await replicaB(Effect.flatMap(Jobs, (jobs) => jobs.runExclusive("price-scan", Effect.succeed("b"))))
    expect(afterA).toEqual(Option.some("b"))
    const runs = await replicaB(Effect.flatMap(Jobs, (jobs) => jobs.recentRuns("price-scan", 10)))
    expect(new Set(runs.map((r) => r.instanceId)).size).toBe(2)
  })
})
