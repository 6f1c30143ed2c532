/** The account at a glance: balance, reserved, spent, and the caps with what they leave. */
import { Status, useRead } from "../shared/useRead.tsx"
import { call } from "./api.ts"
import { credits } from "./format.ts"
import { Funding } from "./Funding.tsx"
import { identity } from "./session.ts"

export const OverviewPage = () => {
  const account = useRead(() => call((c) => c.account.getAccount()))
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
          <div><dt>Daily cap</dt><dd>{credits(account.value.limits.dailyWei)}</dd></div>
          <div><dt>Weekly cap</dt><dd>{credits(account.value.limits.weeklyWei)}</dd></div>
          <div><dt>Monthly cap</dt><dd>{credits(account.value.limits.monthlyWei)}</dd></div>
        </dl>
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
