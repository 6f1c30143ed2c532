/**
 * `POST /v1/messages/count_tokens` (DESIGN.md section 10, "Agents' dialects"): the input count a send of the same
 * request would reserve for, free and never billed. Each key has a rate budget of its own for it (RateLimits
 * `tokenCount`); a vendor's counter is asked with a key its pool admits now, so counting never takes a vendor key past
 * its RPM, and with none admitted the local estimate answers.
 */
import { Effect } from "effect"
import { RateLimited } from "../../domain/errors.ts"
import type { UpstreamKey } from "../../domain/exchange/providers.ts"
import type { RoutableModel } from "../../domain/exchange/routing.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { RateLimits } from "../platform/RateLimits.ts"
import { KeyPools } from "./KeyPools.ts"
import { type InferenceCall, RequestPlanner } from "./RequestPlanner.ts"
import { recordRateLimitRefusal } from "../platform/metrics.ts"

export type CountCall = Pick<InferenceCall, "chat" | "route" | "format" | "apiKey">

export class TokenCounter extends Effect.Service<TokenCounter>()("TokenCounter", {
  effect: Effect.gen(function* () {
    const planner = yield* RequestPlanner
    const rateLimits = yield* RateLimits
    const pools = yield* KeyPools

    const admit = (apiKey: Credential): Effect.Effect<void, RateLimited> =>
      !rateLimits.enabled
        ? Effect.void
        : Effect.flatMap(rateLimits.check(`key:${apiKey.id}`, "tokenCount"), (decision) =>
          decision.allowed
            ? Effect.void
            : Effect.failSync(() => {
              recordRateLimitRefusal("token_count")
              return new RateLimited({
                message: `Too many token counts with this key: retry after ${decision.retryAfterSeconds} second${decision.retryAfterSeconds === 1 ? "" : "s"}.`,
                details: { retryAfterSeconds: decision.retryAfterSeconds, limit: decision.limit, resetEpochSeconds: decision.resetEpochSeconds }
              })
            })
        )

    /** A key of the model's provider that its pool admits now, counted as one request of no tokens. */
    const keyOf = (model: RoutableModel): Effect.Effect<UpstreamKey | undefined> =>
      Effect.flatMap(pools.admit(model.provider.name, 0, new Set()), (admission) =>
        admission === undefined ? Effect.succeed(undefined) : Effect.as(pools.reconcile(admission, 0), admission.key))

    const count = Effect.fn("TokenCounter.count")(function* (call: CountCall) {
      yield* admit(call.apiKey)
      return yield* planner.countInput(call, keyOf)
    })

    return { count } as const
  }),
  dependencies: [RequestPlanner.Default]
}) {}
