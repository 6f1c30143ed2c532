/**
 * Points, the leaderboard, the referral dashboard and referral links: decode, call Points or Referrals, encode.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Layer, Option } from "effect"
import { REFERRAL_COOKIE, REFERRAL_REDIRECT, REFERRAL_WINDOW_SECONDS } from "../../domain/accounts/referrals.ts"
import { Points, type PointsEntry } from "../../services/accounts/Points.ts"
import { type ReferralDashboard, Referrals } from "../../services/accounts/Referrals.ts"
import type { PointsEntryView, ReferralsView } from "../api/PointsApi.ts"
import { CurrentIdentity } from "../api/SessionAuth.ts"
import { ServerApi } from "../api/ServerApi.ts"

const DEFAULT_PAGE = 20

const entryView = (entry: PointsEntry): typeof PointsEntryView.Type => ({
  id: entry.id,
  type: entry.type,
  amount: entry.amount,
  source: entry.source,
  createdAt: entry.createdAt.toISOString()
})

const dashboardView = (dashboard: ReferralDashboard): typeof ReferralsView.Type => ({
  ...dashboard,
  referredUsers: dashboard.referredUsers.map((user) => ({ ...user, at: user.at.toISOString() }))
})

const cfId = Effect.map(CurrentIdentity, (identity) => identity.cfId)

const PointsGroupLive = HttpApiBuilder.group(ServerApi, "points", (handlers) =>
  Effect.gen(function* () {
    const points = yield* Points
    return handlers
      .handle("getPoints", () => Effect.flatMap(cfId, points.summary))
      .handle("getHistory", ({ urlParams }) =>
        Effect.flatMap(cfId, (id) =>
          Effect.map(points.history(id, { limit: urlParams.limit ?? DEFAULT_PAGE, cursor: urlParams.cursor }), (page) => ({
            object: "list" as const,
            data: page.entries.map(entryView),
            nextCursor: page.nextCursor
          }))
        )
      )
  })
)

const LeaderboardGroupLive = HttpApiBuilder.group(ServerApi, "leaderboard", (handlers) =>
  Effect.gen(function* () {
    const points = yield* Points
    return handlers.handle("getLeaderboard", () =>
      Effect.map(points.leaderboard, (board) => ({
        object: "list" as const,
        data: board.entries,
        updatedAt: Option.getOrNull(Option.map(board.updatedAt, (at) => at.toISOString()))
      }))
    )
  })
)

const ReferralsGroupLive = HttpApiBuilder.group(ServerApi, "referrals", (handlers) =>
  Effect.gen(function* () {
    const referrals = yield* Referrals
    return handlers.handle("getReferrals", () => Effect.map(Effect.flatMap(cfId, referrals.dashboard), dashboardView))
  })
)

/** The redirect of a referral link, with `cf_ref` when the click set one; never cached, so every click reaches us. */
const redirect = (setCookie: Option.Option<string>) => {
  const response = HttpServerResponse.text(`Found: continue to ${REFERRAL_REDIRECT}\n`, {
    status: 302,
    headers: { location: REFERRAL_REDIRECT, "cache-control": "no-store" }
  })
  return Option.match(setCookie, {
    onNone: () => response,
    onSome: (code) =>
      HttpServerResponse.unsafeSetCookie(response, REFERRAL_COOKIE, code, {
        maxAge: Duration.seconds(REFERRAL_WINDOW_SECONDS),
        path: "/",
        sameSite: "lax",
        secure: true
      })
  })
}

const ReferralLinksGroupLive = HttpApiBuilder.group(ServerApi, "referralLinks", (handlers) =>
  Effect.gen(function* () {
    const referrals = yield* Referrals
    const follow = (code: string | undefined) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const outcome = yield* referrals.click({
          code,
          cookie: request.cookies[REFERRAL_COOKIE],
          clientIp: Option.getOrUndefined(request.remoteAddress),
          userAgent: request.headers["user-agent"]
        })
        return redirect(outcome.setCookie)
      })
    return handlers
      .handle("followQuery", ({ urlParams }) => follow(Array.isArray(urlParams.c) ? urlParams.c[0] : urlParams.c))
      .handle("followPath", ({ path }) => follow(path.code))
  })
)

export const PointsHandlers = Layer.mergeAll(PointsGroupLive, LeaderboardGroupLive, ReferralsGroupLive, ReferralLinksGroupLive)
