/**
 * Background jobs (price scan, chain sync, publication) run on one replica at a time: a job takes a
 * PostgreSQL session advisory lock on a reserved connection for as long as it runs, and records each run
 * in `job_runs`. A replica that finds the lock taken skips the run rather than waiting for it; an operation a
 * maintainer asked for is refused instead (409 conflict), so nobody mistakes a skip for a run.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Cause, Clock, Effect, Exit, Option, Schema, type Tracer } from "effect"
import { randomBytes } from "node:crypto"
import * as Os from "node:os"
import { Conflict } from "../../domain/errors.ts"
import { orDieUnlessUnavailable } from "./Database.ts"
import { orDieAtRepository } from "./RepositoryBoundary.ts"
import { recordJobRun } from "./metrics.ts"
import { jobSpanOptions } from "./traceRoots.ts"

/** First half of every lock key: this application's namespace among advisory locks ("CX"). */
const LOCK_NAMESPACE = 0x4358

const JobRun = Schema.Struct({
  job: Schema.String,
  instanceId: Schema.String,
  startedAt: Schema.DateFromSelf,
  finishedAt: Schema.NullOr(Schema.DateFromSelf),
  outcome: Schema.NullOr(Schema.Literal("succeeded", "failed")),
  summary: Schema.NullOr(Schema.String)
})
export type JobRun = typeof JobRun.Type

const summaryLimit = 500
const clip = (text: string) => (text.length > summaryLimit ? `${text.slice(0, summaryLimit - 1)}…` : text)

export class Jobs extends Effect.Service<Jobs>()("Jobs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const instanceId = `${Os.hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`
    // All connections to the embedded database share one session, where advisory locks are re-entrant:
    // this set keeps a job single within the process whatever the backend.
    const runningHere = new Set<string>()

    // Both stamps come from Clock, as the scheduler's "due" rule compares them with Clock (OracleScheduler).
    const recordStart = SqlSchema.single({
      Request: Schema.Struct({ job: Schema.String, startedAt: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ job, startedAt }) => sql`INSERT INTO job_runs ${sql.insert({ job, instanceId, startedAt })} RETURNING id`
    })

    const recordEnd = (id: string, finishedAt: Date, outcome: "succeeded" | "failed", summary: string) =>
      sql`UPDATE job_runs SET finished_at = ${finishedAt}::timestamptz, outcome = ${outcome}, summary = ${clip(summary)} WHERE id = ${id}`

    /**
     * Runs `effect` as `job` unless another replica (or this one) is running it: Some(result) when it ran,
     * None when it was skipped. `summarize` turns a result into the line stored with the run.
     */
    const runExclusive = <A, E, R>(
      job: string,
      effect: Effect.Effect<A, E, R>,
      summarize: (result: A) => string = () => "ok"
    ): Effect.Effect<Option.Option<A>, E, R> => run(job, effect, summarize, jobSpanOptions)

    /** A run traced as `job <name>`: its own trace (`jobSpanOptions`) when scheduled, a child when a request asked. */
    const run = <A, E, R>(
      job: string,
      effect: Effect.Effect<A, E, R>,
      summarize: (result: A) => string,
      span: Tracer.SpanOptions
    ): Effect.Effect<Option.Option<A>, E, R> => {
      const guarded = Effect.scoped(
        Effect.gen(function* () {
          const connection = yield* orDieUnlessUnavailable(sql.reserve)
          const [lock] = yield* orDieUnlessUnavailable(
            connection.execute("SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked", [LOCK_NAMESPACE, job], undefined)
          )
          if (lock?.locked !== true) {
            yield* Effect.logDebug("job already running on another replica; skipped").pipe(Effect.annotateLogs({ job }))
            return Option.none<A>()
          }
          yield* Effect.addFinalizer(() =>
            connection
              .execute("SELECT pg_advisory_unlock($1, hashtext($2))", [LOCK_NAMESPACE, job], undefined)
              .pipe(Effect.ignoreLogged)
          )
          const { id: runId } = yield* orDieAtRepository(recordStart({ job, startedAt: new Date(yield* Clock.currentTimeMillis) }))
          const exit = yield* Effect.exit(effect)
          const finishedAt = yield* Clock.currentTimeMillis
          recordJobRun(job, Exit.isSuccess(exit), finishedAt)
          yield* orDieUnlessUnavailable(
            Exit.match(exit, {
              onSuccess: (result) => recordEnd(runId, new Date(finishedAt), "succeeded", summarize(result)),
              onFailure: (cause) =>
                recordEnd(runId, new Date(finishedAt), "failed", Cause.isInterruptedOnly(cause) ? "interrupted" : Cause.pretty(cause))
            })
          )
          return Option.some(yield* exit)
        })
      )
      return Effect.acquireUseRelease(
        Effect.sync(() => {
          if (runningHere.has(job)) return false
          runningHere.add(job)
          return true
        }),
        (acquired) => (acquired ? guarded.pipe(Effect.annotateLogs({ job })) : Effect.succeed(Option.none<A>())),
        (acquired) => Effect.sync(() => acquired && runningHere.delete(job))
      ).pipe(Effect.withSpan(`job ${job}`, { ...span, attributes: { "cx.job": job } }))
    }

    /**
     * The same run for an operation someone asked for (a maintainer's publish or scan): rather than a silent skip,
     * a run already in progress here or on another replica is refused with 409 `conflict`, to be retried.
     */
    const runOrRefuse = <A, E, R>(
      job: string,
      effect: Effect.Effect<A, E, R>,
      summarize?: (result: A) => string
    ): Effect.Effect<A, E | Conflict, R> =>
      Effect.flatMap(
        run(job, effect, summarize ?? (() => "ok"), {}),
        Option.match({
          onNone: () =>
            Effect.fail(
              new Conflict({
                message: `The ${job} job is already running on this or another instance; retry once it has finished.`,
                details: { job }
              })
            ),
          onSome: (result) => Effect.succeed(result)
        })
      )

    const latestSucceeded = SqlSchema.findOne({
      Request: Schema.String,
      Result: JobRun,
      execute: (job) => sql`
        SELECT job, instance_id, started_at, finished_at, outcome, summary FROM job_runs
        WHERE job = ${job} AND outcome = 'succeeded'
        ORDER BY started_at DESC, id DESC LIMIT 1`
    })

    /** The latest finished run of `job` that succeeded, if any. */
    const lastSucceeded = (job: string) => orDieAtRepository(latestSucceeded(job))

    const newestRuns = SqlSchema.findAll({
      Request: Schema.Struct({ job: Schema.String, limit: Schema.Int }),
      Result: JobRun,
      execute: ({ job, limit }) => sql`
        SELECT job, instance_id, started_at, finished_at, outcome, summary FROM job_runs
        WHERE job = ${job} ORDER BY started_at DESC, id DESC LIMIT ${limit}`
    })

    const recentRuns = (job: string, limit: number) => orDieAtRepository(newestRuns({ job, limit }))

    return { instanceId, runExclusive, runOrRefuse, lastSucceeded, recentRuns } as const
  })
}) {}
