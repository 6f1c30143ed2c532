/**
 * What the account tools answer (COMPAT.md "App grants"), as Schemas: each tool's result is built against its own
 * schema's type (services/accounts/AccountTools.ts) and encoded by the union of them at the edge (src/api/AppsApi.ts).
 * Wei amounts are digit strings; a cap not set is null.
 */
import { Schema } from "effect"

/** Roles as COMPAT.md's clients read them. */
export const UpperRole = Schema.Literal("OWNER", "ADMIN", "MEMBER")

/** The organization a grant acts in; null for a personal account. */
export const GrantContextView = Schema.NullOr(
  Schema.Struct({ orgId: Schema.String, orgName: Schema.String, role: UpperRole.annotations({ description: "The issuer's role there now" }) })
).annotations({ description: "The organization the grant acts in; null for a personal account" })

const Wei = Schema.String.annotations({ description: "wei, as a decimal digit string" })
const Caps = Schema.Struct({ dailyWei: Schema.NullOr(Wei), weeklyWei: Schema.NullOr(Wei), monthlyWei: Schema.NullOr(Wei) })

export const OverviewResult = Schema.Struct({
  context: GrantContextView,
  balanceWei: Wei,
  reservedWei: Wei,
  availableWei: Wei,
  spentWei: Wei,
  limits: Caps,
  spend: Schema.Struct({ todayWei: Wei, thisWeekWei: Wei, thisMonthWei: Wei })
}).annotations({ identifier: "AccountOverview" })

export const KeysResult = Schema.Struct({
  keys: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      prefix: Schema.String,
      label: Schema.NullOr(Schema.String),
      status: Schema.Literal("active", "frozen", "revoked"),
      dailyLimitWei: Schema.NullOr(Wei),
      monthlyLimitWei: Schema.NullOr(Wei),
      allowedModels: Schema.Array(Schema.String),
      createdAt: Schema.String
    })
  )
}).annotations({ identifier: "AccountKeys" })

export const SpendBreakdown = Schema.Literal("model", "key", "day")
export const SpendPeriod = Schema.Literal("day", "week", "month")

/** One group of the spend: its `model`, `key` or `day` (whichever the breakdown is), what it was charged, how often. */
export const SpendRow = Schema.Struct({
  model: Schema.optional(Schema.NullOr(Schema.String)),
  key: Schema.optional(Schema.NullOr(Schema.String)),
  day: Schema.optional(Schema.NullOr(Schema.String)),
  chargeWei: Wei,
  requests: Schema.Number
})

export const SpendResult = Schema.Struct({
  breakdown: SpendBreakdown,
  period: SpendPeriod,
  from: Schema.String.annotations({ description: "Start of the period (UTC), ISO-8601" }),
  totalWei: Wei,
  rows: Schema.Array(SpendRow)
}).annotations({ identifier: "AccountSpend" })

export const BudgetCapsResult = Schema.Struct({ limits: Caps }).annotations({ identifier: "AccountBudgetCaps" })

export const PoolsResult = Schema.Struct({
  pools: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      name: Schema.String,
      caps: Caps,
      used: Schema.Struct({ dailyWei: Wei, weeklyWei: Wei, monthlyWei: Wei }),
      members: Schema.Array(Schema.Struct({ cfId: Schema.String, displayName: Schema.String }))
    })
  )
}).annotations({ identifier: "AccountPools" })

export const ToolOutput = Schema.Union(OverviewResult, KeysResult, SpendResult, BudgetCapsResult, PoolsResult)
export type ToolOutput = typeof ToolOutput.Type
