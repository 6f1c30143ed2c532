/**
 * A request's input estimate per candidate (SPEC "Billing" 4): the vendor's own counter where it publishes one
 * (Anthropic, Gemini; asked once per model, at most COUNT_TIMEOUT), else the local o200k count scaled by the vendor's
 * ratio (domain/exchange/estimate.ts), computed once per vendor. A counter that fails or is slow falls back to the
 * local count: the estimate only sizes the hold, and the bill is always the vendor's reported usage.
 *
 * The local count runs the tokenizer, which costs about 0.1 ms per 2,000 characters; the input's byte bound costs
 * nothing. So the count is taken only where the bound could change a decision (DESIGN.md "Hot path budget"): a limit
 * the bound is within is met by the count too (`upTo`), and the planner holds the bound where the hold's decision
 * cannot change (RequestPlanner.ts).
 */
import { Duration, Effect } from "effect"
import type { ChatRequest } from "../../domain/exchange/canonical.ts"
import { boundInputTokensO200k, estimateInputTokens, scaleByRatio } from "../../domain/exchange/estimate.ts"
import type { UpstreamKey } from "../../domain/exchange/providers.ts"
import type { RoutableModel } from "../../domain/exchange/routing.ts"
import { adapterFor } from "./providers/index.ts"

const COUNT_TIMEOUT = Duration.seconds(2)

export interface InputEstimator {
  /** The estimate for one candidate: its vendor's count when one was taken, else the local one. */
  readonly of: (model: RoutableModel) => number
  /** Never below `of`, without the tokenizer: the vendor's count when one was taken, else the byte bound's. */
  readonly bound: (model: RoutableModel) => number
  /** For a comparison with `limit`: the bound when it is within it (the count is too), else the estimate. */
  readonly upTo: (model: RoutableModel, limit: number) => number
  /** The input's byte bound before any vendor's ratio. */
  readonly boundO200k: number
  /**
   * Asks the vendors' counters for these candidates (in parallel), where they publish one, with the key `keyOf`
   * gives (default: the provider's first; none given: the local count stands).
   */
  readonly countWithVendors: (models: ReadonlyArray<RoutableModel>, keyOf?: KeyChooser) => Effect.Effect<void>
}

/** Which of a provider's keys a count is made with; undefined when none may be used now. */
export type KeyChooser = (model: RoutableModel) => Effect.Effect<UpstreamKey | undefined>

const firstKey: KeyChooser = (model) => Effect.succeed(model.provider.keys[0])

export const makeInputEstimator = (chat: ChatRequest, tokenRatio: (vendor: string) => number): InputEstimator => {
  const local = new Map<string, number>()
  const counted = new Map<string, number>()
  // The ratios are kept per catalog provider key, which names the model's provider configuration.
  const localOf = (vendor: string) => {
    let n = local.get(vendor)
    if (n === undefined) local.set(vendor, (n = estimateInputTokens(chat, tokenRatio(vendor))))
    return n
  }
  const boundO200k = boundInputTokensO200k(chat)
  const of = (model: RoutableModel) => counted.get(model.key) ?? localOf(model.provider.name)
  const bound = (model: RoutableModel) => counted.get(model.key) ?? scaleByRatio(boundO200k, tokenRatio(model.provider.name))
  return {
    of,
    bound,
    upTo: (model, limit) => {
      const upper = bound(model)
      return upper <= limit ? upper : of(model)
    },
    boundO200k,
    countWithVendors: (models, keyOf = firstKey) =>
      Effect.forEach(
        models.flatMap((model) => {
          // Only formats whose vendor publishes a counter have one (not the OpenAI-shaped ones).
          const countTokens = adapterFor(model.provider.format).countTokens
          return countTokens !== undefined && !counted.has(model.key) && model.provider.keys.length > 0 ? [{ model, countTokens }] : []
        }),
        ({ countTokens, model }) =>
          Effect.flatMap(keyOf(model), (key) =>
            key === undefined
              ? Effect.void
              : countTokens(chat, {
                provider: model.provider,
                key,
                upstreamModel: model.card.sdkId,
                traits: model.traits,
                firstByteTimeoutMs: Duration.toMillis(COUNT_TIMEOUT)
              }).pipe(
                Effect.timeout(COUNT_TIMEOUT),
                Effect.tap((n) => Effect.sync(() => counted.set(model.key, n))),
                Effect.catchAll((failure) => Effect.logDebug("a vendor's token counter failed; using the local estimate", failure))
              )),
        { concurrency: "unbounded", discard: true }
      )
  }
}
