/**
 * Before anything is reserved: which models may answer the request, in which order, what its input is estimated at,
 * and how much credit to hold (DESIGN.md section 10, "Routing" and SPEC "Billing" 4). Pure rules from
 * domain/exchange/routing.ts and estimate.ts, plus the state they need: the oracle's snapshot, the key pools'
 * capacity, the vendors' token counters, conversation pins and the `auto` engine.
 */
import { Clock, Effect, Either, Option, Redacted } from "effect"
import { createHmac } from "node:crypto"
import { holdWei } from "../../domain/exchange/billing.ts"
import type { ChatRequest, RouteRequest } from "../../domain/exchange/canonical.ts"
import { estimateOutputTokens } from "../../domain/exchange/estimate.ts"
import type { InboundFormatName } from "../../domain/exchange/traits.ts"
import { type CandidatePlan, checkKeyBudgets, checkWindows, planCandidates, type RoutableModel } from "../../domain/exchange/routing.ts"
import { ServiceUnavailable } from "../../domain/errors.ts"
import type { Usd18 } from "../../domain/money.ts"
import { type ConfirmedRevision, latestRevision } from "../../domain/oracle/inputs.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { OracleSnapshot } from "../oracle/OracleSnapshot.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { AutoRouter, type Pin } from "./AutoRouter.ts"
import { Headroom } from "./Headroom.ts"
import { type KeyChooser, makeInputEstimator } from "./inputEstimate.ts"
import { Providers } from "./Providers.ts"

export type { InboundFormatName } from "../../domain/exchange/traits.ts"

/** One inference request as the exchange takes it: decoded, authenticated, format-free. */
export interface InferenceCall {
  readonly format: InboundFormatName
  readonly chat: ChatRequest
  readonly route: RouteRequest
  readonly stream: boolean
  readonly endUser: string | undefined
  /** An API key or an app grant (services/accounts/Credentials.ts); a grant's id is recorded where a key's goes. */
  readonly apiKey: Credential
  /** Fields the inbound format accepted and dropped whatever serves the request (X-Dropped-Parameters). */
  readonly dropped?: ReadonlyArray<string> | undefined
}

export interface PlannedRequest {
  /** The request as it goes upstream (the end user fingerprinted). */
  readonly chat: ChatRequest
  readonly plan: CandidatePlan
  /**
   * What the hold and the key pools' admission take as the input, per candidate (by catalog key): the estimate, or its
   * byte bound (see below).
   */
  readonly heldInputTokens: ReadonlyMap<string, number>
  /**
   * The estimate itself (SPEC "Billing" 4) on a model, counted on first use: the settlement bills it only when the
   * vendor reports no input, so the tokenizer stays off the path of a large input held at its bound.
   */
  readonly countedInputTokensOf: (model: RoutableModel) => number
  readonly outputTokens: number
  /** What to hold: the costliest candidate's estimate (or bound), at least 1 wei. */
  readonly holdWei: bigint
  readonly pegUsd18: Usd18
  readonly revision: ConfirmedRevision | undefined
  readonly conversationId: string | undefined
  readonly pin: Pin | undefined
}

/**
 * Below this byte bound (before any ratio) the input is always counted: counting costs at most about 0.3 ms there,
 * and the hold stays exactly the estimate SPEC "Billing" 4 describes (and `/v1/inference/estimate` quotes).
 */
const ALWAYS_COUNT_BELOW = 4096

export class RequestPlanner extends Effect.Service<RequestPlanner>()("RequestPlanner", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const snapshots = yield* OracleSnapshot
    const providers = yield* Providers
    const autoRouter = yield* AutoRouter
    const headroom = yield* Headroom
    const fingerprintKey = Option.getOrUndefined(config.exchange.userFingerprintKey)

    const fingerprint = (endUser: string | undefined): string | undefined =>
      endUser === undefined || fingerprintKey === undefined
        ? undefined
        : createHmac("sha256", Redacted.value(fingerprintKey)).update(endUser).digest("hex").slice(0, 32)

    // The routable catalog is built with the oracle's snapshot, once per change of it.
    const routable = Effect.map(snapshots.current, (snap) => ({ snap, catalog: snap.routableCatalog }))

    const plan = Effect.fn("RequestPlanner.plan")(function* (call: InferenceCall) {
      const { snap, catalog } = yield* routable
      const chat: ChatRequest = { ...call.chat, userFingerprint: fingerprint(call.endUser) }
      const planned = yield* planCandidates(catalog, call.route, chat, call.apiKey.allowedModels, call.format)
      const input = makeInputEstimator(chat, providers.tokenRatio)
      // Named models are counted by their vendors before the window check; `auto` once narrowed (below).
      if (!planned.auto) yield* input.countWithVendors(planned.candidates)
      const outputTokens = estimateOutputTokens(chat)
      // The window and the key budgets are limits: a byte bound within one decides without the tokenizer.
      const windowed = yield* Either.flatMap(
        checkWindows(planned, (m) => input.upTo(m, m.card.maxInputTokens ?? Infinity)),
        (plan) =>
          checkKeyBudgets(plan, (m) => {
            const budget = providers.largestKeyBudget(m.provider.name)
            return input.upTo(m, budget - outputTokens) + outputTokens
          }, (m) => providers.largestKeyBudget(m.provider.name))
      )
      const peg = snap.inputs.pegUsd18
      const conversationId = planned.auto ? call.route.conversationId : undefined
      const now = yield* Clock.currentTimeMillis
      const pin = conversationId === undefined
        ? undefined
        : Option.getOrUndefined(yield* autoRouter.findPin(call.apiKey.accountId, conversationId, call.route.routingBias))
      // `auto` tries at most AUTO_ATTEMPTS models that have capacity now, chosen by a pin, the operator's list or the
      // engine; the hold covers the costliest of those. Its choice weighs prices, so it takes the count.
      const chosen = planned.auto
        ? yield* autoRouter.choose({
          plan: windowed,
          standing: windowed.candidates.map((m) => {
            const inputTokens = input.of(m)
            return {
              model: m,
              hasCapacity: providers.hasCapacity(m.provider.name, inputTokens + outputTokens, now),
              priceWei: holdWei(m.listing.price, { inputTokens, outputTokens }, peg)
            }
          }),
          bias: call.route.routingBias,
          send: { pinnedModel: pin?.modelKey, conversationId }
        })
        : windowed
      if (chosen.auto) yield* input.countWithVendors(chosen.candidates)
      if (chosen.candidates.length === 0) {
        // Only `auto` drops candidates here (SPEC Model selection 3: no model with capacity is 503).
        return yield* new ServiceUnavailable({ message: "No model has capacity for this request right now; retry shortly." })
      }
      const holdOf = (tokensOf: (m: RoutableModel) => number) =>
        chosen.candidates.reduce((max, m) => {
          const wei = holdWei(m.listing.price, { inputTokens: tokensOf(m), outputTokens }, peg)
          return wei > max ? wei : max
        }, 1n)
      // A large input is held at its bound when the account was last seen with room for OVERLAP_HOLDS such holds:
      // the reservation is then admitted whichever of the two it holds, the settlement returns the excess, and the
      // tokenizer never runs on the request path (the key pools count the bound until the vendor's usage replaces it).
      const bounded = !chosen.auto && input.boundO200k >= ALWAYS_COUNT_BELOW && headroom.allows(call.apiKey.accountId, holdOf(input.bound))
      const inputTokensOf = bounded ? input.bound : input.of
      return {
        chat,
        plan: chosen,
        heldInputTokens: new Map(chosen.candidates.map((m) => [m.key, inputTokensOf(m)])),
        countedInputTokensOf: input.of,
        outputTokens,
        holdWei: holdOf(inputTokensOf),
        pegUsd18: peg,
        revision: latestRevision(snap.inputs),
        conversationId,
        pin
      } satisfies PlannedRequest
    })

    /**
     * The input count a send of this request would hold for (SPEC "Billing" 4): the vendor's counter where it publishes
     * one, with a key its pool admits now (`keyOf`), else the local estimate; for `auto` and fallback lists, the
     * costliest candidate's count as the hold takes it. The model checks of a send apply; its window and budget checks
     * do not (a count answers for any input).
     */
    const countInput = Effect.fn("RequestPlanner.countInput")(function* (
      call: Pick<InferenceCall, "chat" | "route" | "format" | "apiKey">,
      keyOf: KeyChooser
    ) {
      const { snap, catalog } = yield* routable
      const planned = yield* planCandidates(catalog, call.route, call.chat, call.apiKey.allowedModels, call.format)
      const input = makeInputEstimator(call.chat, providers.tokenRatio)
      const outputTokens = estimateOutputTokens(call.chat)
      const peg = snap.inputs.pegUsd18
      const now = yield* Clock.currentTimeMillis
      const chosen = planned.auto
        ? yield* autoRouter.choose({
          plan: planned,
          standing: planned.candidates.map((m) => ({
            model: m,
            // Which models `auto` could send to now, whatever the size: a count reserves nothing, and answers any input.
            hasCapacity: providers.hasCapacity(m.provider.name, 0, now),
            priceWei: holdWei(m.listing.price, { inputTokens: input.of(m), outputTokens }, peg)
          })),
          bias: call.route.routingBias
        })
        : planned
      if (chosen.candidates.length === 0) {
        return yield* new ServiceUnavailable({ message: "No model has capacity for this request right now; retry shortly." })
      }
      yield* input.countWithVendors(chosen.candidates, keyOf)
      const costliest = chosen.candidates.reduce((top, m) =>
        holdWei(m.listing.price, { inputTokens: input.of(m), outputTokens }, peg) > holdWei(top.listing.price, { inputTokens: input.of(top), outputTokens }, peg) ? m : top
      )
      return input.of(costliest)
    })

    return { plan, routable, countInput } as const
  })
}) {}
