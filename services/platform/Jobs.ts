/**
 * Background jobs (price scan, chain sync, publication) run on one replica at a time: a job takes a
 * PostgreSQL session advisory lock on a reserved connection for as long as it runs, and records each run
 * in `job_runs`. A replica that finds the lock taken skips the run rather than waiting for it.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Option } from "effect"
import { randomBytes } from "node:crypto"
import * as Os from "node:os"
import { orDieUnlessUnavailable } from "./Database.ts"

/** First half of every lock key: this application's namespace among advisory locks ("CX"). */
const LOCK_NAMESPACE = 0x4358

export interface JobRun {
  readonly job: string
  readonly instanceId: string
  readonly startedAt: Date
  readonly finishedAt: Date | null
  readonly outcome: "succeeded" | "failed" | null
  readonly summary: string | null
}

const summaryLimit = 500
const clip = (text: string) => (text.length > summaryLimit ? `${text.slice(0, summaryLimit - 1)}…` : text)

export class Jobs extends Effect.Service<Jobs>()("Jobs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const instanceId = `${Os.hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`
    // All connections to the embedded database share one session, where advisory locks are re-entrant:
    // this set keeps a job single within the process whatever the backend.
    const runningHere = new Set<string>()

    const recordStart = (job: string) =>
      sql<{ id: string }>`INSERT INTO job_runs ${sql.insert({ job, instanceId })} RETURNING id`.pipe(
        Effect.map((rows) => rows[0]!.id)
      )

    const recordEnd = (id: string, outcome: "succeeded" | "failed", summary: string) =>
      sql`UPDATE job_runs SET finished_at = now(), outcome = ${outcome}, summary = ${clip(summary)} WHERE id = ${id}`

    /**
     * Runs `effect` as `job` unless another replica (or this one) is running it: Some(result) when it ran,
     * None when it was skipped. `summarize` turns a result into the line stored with the run.
     */
    const runExclusive = <A, E, R>(
      job: string,
      effect: Effect.Effect<A, E, R>,
      summarize: (result: A) => string = () => "ok"
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
          const runId = yield* orDieUnlessUnavailable(recordStart(job))
          const exit = yield* Effect.exit(effect)
          yield* orDieUnlessUnavailable(
            Exit.match(exit, {
              onSuccess: (result) => recordEnd(runId, "succeeded", summarize(result)),
              onFailure: (cause) =>
                recordEnd(runId, "failed", Cause.isInterruptedOnly(cause) ? "interrupted" : Cause.pretty(cause))
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
      )
    }

    /** The latest finished run of `job` that succeeded, if any. */
    const lastSucceeded = (job: string) =>
      orDieUnlessUnavailable(
        sql<JobRun>`
          SELECT job, instance_id, started_at, finished_at, outcome, summary FROM job_runs
          WHERE job = ${job} AND outcome = 'succeeded'
          ORDER BY started_at DESC LIMIT 1`
      ).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    const recentRuns = (job: string, limit: number) =>
      orDieUnlessUnavailable(
        sql<JobRun>`
          SELECT job, instance_id, started_at, finished_at, outcome, summary FROM job_runs
          WHERE job = ${job} ORDER BY started_at DESC, id DESC LIMIT ${limit}`
      )

    return { instanceId, runExclusive, lastSucceeded, recentRuns } as const
  })
}) {}
