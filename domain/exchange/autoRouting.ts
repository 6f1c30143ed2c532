/**
 * How `auto` picks its models (SPEC.md "Model selection" 1, 4, 5; DESIGN.md section 10 "Routing"). Pure: the caller
 * passes the candidates that can take the request (capability and window already checked, cheapest first), what has
 * capacity now, the operator's list, the conversation's pin and whether the request falls in the control arm.
 *
 * - `pin`: a conversation pinned to a model that can still serve it stays there (the control arm ignores pins);
 * - `list`: the operator's ordered preference list, entries with capacity, in its order;
 * - `degraded`: the list is not empty but nothing on it can serve: the cheapest that can (an operator alert);
 * - `engine`: the list is empty: `routing_bias` leans the choice (price against the quality score); without a bias,
 *   the cheapest that can (SPEC "Model selection" 1). The control arm takes the cheapest, whatever the bias.
 */
import type { RouteRequest } from "./canonical.ts"
import type { Chooser, RoutableModel } from "./routing.ts"

export type RoutingBias = NonNullable<RouteRequest["routingBias"]>

/** How many models an `auto` request tries (and its hold covers) at most. */
export const AUTO_ATTEMPTS = 3

export interface AutoChoiceInputs {
  /** Every model that can take the request, cheapest first. */
  readonly eligible: ReadonlyArray<RoutableModel>
  readonly hasCapacity: (model: RoutableModel) => boolean
  /** The operator's preference list (catalog keys, in order); empty when none is set. */
  readonly list: ReadonlyArray<string>
  readonly bias: RoutingBias | undefined
  /** The model a conversation is pinned to (already checked to be live and of the same bias). */
  readonly pinnedModel: string | undefined
  /** Held on the operator's order: no pin, no bias. */
  readonly controlArm: boolean
  /** A model's quality score (0-100, data/exchange/quality.yaml). */
  readonly quality: (model: RoutableModel) => number
  /** What the request would cost on a model (any monotone measure of price; compared only). */
  readonly price: (model: RoutableModel) => bigint
}

export interface AutoChoice {
  /** In the order they are tried, at most AUTO_ATTEMPTS; empty when nothing has capacity. */
  readonly candidates: ReadonlyArray<RoutableModel>
  readonly chooser: Chooser
  /** The list is set and none of its entries can serve this request (the operator is alerted). */
  readonly listUnservable: boolean
}

const byPrice = (price: AutoChoiceInputs["price"]) => (a: RoutableModel, b: RoutableModel) => {
  const pa = price(a)
  const pb = price(b)
  return pa < pb ? -1 : pa > pb ? 1 : a.key.localeCompare(b.key)
}

/**
 * The engine's order under a bias. `cheaper`: by price. `better`: by quality, then price. `balanced`: the mean of
 * the two ranks normalised over the candidates (quality linearly, price on a log scale, since prices span orders of
 * magnitude), then price.
 */
export const engineOrder = (
  models: ReadonlyArray<RoutableModel>,
  bias: RoutingBias | undefined,
  quality: AutoChoiceInputs["quality"],
  price: AutoChoiceInputs["price"]
): ReadonlyArray<RoutableModel> => {
  const cheapest = [...models].sort(byPrice(price))
  if (bias === undefined || bias === "cheaper" || models.length < 2) return cheapest
  if (bias === "better") return [...cheapest].sort((a, b) => quality(b) - quality(a))
  const logPrice = (m: RoutableModel) => Math.log(Math.max(1, Number(price(m))))
  const prices = cheapest.map(logPrice)
  const qualities = cheapest.map(quality)
  const spread = (values: ReadonlyArray<number>) => Math.max(...values) - Math.min(...values)
  const priceSpread = spread(prices)
  const qualitySpread = spread(qualities)
  const minPrice = Math.min(...prices)
  const minQuality = Math.min(...qualities)
  const score = (m: RoutableModel) => {
    const cheapness = priceSpread === 0 ? 1 : 1 - (logPrice(m) - minPrice) / priceSpread
    const goodness = qualitySpread === 0 ? 1 : (quality(m) - minQuality) / qualitySpread
    return (cheapness + goodness) / 2
  }
  const scores = new Map(cheapest.map((m) => [m.key, score(m)]))
  return [...cheapest].sort((a, b) => scores.get(b.key)! - scores.get(a.key)!)
}

export const chooseAuto = (inputs: AutoChoiceInputs): AutoChoice => {
  const serving = inputs.eligible.filter(inputs.hasCapacity)
  const cheapest = [...serving].sort(byPrice(inputs.price))
  if (!inputs.controlArm && inputs.pinnedModel !== undefined) {
    const pinned = serving.find((m) => m.key === inputs.pinnedModel)
    if (pinned !== undefined) {
      const rest = engineOrder(serving.filter((m) => m !== pinned), inputs.bias, inputs.quality, inputs.price)
      return { candidates: [pinned, ...rest].slice(0, AUTO_ATTEMPTS), chooser: "pin", listUnservable: false }
    }
  }
  if (inputs.list.length > 0) {
    const onList = inputs.list.flatMap((key) => serving.filter((m) => m.key.toLowerCase() === key.toLowerCase()))
    if (onList.length > 0) return { candidates: onList.slice(0, AUTO_ATTEMPTS), chooser: "list", listUnservable: false }
    return { candidates: cheapest.slice(0, AUTO_ATTEMPTS), chooser: "degraded", listUnservable: true }
  }
  const ordered = inputs.controlArm ? cheapest : engineOrder(serving, inputs.bias, inputs.quality, inputs.price)
  return { candidates: ordered.slice(0, AUTO_ATTEMPTS), chooser: "engine", listUnservable: false }
}

/**
 * Whether a request falls in the control arm: `percent` of `auto` traffic, the same answer for every turn of a
 * conversation (hashed), a fresh draw for a request without one.
 */
export const inControlArm = (percent: number, conversationId: string | undefined, draw: () => number): boolean => {
  if (percent <= 0) return false
  if (percent >= 100) return true
  if (conversationId === undefined) return draw() * 100 < percent
  let hash = 2166136261
  for (let i = 0; i < conversationId.length; i++) {
    hash ^= conversationId.charCodeAt(i)
    hash = Math.imul(hash, 16777619)
  }
  return ((hash >>> 0) % 10_000) < percent * 100
}
