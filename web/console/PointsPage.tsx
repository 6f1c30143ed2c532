/**
 * Points and referrals (SPEC "Points earning", "Tiers", "Referral rules"): the total, the tier and how far the next
 * one is, the streaks, the ledger as the API pages it, the referral link to share with its dashboard, and the public
 * leaderboard. Points are not money: plain integers. Times are UTC and say so.
 */
import { useSignal } from "@preact/signals"
import { TIERS } from "../../domain/accounts/points.ts"
import { utc } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { baseUrl, call } from "./api.ts"
import "./apps-points.css"
import { ReferralSection } from "./ReferralSection.tsx"

const HISTORY_PAGE = 20

const TYPE_TEXT = {
  signup: "Sign-up bonus",
  referral: "Referral (you referred someone)",
  referral_welcome: "Welcome (you were referred)",
  daily_login: "Daily sign-in",
  streak_bonus: "7-day streak",
  oracle_interaction: "Viewed a model's prices"
} as const

/** The tier after the one `total` reached, and the points still missing; none at the top. */
const nextTier = (total: number) => {
  const next = TIERS.find((tier) => tier.minimum > total)
  return next === undefined ? undefined : { name: next.name, minimum: next.minimum, missing: next.minimum - total }
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`

export const PointsPage = () => {
  const points = useRead(() => call((c) => c.points.getPoints()))
  return (
    <section aria-labelledby="points">
      <h1 id="points">Points and referrals</h1>
      <p>
        Points reward using the service: 100 at sign-up, 10 for the first sign-in of each UTC day, 50 for every 7 days in a row, 5 per model
        whose prices you view (up to 12 a day), 250 for each person who signs up through your link (and 50 for them). They cannot be
        transferred and have no monetary value.
      </p>
      <Status of={points} what="your points" />
      {points.state === "ready" && (
        <dl class="figures">
          <div><dt>Total points</dt><dd class="big" data-testid="points-total">{points.value.total.toLocaleString("en")}</dd></div>
          <div><dt>Tier</dt><dd data-testid="points-tier">{points.value.tier}</dd></div>
          <div>
            <dt>Next tier</dt>
            <dd data-testid="points-next-tier">
              {(() => {
                const next = nextTier(points.value.total)
                return next === undefined ? "none: Titan is the highest" : `${next.name} in ${plural(next.missing, "point", "points")} (at ${next.minimum.toLocaleString("en")})`
              })()}
            </dd>
          </div>
          <div><dt>Current streak (UTC days)</dt><dd data-testid="streak-current">{points.value.currentStreak}</dd></div>
          <div><dt>Longest streak (UTC days)</dt><dd data-testid="streak-longest">{points.value.longestStreak}</dd></div>
        </dl>
      )}
      <History />
      <ReferralSection baseUrl={baseUrl} />
      <Leaderboard />
    </section>
  )
}

/** The ledger, newest first, one API page at a time: the cursors of the pages seen so far lead back to newer ones. */
const History = () => {
  const cursors = useSignal<ReadonlyArray<string | undefined>>([undefined])
  const cursor = cursors.value.at(-1)
  const page = useRead(
    () => call((c) => c.points.getHistory({ urlParams: cursor === undefined ? { limit: HISTORY_PAGE } : { limit: HISTORY_PAGE, cursor } })),
    [cursor]
  )
  return (
    <section aria-labelledby="history">
      <h2 id="history">History</h2>
      <Status of={page} what="your points history" />
      {page.state === "ready" &&
        (page.value.data.length === 0 && cursors.value.length === 1 ? (
          <p class="empty">No points yet: sign in tomorrow for your daily points, look up model prices on the <a href="./">index</a>, or share your referral link below.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table data-testid="history-table">
                <caption class="visually-hidden">Your points, newest first (page {cursors.value.length})</caption>
                <thead>
                  <tr>
                    <th scope="col">When (UTC)</th>
                    <th scope="col">For</th>
                    <th scope="col" class="num">Points</th>
                    <th scope="col">Source</th>
                  </tr>
                </thead>
                <tbody>
                  {page.value.data.map((entry) => (
                    <tr key={entry.id}>
                      <td>{utc(entry.createdAt)}</td>
                      <td>{TYPE_TEXT[entry.type]}</td>
                      <td class="num">+{entry.amount}</td>
                      <td class="hash">{entry.source}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav class="pager" aria-label="History pages">
              <button type="button" disabled={cursors.value.length === 1} onClick={() => (cursors.value = cursors.value.slice(0, -1))}>
                Newer
              </button>{" "}
              <span>Page {cursors.value.length}</span>{" "}
              <button
                type="button"
                disabled={page.value.nextCursor === null}
                onClick={() => page.state === "ready" && page.value.nextCursor !== null && (cursors.value = [...cursors.value, page.value.nextCursor])}
              >
                Older
              </button>
            </nav>
          </>
        ))}
    </section>
  )
}

const Leaderboard = () => {
  const board = useRead(() => call((c) => c.leaderboard.getLeaderboard()))
  return (
    <section aria-labelledby="leaderboard">
      <h2 id="leaderboard">Leaderboard</h2>
      <Status of={board} what="the leaderboard" />
      {board.state === "ready" && (
        <>
          <p class="muted" data-testid="leaderboard-updated">
            {board.value.updatedAt === null
              ? "The ranking has not been computed yet: it is refreshed from the points ledger periodically."
              : `Points as of ${utc(board.value.updatedAt)} (refreshed from the ledger periodically).`}
          </p>
          {board.value.data.length === 0 ? (
            <p class="empty">Nobody is ranked yet: earn points and you may be first.</p>
          ) : (
            <div class="table-scroll">
              <table data-testid="leaderboard-table">
                <caption class="visually-hidden">The top {board.value.data.length} by points</caption>
                <thead>
                  <tr>
                    <th scope="col" class="num">Rank</th>
                    <th scope="col">Name</th>
                    <th scope="col" class="num">Points</th>
                  </tr>
                </thead>
                <tbody>
                  {board.value.data.map((row, index) => (
                    <tr key={index}>
                      <td class="num">{index + 1}</td>
                      <td>{row.displayName}</td>
                      <td class="num">{row.points.toLocaleString("en")}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  )
}
