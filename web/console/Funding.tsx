/**
 * How to put credit on the account (GET /v1/account/funding: approve the token to the treasury, then deposit with
 * this account's reference) and the withdrawals with their states.
 */
import { utc } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { CopyButton } from "./CopyButton.tsx"
import { call } from "./api.ts"
import { credits } from "./format.ts"

export const Funding = () => {
  const funding = useRead(() => call((c) => c.account.getFunding()))
  const withdrawals = useRead(() => call((c) => c.account.getWithdrawals({ urlParams: {} })))
  return (
    <>
      <section aria-labelledby="fund">
        <h2 id="fund">Add credit</h2>
        <Status of={funding} what="the funding instructions" />
        {funding.state === "ready" && (
          <>
            <ol>
              <li>
                Approve the treasury <code class="hash">{funding.value.treasury}</code> to take the amount of the token{" "}
                <code class="hash">{funding.value.token}</code> ({funding.value.decimals} decimals) on chain {funding.value.chainId}.
              </li>
              <li>
                Call <code>deposit(accountRef, amount)</code> on the treasury with this account's reference:{" "}
                <code class="hash" data-testid="account-ref">{funding.value.accountRef}</code>{" "}
                <CopyButton text={funding.value.accountRef} class="link" />
              </li>
              <li>The credit appears here after {funding.value.confirmations} confirmation{funding.value.confirmations === 1 ? "" : "s"}.</li>
            </ol>
          </>
        )}
      </section>
      <section aria-labelledby="withdrawals">
        <h2 id="withdrawals">Withdrawals</h2>
        <Status of={withdrawals} what="your withdrawals" />
        {withdrawals.state === "ready" &&
          (withdrawals.value.data.length === 0 ? (
            <p class="empty">No withdrawal yet. A withdrawal sends credit back as tokens to an address (POST /v1/account/withdrawals).</p>
          ) : (
            <div class="table-scroll">
              <table data-testid="withdrawals-table">
                <caption class="visually-hidden">Your withdrawals, newest first</caption>
                <thead>
                  <tr><th scope="col">Requested (UTC)</th><th scope="col">To</th><th scope="col" class="num">Credits</th><th scope="col">State</th><th scope="col">Transaction</th></tr>
                </thead>
                <tbody>
                  {withdrawals.value.data.map((w) => (
                    <tr key={w.id}>
                      <td>{utc(w.createdAt)}</td>
                      <td class="hash">{w.to}</td>
                      <td class="num">{credits(w.amountWei)}</td>
                      <td>{w.status}{w.failureReason === null ? "" : `: ${w.failureReason}`}</td>
                      <td class="hash">{w.txHash ?? "not sent"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ))}
      </section>
    </>
  )
}
