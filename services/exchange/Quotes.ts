/**
 * The exchange's public reads besides the model list: the quote of `GET /v1/inference/estimate` (SPEC "Estimate
 * query parameters" and its rules) and `GET /v1/models/availability` (COMPAT.md). Both plan exactly as a send would
 * (routing.ts), without the two things only a send sees (a pinned conversation, the control arm), and neither moves
 * any credit.
 */
import { Clock, Effect, Either } from "effect"
import { ServiceUnavailable, ValidationFailed } from "../../domain/errors.ts"
import { holdWei, priceUsage } from "../../domain/exchange/billing.ts"
import { type ChatRequest, creditsOf, type RouteRequest } from "../../domain/exchange/canonical.ts"
import { checkKeyBudgets, checkWindows, type Chooser, planCandidates, type PlanFailure, type RoutableModel } from "../../domain/exchange/routing.ts"
import { applyMarkup, USD18_SCALE, Usd18 } from "../../domain/money.ts"
import { AutoRouter } from "./AutoRouter.ts"
import { Exchange } from "./Exchange.ts"
import { Providers } from "./Providers.ts"

export interface QuoteRequest {
  readonly model: string | undefined
  readonly promptTokens: number
  readonly completionTokens: number
  readonly reasoningRequested: boolean
  readonly toolsPresent: boolean
  readonly routingBias: RouteRequest["routingBias"]
}

export interface Quote {
  readonly model: string
  readonly resolvedModel: string
  readonly promptTokens: number
  readonly completionTokens: number
  readonly creditsCost: number
  readonly creditsWei: string
  readonly usdCost: number
  readonly reservedWei: string
  readonly tierFromInputTokens: number | null
  /** On `auto` quotes: how the model was chosen (the X-Model-Chooser header). */
  readonly chooser: Chooser | undefined
}

export interface Availability {
  readonly computedAt: string
  readonly ttlSeconds: number
  readonly models: ReadonlyArray<{ readonly id: string; readonly routable: boolean }>
  readonly auto: { readonly id: string } | null
}

/** How long a client may cache an availability answer. */
export const AVAILABILITY_TTL_SECONDS = 10

/** A request described only by its shape: what the planner needs to know of it. */
const describedRequest = (quote: Pick<QuoteRequest, "reasoningRequested" | "toolsPresent" | "completionTokens">): ChatRequest => ({
  messages: [],
  stop: [],
  maxOutputTokens: quote.completionTokens,
  tools: quote.toolsPresent ? [{ name: "described_tool", parameters: { type: "object" } }] : [],
  reasoning: quote.reasoningRequested ? { effort: "medium", budgetTokens: 1024, exclude: false } : undefined
})

/** The planner names the request's fields; a quote names its query parameters. */
const asQueryRefusal = (failure: PlanFailure): PlanFailure =>
  failure._tag === "ValidationFailed" && failure.param === "reasoning"
    ? new ValidationFailed({ message: failure.message, param: "reasoningRequested" })
    : failure

/** The catalog's models of the kinds the exchange serves: chat models and embedding models. */
const servedKinds = <L extends { readonly card: { readonly kind: string } }>(listings: ReadonlyArray<L>) =>
  listings.filter((l) => l.card.kind === "text" || l.card.kind === "embedding")

export class Quotes extends Effect.Service<Quotes>()("Quotes", {
  effect: Effect.gen(function* () {
    const exchange = yield* Exchange
    const providers = yield* Providers
    const autoRouter = yield* AutoRouter

    const quote = Effect.fn("Quotes.quote")(function* (request: QuoteRequest) {
      const { snap, catalog } = yield* exchange.routable
      const chat = describedRequest(request)
      const planned = yield* Either.mapLeft(
        planCandidates(catalog, { model: request.model, routingBias: request.routingBias }, chat, []),
        asQueryRefusal
      ).pipe(
        // A quote is made for no key, so no allowedModels restricts it.
        Effect.catchTag("ModelRestricted", Effect.die)
      )
      const windowed = yield* Either.mapLeft(checkWindows(planned, () => request.promptTokens), (failure) =>
        new ValidationFailed({ message: failure.message, param: "promptTokens" })
      )
      const tokens = request.promptTokens + request.completionTokens
      const budgeted = yield* Either.mapLeft(
        checkKeyBudgets(windowed, () => tokens, (m) => providers.largestKeyBudget(m.provider.name)),
        (failure) => new ValidationFailed({ message: failure.message, param: "completionTokens" })
      )
      const peg = snap.inputs.pegUsd18
      const now = yield* Clock.currentTimeMillis
      const hasCapacity = (m: RoutableModel) => providers.hasCapacity(m.provider.name, tokens, now)
      const plan = budgeted.auto
        ? yield* autoRouter.choose({
          plan: budgeted,
          standing: budgeted.candidates.map((m) => ({
            model: m,
            hasCapacity: hasCapacity(m),
            priceWei: holdWei(m.listing.price, { inputTokens: request.promptTokens, outputTokens: request.completionTokens }, peg)
          })),
          bias: request.routingBias
        })
        : budgeted
      const chosen = plan.candidates.find(hasCapacity)
      if (chosen === undefined) {
        return yield* new ServiceUnavailable({ message: "No model has serving capacity for this request right now." })
      }
      const bill = priceUsage(chosen.listing.price, { freshInput: request.promptTokens, output: request.completionTokens }, peg)
      const reserved = plan.candidates.reduce((max, m) => {
        const wei = holdWei(m.listing.price, { inputTokens: request.promptTokens, outputTokens: request.completionTokens }, peg)
        return wei > max ? wei : max
      }, 0n)
      return {
        model: request.model ?? "auto",
        resolvedModel: chosen.key,
        promptTokens: request.promptTokens,
        completionTokens: request.completionTokens,
        creditsCost: creditsOf(bill.chargeWei),
        creditsWei: bill.chargeWei.toString(),
        usdCost: Number(applyMarkup(Usd18(bill.subtotalUsd18))) / Number(USD18_SCALE),
        reservedWei: reserved.toString(),
        tierFromInputTokens: bill.tierFromInputTokens,
        chooser: plan.chooser
      } satisfies Quote
    })

    /**
     * Every catalog model, chat and embedding, with its kind and whether it can be served now (for this key's
     * allowedModels when one is given). `auto` is chat's only: embeddings never choose their model.
     */
    const availability = Effect.fn("Quotes.availability")(function* (allowedModels: ReadonlyArray<string>) {
      const { snap, catalog } = yield* exchange.routable
      const allowed = new Set(allowedModels.map((m) => m.toLowerCase()))
      const now = yield* Clock.currentTimeMillis
      const servable = (key: string) => {
        const model = catalog.models.get(key) ?? catalog.embeddings.get(key)
        return model !== undefined && (allowed.size === 0 || allowed.has(key.toLowerCase())) && providers.hasCapacity(model.provider.name, 1, now)
      }
      // What `auto` resolves to now for a small request (no pin, no control arm); null when nothing can serve.
      const planned = planCandidates(catalog, {}, describedRequest({ reasoningRequested: false, toolsPresent: false, completionTokens: 1 }), allowedModels)
      const chosen = Either.isLeft(planned)
        ? undefined
        : yield* Effect.either(
          autoRouter.choose({
            plan: planned.right,
            standing: planned.right.candidates.map((m) => ({
              model: m,
              hasCapacity: servable(m.key),
              priceWei: holdWei(m.listing.price, { inputTokens: 1, outputTokens: 1 }, snap.inputs.pegUsd18)
            })),
            bias: undefined
          })
        )
      const first = chosen === undefined || Either.isLeft(chosen) ? undefined : chosen.right.candidates[0]
      const auto = first === undefined ? null : { id: first.key }
      return {
        computedAt: new Date(now).toISOString(),
        ttlSeconds: AVAILABILITY_TTL_SECONDS,
        models: servedKinds(snap.inputs.catalog).map((l) => ({ id: l.card.id, kind: l.card.kind, routable: servable(l.card.id) })),
        auto
      } satisfies Availability
    })

    return { quote, availability } as const
  })
}) {}
