/**
 * Points (SPEC "Points earning"): the one writer of the append-only points ledger, and its reads. Every award is an
 * `INSERT ... ON CONFLICT DO NOTHING` against the ledger's unique keys (domain/accounts/points.ts `pointSource`), so a
 * frequency rule holds under concurrency and a repeated trigger earns nothing. Days are UTC days of the Effect clock.
 *
 * `total` is always the ledger's sum; `identities.points_balance` is its denormalized copy, brought in line by the
 * `points-reconcile` job (services/accounts/PointsReconciler.ts), and is what the leaderboard ranks.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import {
  completesStreak,
  LEADERBOARD_SIZE,
  ORACLE_INTERACTIONS_PER_DAY,
  POINT_TYPES,
  pointSource,
  POINTS,
  type PointType,
  runEndingAt,
  streaksOf,
  type TierName,
  tierOf,
  utcDay
} from "../../domain/accounts/points.ts"
import { Jobs } from "../platform/Jobs.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Sessions } from "./Sessions.ts"

export const POINTS_RECONCILE_JOB = "points-reconcile"

export interface PointsSummary {
  readonly total: number
  readonly tier: TierName
  readonly currentStreak: number
  readonly longestStreak: number
}

const PointsEntryRow = Schema.Struct({
  seq: Schema.String,
  id: Schema.String,
  type: Schema.Literal(...POINT_TYPES),
  amount: Schema.Int,
  source: Schema.String,
  createdAt: Schema.DateFromSelf
})
export type PointsEntry = typeof PointsEntryRow.Type

export interface PointsPage {
  readonly entries: ReadonlyArray<PointsEntry>
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  readonly nextCursor: string | null
}

export interface LeaderboardEntry {
  readonly displayName: string
  readonly points: number
}

/**
 * What this process already knows about today's oracle interactions: entries the ledger holds (`cfId|modelKey`) and
 * identities at the day's cap (`cfId|*`). Only facts the ledger confirmed are kept, and they stay true all day (the
 * ledger is append-only), so repeated views of a model cost no query.
 */
const makeViewCache = (maxEntries = 100_000) => {
  let day = ""
  const seen = new Set<string>()
  return {
    has: (today: string, key: string) => today === day && seen.has(key),
    add: (today: string, key: string) => {
      if (today !== day || seen.size >= maxEntries) {
        seen.clear()
        day = today
      }
      seen.add(key)
    }
  }
}

export class Points extends Effect.Service<Points>()("Points", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const sessions = yield* Sessions
    const jobs = yield* Jobs
    const viewCache = makeViewCache()

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Adds one entry unless the ledger already holds its (identity, type, source), or its once-only type. */
    const award = (cfId: string, type: PointType, source: string, at: Date): Effect.Effect<boolean> =>
      sql`
        INSERT INTO points_ledger (cf_id, type, amount, source, day, created_at)
        VALUES (${cfId}, ${type}, ${POINTS[type]}, ${source}, ${utcDay(at.getTime())}, ${at})
        ON CONFLICT DO NOTHING RETURNING seq`.pipe(
        Effect.map((rows) => rows.length > 0),
        orDieAtRepository
      )

    const loginDays = (cfId: string) =>
      SqlSchema.findAll({
        Request: Schema.String,
        Result: Schema.Struct({ day: Schema.String }),
        execute: (id) => sql`
          SELECT to_char(day, 'YYYY-MM-DD') AS day FROM points_ledger
          WHERE cf_id = ${id} AND type = 'daily_login' ORDER BY day`
      })(cfId).pipe(
        Effect.map((rows) => rows.map((row) => row.day)),
        orDieAtRepository
      )

    /** The sign-up bonus of a CF ID just created (in the creating transaction). */
    const awardSignup = Effect.fn("Points.awardSignup")(function* (cfId: string) {
      return yield* Effect.flatMap(now, (at) => award(cfId, "signup", pointSource.signup(), at))
    })

    /** A confirmed referral: 250 to the referrer, 50 to the referred identity (in the creating transaction). */
    const awardReferral = Effect.fn("Points.awardReferral")(function* (referral: { readonly referrerCfId: string; readonly referredCfId: string; readonly referralCode: string }) {
      const at = yield* now
      yield* award(referral.referrerCfId, "referral", pointSource.referral(referral.referredCfId), at)
      yield* award(referral.referredCfId, "referral_welcome", pointSource.referralWelcome(referral.referralCode), at)
    })

    /**
     * A sign-in: the day's login points on the first one of a UTC day and, when that day completes a streak of 7
     * consecutive days (7, 14, ...), the streak bonus. Runs in the sign-in's transaction; two sign-ins at once meet
     * at the unique key, and only the one that inserted the day's entry goes on to the bonus.
     */
    const recordLogin = Effect.fn("Points.recordLogin")(function* (cfId: string) {
      const at = yield* now
      const day = utcDay(at.getTime())
      const dailyLogin = yield* award(cfId, "daily_login", pointSource.dailyLogin(day), at)
      if (!dailyLogin) return { dailyLogin, streakBonus: false }
      const run = runEndingAt(yield* loginDays(cfId), day)
      const streakBonus = completesStreak(run) ? yield* award(cfId, "streak_bonus", pointSource.streakBonus(day), at) : false
      return { dailyLogin, streakBonus }
    })

    /** One oracle interaction unless the model was counted today or the day's 12 are reached; under a per-identity lock. */
    const countModelView = (cfId: string, modelKey: string, at: Date) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const day = utcDay(at.getTime())
          const source = pointSource.oracleInteraction(day, modelKey)
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`points-oracle:${cfId}`}))`
          const today = yield* SqlSchema.single({
            Request: Schema.Void,
            Result: Schema.Struct({ n: Schema.Int, counted: Schema.Boolean }),
            execute: () => sql`
              SELECT count(*)::int AS n, COALESCE(bool_or(source = ${source}), false) AS counted FROM points_ledger
              WHERE cf_id = ${cfId} AND type = 'oracle_interaction' AND day = ${day}`
          })(undefined)
          if (today.counted) return { counted: true, capped: today.n >= ORACLE_INTERACTIONS_PER_DAY }
          if (today.n >= ORACLE_INTERACTIONS_PER_DAY) return { counted: false, capped: true }
          yield* award(cfId, "oracle_interaction", source, at)
          return { counted: true, capped: today.n + 1 >= ORACLE_INTERACTIONS_PER_DAY }
        })
      ).pipe(orDieAtRepository)

    /**
     * A model's pricing read with the session cookie `token`: 5 points per unique model per UTC day, up to 12 a day.
     * No session, or an unknown one, counts nothing; a failure is logged and never fails the read.
     */
    const recordModelView: (token: string, modelKey: string) => Effect.Effect<void> = Effect.fn("Points.recordModelView")(function* (token: string, modelKey: string) {
      if (token === "") return
      const session = yield* sessions.peek(token)
      if (Option.isNone(session)) return
      const cfId = session.value
      const at = yield* now
      const day = utcDay(at.getTime())
      const modelEntry = `${cfId}|${modelKey}`
      const cap = `${cfId}|*`
      if (viewCache.has(day, modelEntry) || viewCache.has(day, cap)) return
      const outcome = yield* countModelView(cfId, modelKey, at)
      if (outcome.counted) viewCache.add(day, modelEntry)
      if (outcome.capped) viewCache.add(day, cap)
    }, Effect.catchAllCause((cause) => Effect.logWarning("could not count an oracle interaction", cause)))

    const summary = Effect.fn("Points.summary")(function* (cfId: string): Effect.fn.Return<PointsSummary> {
      const { total } = yield* SqlSchema.single({
        Request: Schema.String,
        Result: Schema.Struct({ total: Schema.NumberFromString }),
        execute: (id) => sql`SELECT COALESCE(sum(amount), 0)::text AS total FROM points_ledger WHERE cf_id = ${id}`
      })(cfId).pipe(orDieAtRepository)
      const streaks = streaksOf(yield* loginDays(cfId), utcDay((yield* now).getTime()))
      return { total, tier: tierOf(total), currentStreak: streaks.current, longestStreak: streaks.longest }
    })

    /** Newest first; `cursor` is the `nextCursor` of the previous page. */
    const history = Effect.fn("Points.history")(function* (cfId: string, page: { readonly limit: number; readonly cursor?: string | undefined }): Effect.fn.Return<PointsPage> {
      return yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: PointsEntryRow,
        execute: () => sql`
          SELECT seq::text AS seq, id::text AS id, type, amount, source, created_at FROM points_ledger
          WHERE cf_id = ${cfId} ${page.cursor === undefined ? sql`` : sql`AND seq < ${page.cursor}`}
          ORDER BY seq DESC LIMIT ${page.limit + 1}`
      })(undefined).pipe(
        Effect.map((rows) => {
          const entries = rows.slice(0, page.limit)
          return { entries, nextCursor: rows.length > page.limit ? (entries.at(-1)?.seq ?? null) : null }
        }),
        orDieAtRepository
      )
    })

    /** The top 50 by reconciled balance (ties: the earlier CF ID first), and when the balances were last reconciled. */
    const leaderboard = Effect.gen(function* () {
      const entries = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: Schema.Struct({ displayName: Schema.String, points: Schema.NumberFromString }),
        execute: () => sql`
          SELECT display_name, points_balance::text AS points FROM identities WHERE points_balance > 0
          ORDER BY points_balance DESC, created_at, cf_id LIMIT ${LEADERBOARD_SIZE}`
      })(undefined).pipe(orDieAtRepository)
      const lastRun = yield* jobs.lastSucceeded(POINTS_RECONCILE_JOB)
      return {
        entries: entries as ReadonlyArray<LeaderboardEntry>,
        updatedAt: Option.flatMap(lastRun, (run) => Option.fromNullable(run.finishedAt))
      }
    }).pipe(Effect.withSpan("Points.leaderboard"))

    /** Sets every identity's points_balance to its ledger sum; answers how many were corrected. */
    const reconcile = sql`
      WITH sums AS (
        SELECT i.cf_id, COALESCE(sum(p.amount), 0)::bigint AS total
        FROM identities i LEFT JOIN points_ledger p ON p.cf_id = i.cf_id GROUP BY i.cf_id
      )
      UPDATE identities i SET points_balance = sums.total FROM sums
      WHERE i.cf_id = sums.cf_id AND i.points_balance <> sums.total
      RETURNING i.cf_id`.pipe(
      Effect.map((rows) => rows.length),
      orDieAtRepository,
      Effect.withSpan("Points.reconcile")
    )

    return { awardSignup, awardReferral, recordLogin, recordModelView, summary, history, leaderboard, reconcile } as const
  })
}) {}
