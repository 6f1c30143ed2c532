/** The account at a glance: balance, reserved, spent, recent spend, and the caps with what they leave. */
import { utc } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { call } from "./api.ts"
import { credits } from "./format.ts"
import { Funding } from "./Funding.tsx"
import { identity } from "./session.ts"

const CAP_NAMES = { day: "Daily", week: "Weekly (from Monday)", month: "Monthly" } as const

export const OverviewPage = () => {
  const account = useRead(() => call((c) => c.account.getAccount()))
  const spend = useRead(() => call((c) => c.account.getSpend()))
  const who = identity.value
  return (
    <section aria-labelledby="overview">
      <h1 id="overview">Overview</h1>
      {who !== null && who !== undefined && <p>Signed in as {who.display_name} ({who.cf_id}).</p>}
      <Status of={account} what="your account" />
      {account.state === "ready" && (
        <dl class="figures">
          <div><dt>Balance, credits</dt><dd class="big" data-testid="balance">{credits(account.value.balanceWei)}</dd></div>
          <div><dt>Reserved by requests in flight</dt><dd data-testid="reserved">{credits(account.value.reservedWei)}</dd></div>
          <div><dt>Spent</dt><dd data-testid="spent">{credits(account.value.spentWei)}</dd></div>
        </dl>
      )}
      <Status of={spend} what="your spending" />
      {spend.state === "ready" && (
        <>
          <h2>Spending</h2>
          <dl class="figures">
            <div><dt>Today (UTC)</dt><dd data-testid="spend-today">{credits(spend.value.todayWei)}</dd></div>
            <div><dt>Last 7 days</dt><dd data-testid="spend-7d">{credits(spend.value.last7DaysWei)}</dd></div>
            <div><dt>Last 30 days</dt><dd data-testid="spend-30d">{credits(spend.value.last30DaysWei)}</dd></div>
          </dl>
          <div class="table-scroll">
            <table data-testid="caps-table">
              <caption>The account's caps and what they leave (used includes requests in flight)</caption>
              <thead>
                <tr>
                  <th scope="col">Cap</th>
                  <th scope="col" class="num">Limit</th>
                  <th scope="col" class="num">Used</th>
                  <th scope="col" class="num">Left</th>
                  <th scope="col">Resets (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {spend.value.caps.map((cap) => (
                  <tr key={cap.window} data-window={cap.window}>
                    <th scope="row">{CAP_NAMES[cap.window]}</th>
                    <td class="num">{credits(cap.limitWei)}</td>
                    <td class="num">{credits(cap.usedWei)}</td>
                    <td class="num" data-testid={`cap-left-${cap.window}`}>{cap.leftWei === null ? "no limit" : credits(cap.leftWei)}</td>
                    <td>{utc(cap.resetsAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {account.state === "ready" && account.value.balanceWei === "0" && (
        <p class="empty">No credit yet: deposit on-chain (see the funding instructions of GET /v1/account/funding), or ask an operator for a grant.</p>
      )}
      <p>
        <a href="console/keys">Create an API key</a> to call the exchange with the OpenAI or Anthropic clients; <a href="console/limits">set spending
        limits</a> for the whole account.
      </p>
      <Funding />
    </section>
  )
}
