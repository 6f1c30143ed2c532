/**
 * `GET /v1/usage` (SPEC "Usage response"; field names per DESIGN section 11): for the calling API key.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { WeiDigits } from "../../domain/accounts/ledger.ts"
import { ApiKeyAuth } from "./ApiKeyAuth.ts"

const CacheCounter = Schema.NullOr(Schema.Int).annotations({
  description: "Cumulative tokens of this kind over the account's settled requests; null until one recorded a non-zero count"
})

export const UsageResponse = Schema.Struct({
  balanceWei: WeiDigits.annotations({ description: "The account's balance" }),
  spentWei: WeiDigits.annotations({ description: "Every charge the account has paid" }),
  key: Schema.Struct({
    id: Schema.String,
    dailyLimitWei: Schema.NullOr(WeiDigits),
    monthlyLimitWei: Schema.NullOr(WeiDigits),
    dailyUsedWei: WeiDigits.annotations({ description: "Charged with this key today (UTC), plus its requests in flight" }),
    monthlyUsedWei: WeiDigits.annotations({ description: "Charged with this key this month (UTC), plus its requests in flight" })
  }),
  remainingWei: WeiDigits.annotations({
    description: "What can still be spent now: the available balance, narrowed by the tighter of the key's and the account's caps"
  }),
  cachedInputTokens: CacheCounter,
  cacheWrite5mTokens: CacheCounter,
  cacheWrite1hTokens: CacheCounter
}).annotations({ identifier: "Usage" })

export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("usage", "/v1/usage")
      .addSuccess(UsageResponse)
      .annotate(OpenApi.Summary, "Balance, spend, the key's caps and usage, and the budget left")
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Usage") {}
