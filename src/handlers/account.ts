/**
 * The signed-in account's credit: decode, call the Ledger, encode (wei as digit strings).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { Hex } from "viem"
import { AccountAdmin } from "../../services/accounts/AccountAdmin.ts"
import { Funding } from "../../services/accounts/Funding.ts"
import { type AccountSummary, Ledger, type LedgerEntry } from "../../services/accounts/Ledger.ts"
import { type AccountSpend, Usage } from "../../services/accounts/Usage.ts"
import { type Withdrawal, Withdrawals } from "../../services/accounts/Withdrawals.ts"
import type { AccountSpendView, AccountView, LedgerEntryView, WithdrawalView } from "../api/AccountApi.ts"
import { CurrentIdentity } from "../api/SessionAuth.ts"
import { ServerApi } from "../api/ServerApi.ts"

const DEFAULT_PAGE = 20

const digits = (wei: bigint | null) => (wei === null ? null : wei.toString())

export const accountView = (account: AccountSummary): typeof AccountView.Type => ({
  balanceWei: account.balanceWei.toString(),
  reservedWei: account.reservedWei.toString(),
  spentWei: account.spentWei.toString(),
  limits: { dailyWei: digits(account.limits.dailyWei), weeklyWei: digits(account.limits.weeklyWei), monthlyWei: digits(account.limits.monthlyWei) }
})

const spendView = (spend: AccountSpend): typeof AccountSpendView.Type => ({
  asOf: spend.asOf.toISOString(),
  todayWei: spend.todayWei.toString(),
  last7DaysWei: spend.last7DaysWei.toString(),
  last30DaysWei: spend.last30DaysWei.toString(),
  caps: spend.caps.map((cap) => ({
    window: cap.window,
    limitWei: digits(cap.limitWei),
    usedWei: cap.usedWei.toString(),
    leftWei: digits(cap.leftWei),
    resetsAt: cap.resetsAt.toISOString()
  }))
})

const entryView = (entry: LedgerEntry): typeof LedgerEntryView.Type => ({
  id: entry.id,
  kind: entry.kind,
  amountWei: entry.amountWei.toString(),
  balanceAfterWei: entry.balanceAfterWei.toString(),
  reference: entry.reference,
  apiKeyId: entry.apiKeyId,
  note: entry.note,
  createdAt: entry.createdAt.toISOString()
})

const withdrawalView = (w: Withdrawal): typeof WithdrawalView.Type => ({
  id: w.id,
  to: w.to,
  amountWei: w.amountWei.toString(),
  status: w.status,
  txHash: w.txHash,
  failureReason: w.failureReason,
  createdAt: w.createdAt.toISOString(),
  updatedAt: w.updatedAt.toISOString()
})

export const AccountHandlers = HttpApiBuilder.group(ServerApi, "account", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    const funding = yield* Funding
    const withdrawals = yield* Withdrawals
    const usage = yield* Usage
    const admin = yield* AccountAdmin
    // The active context's account (an organization's, else the personal one) ...
    const accountId = Effect.map(CurrentIdentity, (identity) => identity.accountId)
    // ... except for funding and withdrawals, which always act on the personal account (SPEC "Organization rules").
    const personalAccountId = Effect.map(CurrentIdentity, (identity) => identity.personalAccountId)
    return handlers
      .handle("getAccount", () => Effect.map(Effect.flatMap(accountId, ledger.account), accountView))
      .handle("getSpend", () => Effect.map(Effect.flatMap(accountId, usage.accountSpend), spendView))
      .handle("putLimits", ({ payload }) =>
        Effect.map(
          admin.setLimits({ dailyWei: payload.dailyWei ?? null, weeklyWei: payload.weeklyWei ?? null, monthlyWei: payload.monthlyWei ?? null }),
          accountView
        )
      )
      .handle("getFunding", () => Effect.flatMap(personalAccountId, funding.info))
      .handle("postWithdrawal", ({ payload }) =>
        Effect.flatMap(personalAccountId, (id) =>
          Effect.map(
            withdrawals.withdraw({ accountId: id, to: payload.to.toLowerCase() as Hex, amountWei: payload.amountWei }),
            (sent) => ({ ...withdrawalView(sent.withdrawal), balanceWei: sent.balanceWei.toString() })
          )
        )
      )
      .handle("getWithdrawals", ({ urlParams }) =>
        Effect.flatMap(personalAccountId, (id) =>
          Effect.map(withdrawals.list(id, { limit: urlParams.limit ?? DEFAULT_PAGE, cursor: urlParams.cursor }), (page) => ({
            object: "list" as const,
            data: page.withdrawals.map(withdrawalView),
            nextCursor: page.nextCursor
          }))
        )
      )
      .handle("getLedger", ({ urlParams }) =>
        Effect.flatMap(accountId, (id) =>
          Effect.map(ledger.entries(id, { limit: urlParams.limit ?? DEFAULT_PAGE, cursor: urlParams.cursor }), (page) => ({
            object: "list" as const,
            data: page.entries.map(entryView),
            nextCursor: page.nextCursor
          }))
        )
      )
  })
)
