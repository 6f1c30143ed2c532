/**
 * Referrals (SPEC "Referral rules"): clicks on a referral link (recorded up to 100 per code per hour, with the
 * address only as its SHA-256), attribution of a new CF ID to the code it arrived with (points to both sides in the
 * creating transaction), and the referrer's dashboard.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import {
  conversionRate,
  isReferralCode,
  MAX_LISTED_REFERRALS,
  MAX_USER_AGENT_LENGTH,
  REFERRAL_CLICKS_PER_CODE,
  REFERRAL_WINDOW_SECONDS
} from "../../domain/accounts/referrals.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Points } from "./Points.ts"

export const hashIp = (ip: string): string => createHash("sha256").update(ip).digest("hex")

export interface Click {
  readonly code: string | undefined
  /** The `cf_ref` cookie the visitor already has. */
  readonly cookie: string | undefined
  readonly clientIp: string | undefined
  readonly userAgent: string | undefined
}

export interface ClickOutcome {
  /** The code to set as `cf_ref`; none for an invalid code, or when the visitor already carries a valid one. */
  readonly setCookie: Option.Option<string>
  readonly recorded: boolean
}

export interface ReferredUser {
  readonly displayName: string | null
  readonly status: "pending" | "confirmed"
  readonly at: Date
}

export interface ReferralDashboard {
  readonly referralCode: string
  readonly referralLink: string
  readonly clicks: number
  readonly signups: number
  readonly conversionRate: number
  readonly pointsEarned: number
  readonly referredUsers: ReadonlyArray<ReferredUser>
}

const Referrer = Schema.Struct({ cfId: Schema.String, referralCode: Schema.String })

export class Referrals extends Effect.Service<Referrals>()("Referrals", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const points = yield* Points
    const config = yield* AppConfig
    const linkBase = Option.getOrElse(Option.orElse(config.siteUrl, () => config.publicBaseUrl), () => "").replace(/\/+$/, "")

    const referrerOf = (code: string) =>
      SqlSchema.findOne({
        Request: Schema.String,
        Result: Referrer,
        execute: (c) => sql`SELECT cf_id, referral_code FROM identities WHERE referral_code = ${c}`
      })(code).pipe(orDieAtRepository)

    /** Records the click unless the code had its 100 this hour; serialized per code so the limit is exact. */
    const record = (code: string, clientIp: string | undefined, userAgent: string | undefined) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`referral-clicks:${code}`}))`
            const now = yield* Clock.currentTimeMillis
            const { n } = yield* SqlSchema.single({
              Request: Schema.String,
              Result: Schema.Struct({ n: Schema.Int }),
              execute: (c) => sql`
                SELECT count(*)::int AS n FROM referral_clicks
                WHERE referral_code = ${c} AND clicked_at > ${new Date(now - REFERRAL_CLICKS_PER_CODE.windowMs)}`
            })(code)
            if (n >= REFERRAL_CLICKS_PER_CODE.limit) return false
            yield* sql`INSERT INTO referral_clicks ${sql.insert({
              clickedAt: new Date(now),
              referralCode: code,
              ipHash: clientIp === undefined ? null : hashIp(clientIp),
              userAgent: userAgent === undefined ? null : userAgent.slice(0, MAX_USER_AGENT_LENGTH)
            })}`
            return true
          })
        )
        .pipe(orDieAtRepository)

    /** A visit of a referral link. Anything invalid is ignored silently: the visitor is redirected all the same. */
    const click = Effect.fn("Referrals.click")(function* (visit: Click): Effect.fn.Return<ClickOutcome> {
      const ignored: ClickOutcome = { setCookie: Option.none(), recorded: false }
      if (!isReferralCode(visit.code)) return ignored
      const code = visit.code
      if (Option.isNone(yield* referrerOf(code))) return ignored
      const recorded = yield* record(code, visit.clientIp, visit.userAgent)
      // First touch: a cookie naming a real code stays as it is (its 30-day window is not restarted either).
      const holdsValid =
        isReferralCode(visit.cookie) && (visit.cookie === code || Option.isSome(yield* referrerOf(visit.cookie)))
      return { setCookie: holdsValid ? Option.none() : Option.some(code), recorded }
    })

    /**
     * Attributes a CF ID being created (in its transaction) to the first of `candidates` that names another identity,
     * confirming the referral and awarding both sides. Unknown codes and the identity's own code are passed over.
     */
    const attribute = Effect.fn("Referrals.attribute")(function* (signup: { readonly referredCfId: string; readonly candidates: ReadonlyArray<string>; readonly clientIp: string | undefined }) {
      for (const code of signup.candidates) {
        const referrer = yield* referrerOf(code)
        if (Option.isNone(referrer) || referrer.value.cfId === signup.referredCfId) continue
        const inserted = yield* sql`
          INSERT INTO referrals ${sql.insert({
            referredCfId: signup.referredCfId,
            referrerCfId: referrer.value.cfId,
            referralCode: code,
            ipHash: signup.clientIp === undefined ? null : hashIp(signup.clientIp)
          })}
          ON CONFLICT DO NOTHING RETURNING referrer_cf_id`.pipe(orDieAtRepository)
        if (inserted.length > 0) {
          yield* points.awardReferral({ referrerCfId: referrer.value.cfId, referredCfId: signup.referredCfId, referralCode: code })
        }
        return Option.some(referrer.value.cfId)
      }
      return Option.none<string>()
    })

    const dashboard = Effect.fn("Referrals.dashboard")(function* (cfId: string): Effect.fn.Return<ReferralDashboard> {
      const now = yield* Clock.currentTimeMillis
      const figures = yield* SqlSchema.single({
        Request: Schema.String,
        Result: Schema.Struct({
          referralCode: Schema.String,
          clicks: Schema.Int,
          signups: Schema.Int,
          pointsEarned: Schema.NumberFromString
        }),
        execute: (id) => sql`
          SELECT i.referral_code,
            (SELECT count(*)::int FROM referral_clicks c WHERE c.referral_code = i.referral_code) AS clicks,
            (SELECT count(*)::int FROM referrals r WHERE r.referrer_cf_id = i.cf_id) AS signups,
            (SELECT COALESCE(sum(amount), 0)::text FROM points_ledger p WHERE p.cf_id = i.cf_id AND p.type = 'referral') AS points_earned
          FROM identities i WHERE i.cf_id = ${id}`
      })(cfId).pipe(orDieAtRepository)
      const listed = yield* SqlSchema.findAll({
        Request: Schema.String,
        Result: Schema.Struct({
          displayName: Schema.NullOr(Schema.String),
          status: Schema.Literal("pending", "confirmed"),
          at: Schema.DateFromSelf
        }),
        // Confirmed: the CF IDs created through the code. Pending: visitors (by hashed address) who clicked within
        // the window and from whose address no referred CF ID was created.
        execute: (id) => sql`
          (SELECT i.display_name, 'confirmed' AS status, r.created_at AS at
           FROM referrals r JOIN identities i ON i.cf_id = r.referred_cf_id
           WHERE r.referrer_cf_id = ${id})
          UNION ALL
          (SELECT NULL, 'pending', min(c.clicked_at)
           FROM referral_clicks c
           WHERE c.referral_code = ${figures.referralCode} AND c.ip_hash IS NOT NULL
             AND c.clicked_at > ${new Date(now - REFERRAL_WINDOW_SECONDS * 1000)}
             AND NOT EXISTS (SELECT 1 FROM referrals r WHERE r.referrer_cf_id = ${id} AND r.ip_hash = c.ip_hash)
           GROUP BY c.ip_hash)
          ORDER BY at DESC LIMIT ${MAX_LISTED_REFERRALS}`
      })(cfId).pipe(orDieAtRepository)
      return {
        referralCode: figures.referralCode,
        referralLink: `${linkBase}/r?c=${figures.referralCode}`,
        clicks: figures.clicks,
        signups: figures.signups,
        conversionRate: conversionRate(figures.signups, figures.clicks),
        pointsEarned: figures.pointsEarned,
        referredUsers: listed
      }
    })

    return { click, attribute, dashboard } as const
  })
}) {}
