/**
 * The referral link to share (with a copy button) and its dashboard (SPEC "Referral rules"): clicks, signups, the
 * conversion rate, the points earned as referrer, and the people referred with their status.
 */
import { useSignal } from "@preact/signals"
import { utc } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { CopyButton } from "./CopyButton.tsx"
import { call } from "./api.ts"

/**
 * The API gives `{site_url}/r?c=<code>`; a service with neither a site nor a public address configured gives the
 * path alone, which belongs under the service's root (a path prefix included), not the host's.
 */
export const absoluteLink = (link: string, baseUrl: string): string => (/^https?:\/\//.test(link) ? link : `${baseUrl}${link.startsWith("/") ? "" : "/"}${link}`)

/** A ratio of counts, not money: one decimal of a percent is all a reader needs. */
export const percent = (rate: number): string => `${(Math.round(rate * 1000) / 10).toLocaleString("en")} %`

export const ReferralSection = (props: { readonly baseUrl: string }) => {
  const version = useSignal(0)
  const dashboard = useRead(() => call((c) => c.referrals.getReferrals()), [version.value])
  const link = dashboard.state === "ready" ? absoluteLink(dashboard.value.referralLink, props.baseUrl) : undefined
  return (
    <section aria-labelledby="referrals">
      <h2 id="referrals">Referrals</h2>
      <Status of={dashboard} what="your referral dashboard" />
      {dashboard.state === "ready" && link !== undefined && (
        <>
          <p>
            Share this link. Whoever signs up within 30 days of first following it earns you 250 points, and 50 for them. The first link a
            visitor follows counts; your own sign-ins through it do not.
          </p>
          <div class="share">
            <label for="referral-link">Your referral link</label>
            <input id="referral-link" data-testid="referral-link" readOnly value={link} onFocus={(e) => (e.target as HTMLInputElement).select()} />
            <CopyButton text={link} label="Copy link" />
          </div>
          <dl class="figures">
            <div><dt>Clicks</dt><dd data-testid="referral-clicks">{dashboard.value.clicks}</dd></div>
            <div><dt>Signups</dt><dd data-testid="referral-signups">{dashboard.value.signups}</dd></div>
            <div>
              <dt>Conversion (signups ÷ clicks)</dt>
              <dd data-testid="referral-conversion" data-value={String(dashboard.value.conversionRate)}>{percent(dashboard.value.conversionRate)}</dd>
            </div>
            <div><dt>Points earned</dt><dd data-testid="referral-points">{dashboard.value.pointsEarned}</dd></div>
          </dl>
          <h3>People you referred</h3>
          {dashboard.value.referredUsers.length === 0 ? (
            <p class="empty">Nobody yet: copy your link above and send it to someone who uses LLM APIs.</p>
          ) : (
            <div class="table-scroll">
              <table data-testid="referred-table">
                <caption class="visually-hidden">People who followed your link, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Who</th>
                    <th scope="col">Status</th>
                    <th scope="col">Since (UTC)</th>
                  </tr>
                </thead>
                <tbody>
                  {dashboard.value.referredUsers.map((user, index) => (
                    <tr key={index}>
                      <td>{user.displayName ?? "a visitor, not signed up yet"}</td>
                      <td data-testid="referred-status">{user.status === "confirmed" ? "signed up" : "clicked, pending"}</td>
                      <td>{utc(user.at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <button type="button" class="link" onClick={() => (version.value += 1)}>Refresh the figures</button>
        </>
      )}
    </section>
  )
}
