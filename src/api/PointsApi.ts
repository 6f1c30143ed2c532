/**
 * Points and referrals (SPEC "Account endpoints", DESIGN section 11 paths): the signed-in identity's points and
 * history and its referral dashboard (a session or a signed request: SessionAuth), the public leaderboard, and the
 * public referral links that set the `cf_ref` cookie and lead to the site root.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { LEADERBOARD_SIZE, ORACLE_INTERACTIONS_PER_DAY, POINT_TYPES, TIER_NAMES } from "../../domain/accounts/points.ts"
import { MAX_LISTED_REFERRALS, REFERRAL_COOKIE, REFERRAL_REDIRECT, REFERRAL_WINDOW_SECONDS } from "../../domain/accounts/referrals.ts"
import { ValidationFailed } from "../../domain/errors.ts"
import { errorWire } from "../http/errorEnvelope.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { PageQuery, reportAllIssues } from "./shared.ts"

const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant", jsonSchema: { type: "string", format: "date-time" } })
const Count = Schema.Int.pipe(Schema.nonNegative())

export const PointsView = Schema.Struct({
  total: Count.annotations({ description: "The sum of the points ledger" }),
  tier: Schema.Literal(...TIER_NAMES).annotations({
    description: "Explorer (0), Starter (500), Builder (2000), Architect (5000), Titan (15000): the highest minimum reached"
  }),
  currentStreak: Count.annotations({
    description: "Consecutive UTC days with a sign-in, ending today (or yesterday while today's is still to come); a missed day resets it"
  }),
  longestStreak: Count
}).annotations({ identifier: "Points", examples: [{ total: 160, tier: "Explorer", currentStreak: 1, longestStreak: 1 }] })

export const PointsEntryView = Schema.Struct({
  id: Schema.String.annotations({ description: "UUID" }),
  type: Schema.Literal(...POINT_TYPES),
  amount: Schema.Int.pipe(Schema.positive()),
  source: Schema.String.annotations({
    description: "What earned it, e.g. `daily_login:2026-01-15`, `referral:<cf_id>`, `oracle_interaction:<day>:<model key>`"
  }),
  createdAt: Timestamp
}).annotations({ identifier: "PointsEntry" })

const PointsPage = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(PointsEntryView),
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next (older) page; null on the last" })
}).annotations({ identifier: "PointsPage" })


export const LeaderboardView = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Struct({ displayName: Schema.String, points: Count })).annotations({
    description: `At most ${LEADERBOARD_SIZE}, highest first (ties: the older CF ID first); identities with points only`
  }),
  updatedAt: Schema.NullOr(Timestamp).annotations({
    description: "When the balances ranked here were last reconciled with the points ledger; null before the first time"
  })
}).annotations({ identifier: "Leaderboard" })

export const ReferralsView = Schema.Struct({
  referralCode: Schema.String,
  referralLink: Schema.String.annotations({ description: "The link to share: `{site_url}/r?c=<referral_code>`" }),
  clicks: Count.annotations({ description: "Recorded clicks on the link (at most 100 per hour are recorded)" }),
  signups: Count.annotations({ description: "CF IDs created through the code (confirmed referrals)" }),
  conversionRate: Schema.Number.annotations({ description: "signups / clicks; 0 when there are no clicks" }),
  pointsEarned: Count.annotations({ description: "Referral points earned as the referrer" }),
  referredUsers: Schema.Array(
    Schema.Struct({
      displayName: Schema.NullOr(Schema.String).annotations({ description: "Null for a visitor who has not signed up" }),
      status: Schema.Literal("pending", "confirmed").annotations({
        description: "pending: clicked within the 30-day window (one per hashed address), no CF ID yet; confirmed: CF ID created"
      }),
      at: Timestamp.annotations({ description: "confirmed: when the CF ID was created; pending: the first click in the window" })
    })
  ).annotations({ description: `Newest first, at most ${MAX_LISTED_REFERRALS}` })
}).annotations({ identifier: "ReferralDashboard" })

const Redirected = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain" })).annotations({
  description: `A one-line notice; Location is ${REFERRAL_REDIRECT}`
})

/** The generator does not document response headers: add the redirect's Location and Set-Cookie to the 302. */
const documentRedirect = (operation: Record<string, any>) => {
  const found = operation.responses?.["302"]
  if (found !== undefined) {
    found.headers = {
      ...found.headers,
      Location: { description: `The site root, ${REFERRAL_REDIRECT}`, schema: { type: "string" } },
      "Set-Cookie": {
        description:
          `\`${REFERRAL_COOKIE}=<referral_code>; Max-Age=${REFERRAL_WINDOW_SECONDS}; Path=/; SameSite=Lax; Secure\`, only when the ` +
          `code is valid and the visitor has no valid \`${REFERRAL_COOKIE}\` yet (first touch wins)`,
        schema: { type: "string" }
      }
    }
  }
  return operation
}

const REFERRAL_LINK_DESCRIPTION =
  "Records the click (at most 100 per code per hour) and redirects to the site root. An unknown or malformed code is " +
  "ignored silently: the visitor is redirected without a cookie."

const CodeQuery = reportAllIssues(
  Schema.Struct({
    c: Schema.optional(
      Schema.Union(Schema.String, Schema.Array(Schema.String)).annotations({
        description: "The referral code (`cf_ref_` + 8 characters)",
        jsonSchema: { type: "string" }
      })
    )
  })
)

export class PointsGroup extends HttpApiGroup.make("points")
  .add(
    HttpApiEndpoint.get("getPoints", "/v1/points")
      .addSuccess(PointsView)
      .annotate(OpenApi.Summary, "The signed-in identity's total, tier and streaks")
  )
  .add(
    HttpApiEndpoint.get("getHistory", "/v1/points/history")
      .setUrlParams(PageQuery)
      .addSuccess(PointsPage)
      .addError(errorWire(ValidationFailed))
      .annotate(OpenApi.Summary, "The signed-in identity's points ledger, newest first")
  )
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Points")
  .annotate(
    OpenApi.Description,
    `Signup 100, referral 250 (referrer) and 50 (referred), daily login 10 (first sign-in of a UTC day), 7-day streak 50, ` +
      `oracle interaction 5 per model viewed per day (at most ${ORACLE_INTERACTIONS_PER_DAY} a day). Non-transferable, no monetary value.`
  ) {}

export class LeaderboardGroup extends HttpApiGroup.make("leaderboard")
  .add(
    HttpApiEndpoint.get("getLeaderboard", "/v1/points/leaderboard")
      .addSuccess(LeaderboardView)
      .annotate(OpenApi.Summary, `The top ${LEADERBOARD_SIZE} by points: display name and points only`)
  )
  .annotate(OpenApi.Title, "Leaderboard") {}

export class ReferralsGroup extends HttpApiGroup.make("referrals")
  .add(
    HttpApiEndpoint.get("getReferrals", "/v1/referrals")
      .addSuccess(ReferralsView)
      .annotate(OpenApi.Summary, "The referral dashboard: clicks, signups, conversion rate, points earned, referred users")
  )
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Referrals") {}

export class ReferralLinksGroup extends HttpApiGroup.make("referralLinks")
  .add(
    HttpApiEndpoint.get("followQuery", "/r")
      .setUrlParams(CodeQuery)
      .addSuccess(Redirected, { status: 302 })
      .annotate(OpenApi.Summary, "Referral link `/r?c=<referral_code>`: sets cookie cf_ref and redirects to the site root")
      .annotate(OpenApi.Description, REFERRAL_LINK_DESCRIPTION)
      .annotate(OpenApi.Transform, documentRedirect)
  )
  .add(
    HttpApiEndpoint.get("followPath")`/r/${HttpApiSchema.param("code", Schema.String)}`
      .addSuccess(Redirected, { status: 302 })
      .annotate(OpenApi.Summary, "Referral link `/r/<referral_code>`: sets cookie cf_ref and redirects to the site root")
      .annotate(OpenApi.Description, REFERRAL_LINK_DESCRIPTION)
      .annotate(OpenApi.Transform, documentRedirect)
  )
  // A code that is not one of ours is refused before any redirect.
  .addError(errorWire(ValidationFailed))
  .annotate(OpenApi.Title, "Referral links") {}
