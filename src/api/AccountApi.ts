/**
 * The signed-in account's credit (DESIGN.md section 11, account paths): balance, reserved and spent credit with the
 * account's spending caps, the caps themselves, and the ledger. A session or a signed request (SessionAuth).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { LedgerEntryKind, PositiveWei, WeiDigits } from "../../domain/accounts/ledger.ts"
import { ContractError, InsufficientBalance, NotFound, OrgRoleRequired, ValidationFailed } from "../../domain/errors.ts"
import { errorWire, errorsWire } from "../http/errorEnvelope.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { PageQuery, reportAllIssues } from "./shared.ts"

const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant", jsonSchema: { type: "string", format: "date-time" } })

const Limits = Schema.Struct({
  dailyWei: Schema.NullOr(WeiDigits),
  weeklyWei: Schema.NullOr(WeiDigits),
  monthlyWei: Schema.NullOr(WeiDigits)
}).annotations({ identifier: "AccountLimits", description: "Account spending caps per UTC day, week (from Monday) and month; null: none" })

export const AccountView = Schema.Struct({
  balanceWei: WeiDigits.annotations({ description: "Credits on the account, in wei; negative after a charge above its hold" }),
  reservedWei: WeiDigits.annotations({ description: "Held for requests in flight" }),
  spentWei: WeiDigits.annotations({ description: "Every charge ever settled" }),
  limits: Limits
}).annotations({ identifier: "Account" })

export const LedgerEntryView = Schema.Struct({
  id: Schema.String,
  kind: LedgerEntryKind,
  amountWei: WeiDigits.annotations({ description: "Signed: credits positive, debits negative" }),
  balanceAfterWei: WeiDigits,
  reference: Schema.NullOr(Schema.String).annotations({
    description: "What the entry records: a charge's request id, a deposit's txHash:logIndex, a withdrawal's id"
  }),
  apiKeyId: Schema.NullOr(Schema.String).annotations({ description: "The key a charge was made with" }),
  note: Schema.NullOr(Schema.String),
  createdAt: Timestamp
}).annotations({ identifier: "LedgerEntry" })

const LedgerPage = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(LedgerEntryView),
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next (older) page; null on the last" })
}).annotations({ identifier: "LedgerPage" })

/** PUT replaces every cap: a cap absent or null is removed. */
export const LimitsChange = reportAllIssues(
  Schema.Struct({
    dailyWei: Schema.optional(Schema.NullOr(PositiveWei)),
    weeklyWei: Schema.optional(Schema.NullOr(PositiveWei)),
    monthlyWei: Schema.optional(Schema.NullOr(PositiveWei))
  })
)

const Address = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/)).annotations({
  description: "An EVM address, 0x and 40 hex digits",
  jsonSchema: { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" }
})
const Bytes32 = Schema.String.annotations({ description: "0x and 64 hex digits", jsonSchema: { type: "string", pattern: "^0x[0-9a-f]{64}$" } })

export const FundingView = Schema.Struct({
  chainId: Schema.Number,
  token: Schema.String.annotations({ description: "The ERC-20 to approve to the treasury" }),
  treasury: Schema.String.annotations({ description: "Call `deposit(accountRef, amount)` here after `approve`" }),
  accountRef: Bytes32.annotations({ description: "This account's deposit reference" }),
  decimals: Schema.Number,
  confirmations: Schema.Number.annotations({ description: "Blocks (the deposit's own included) before a deposit is credited" })
}).annotations({ identifier: "AccountFunding" })

export const WithdrawalRequest = reportAllIssues(
  Schema.Struct({ to: Address, amountWei: PositiveWei })
)

const withdrawalFields = {
  id: Schema.String.annotations({ description: "The withdrawal id: the reference of its ledger entries" }),
  to: Schema.String,
  amountWei: WeiDigits,
  status: Schema.Literal("pending", "confirmed", "refunded").annotations({
    description: "pending: sent, not yet confirmed (paid or refunded later, never both); confirmed: paid; refunded: the chain refused it"
  }),
  txHash: Schema.NullOr(Bytes32).annotations({ description: "The relayer's transaction; null when refused before signing" }),
  failureReason: Schema.NullOr(Schema.String).annotations({ description: "Why it was refunded" }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}

export const WithdrawalView = Schema.Struct(withdrawalFields).annotations({ identifier: "Withdrawal" })

export const WithdrawalSent = Schema.Struct({
  ...withdrawalFields,
  balanceWei: WeiDigits.annotations({ description: "The balance after the debit" })
}).annotations({ identifier: "WithdrawalSent" })

const WithdrawalPage = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(WithdrawalView),
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next (older) page; null on the last" })
}).annotations({ identifier: "WithdrawalPage" })


const CapStandingView = Schema.Struct({
  window: Schema.Literal("day", "week", "month").annotations({ description: "The UTC day, the week from Monday (UTC), the calendar month (UTC)" }),
  limitWei: Schema.NullOr(WeiDigits).annotations({ description: "The cap; null: none" }),
  usedWei: WeiDigits.annotations({ description: "Charged in the window so far, plus what requests in flight hold (as a reservation counts it)" }),
  leftWei: Schema.NullOr(WeiDigits).annotations({ description: "What the cap still allows (never below 0); null: no cap" }),
  resetsAt: Schema.String.annotations({ description: "When the window ends (UTC)", jsonSchema: { type: "string", format: "date-time" } })
})

export const AccountSpendView = Schema.Struct({
  asOf: Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } }),
  todayWei: WeiDigits.annotations({ description: "Charged since 00:00 UTC today" }),
  last7DaysWei: WeiDigits.annotations({ description: "Charged over the last 7 UTC days, today included" }),
  last30DaysWei: WeiDigits.annotations({ description: "Charged over the last 30 UTC days, today included" }),
  caps: Schema.Array(CapStandingView)
}).annotations({ identifier: "AccountSpend" })

export class AccountGroup extends HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("getAccount", "/v1/account")
      .addSuccess(AccountView)
      .addError(errorWire(NotFound))
      .annotate(OpenApi.Summary, "Balance, reserved and spent credit, and the account's spending caps")
  )
  .add(
    HttpApiEndpoint.get("getSpend", "/v1/account/spend")
      .addSuccess(AccountSpendView)
      .addError(errorWire(NotFound))
      .annotate(OpenApi.Summary, "Spend today and over the last 7 and 30 UTC days, and what each spending cap has used and leaves")
  )
  .add(
    HttpApiEndpoint.put("putLimits", "/v1/account/limits")
      .setPayload(LimitsChange)
      .addSuccess(AccountView)
      .addError(errorsWire(NotFound, OrgRoleRequired, ValidationFailed))
      .annotate(OpenApi.Summary, "Replace the account's daily, weekly and monthly spending caps (absent or null: no cap)")
  )
  .add(
    HttpApiEndpoint.get("getLedger", "/v1/account/ledger")
      .setUrlParams(PageQuery)
      .addSuccess(LedgerPage)
      .addError(errorWire(ValidationFailed))
      .annotate(OpenApi.Summary, "The account's ledger entries, newest first")
  )
  .add(
    HttpApiEndpoint.get("getFunding", "/v1/account/funding")
      .addSuccess(FundingView)
      .annotate(OpenApi.Summary, "Where and how to deposit: chain, token, treasury, this account's reference, confirmations")
  )
  .add(
    HttpApiEndpoint.post("postWithdrawal", "/v1/account/withdrawals")
      .setPayload(WithdrawalRequest)
      .addSuccess(WithdrawalSent, { status: 201 })
      .addError(errorsWire(ValidationFailed, InsufficientBalance, ContractError, NotFound))
      .annotate(OpenApi.Summary, "Debit the ledger and send the tokens from the treasury through the relayer")
  )
  .add(
    HttpApiEndpoint.get("getWithdrawals", "/v1/account/withdrawals")
      .setUrlParams(PageQuery)
      .addSuccess(WithdrawalPage)
      .addError(errorWire(ValidationFailed))
      .annotate(OpenApi.Summary, "The account's withdrawals and their state, newest first")
  )
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Account") {}
