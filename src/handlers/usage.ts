/**
 * `GET /v1/usage`: the calling key (ApiKeyAuth), its account's figures, encoded.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Usage } from "../../services/accounts/Usage.ts"
import { CurrentCredential } from "../../services/accounts/CurrentIdentity.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { ApiKeyAuthLive } from "../http/apiKeyAuth.ts"

const wei = (value: bigint | null) => (value === null ? null : value.toString())

export const UsageHandlers = HttpApiBuilder.group(ServerApi, "usage", (handlers) =>
  Effect.gen(function* () {
    const usage = yield* Usage
    return handlers.handle("usage", () =>
      Effect.gen(function* () {
        const report = yield* usage.of(yield* CurrentCredential)
        return {
          balanceWei: report.balanceWei.toString(),
          spentWei: report.spentWei.toString(),
          key: {
            id: report.key.id,
            dailyLimitWei: wei(report.key.dailyLimitWei),
            monthlyLimitWei: wei(report.key.monthlyLimitWei),
            dailyUsedWei: report.key.dailyUsedWei.toString(),
            monthlyUsedWei: report.key.monthlyUsedWei.toString()
          },
          remainingWei: report.remainingWei.toString(),
          cachedInputTokens: report.cachedInputTokens,
          cacheWrite5mTokens: report.cacheWrite5mTokens,
          cacheWrite1hTokens: report.cacheWrite1hTokens
        }
      })
    )
  })
).pipe(Layer.provide(ApiKeyAuthLive))
