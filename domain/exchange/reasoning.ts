/**
 * Reasoning controls (SPEC.md "Reasoning controls"): the chat format's `reasoning_effort` and `reasoning{}` and the
 * messages format's `thinking`, reconciled into one ReasoningRequest, or refused naming the fields, before any credit
 * moves. Pure.
 */
import { Either } from "effect"
import { ValidationFailed } from "../errors.ts"
import type { ReasoningEffort, ReasoningRequest } from "./canonical.ts"

export const DEFAULT_MAX_TOKENS = 4096
export const BUDGET_FLOOR = 1024
export const BUDGET_CEILING = 200_000

const SHARE_PERCENT: Record<ReasoningEffort, number> = { low: 20, medium: 50, high: 80 }

/** The thinking budget of an effort: its share of the output limit, never below the floor. */
export const budgetOfEffort = (effort: ReasoningEffort, maxTokens: number | undefined): number =>
  Math.max(BUDGET_FLOOR, Math.floor(((maxTokens ?? DEFAULT_MAX_TOKENS) * SHARE_PERCENT[effort]) / 100))

/** The effort bucket closest to an explicit budget, by its share of the output limit (20/50/80%). */
export const effortOfBudget = (budget: number, maxTokens: number | undefined): ReasoningEffort => {
  const percent = (budget * 100) / (maxTokens ?? DEFAULT_MAX_TOKENS)
  const ranked = (Object.keys(SHARE_PERCENT) as Array<ReasoningEffort>).sort(
    (a, b) => Math.abs(SHARE_PERCENT[a] - percent) - Math.abs(SHARE_PERCENT[b] - percent)
  )
  return ranked[0]!
}

const refuse = (message: string, param: string) => Either.left(new ValidationFailed({ message, param }))

/** The budget must leave room for the answer: below the output limit, or 422 naming both numbers. */
const checkBelowLimit = (budget: number, budgetField: string, maxTokens: number | undefined, limitField: string) => {
  const limit = maxTokens ?? DEFAULT_MAX_TOKENS
  return budget < limit
    ? Either.right(undefined)
    : refuse(
      `The reasoning budget ${budgetField}=${budget} must be below ${maxTokens === undefined ? `the default ${limitField}` : limitField}=${limit}.`,
      budgetField
    )
}

export interface ChatReasoningControls {
  readonly reasoningEffort?: ReasoningEffort | undefined
  readonly reasoning?: {
    readonly effort?: ReasoningEffort | undefined
    readonly max_tokens?: number | undefined
    readonly enabled?: boolean | undefined
    readonly exclude?: boolean | undefined
  } | undefined
}

/**
 * The chat format: undefined when nothing asks for reasoning, null when `reasoning.enabled` is false, else the request.
 * `limitField` names the output limit the client set (`max_completion_tokens` or `max_tokens`).
 */
export const reconcileChatReasoning = (
  controls: ChatReasoningControls,
  maxTokens: number | undefined,
  limitField: string
): Either.Either<ReasoningRequest | null | undefined, ValidationFailed> => {
  const { reasoning, reasoningEffort } = controls
  if (reasoning === undefined && reasoningEffort === undefined) return Either.right(undefined)
  if (reasoning?.effort !== undefined && reasoningEffort !== undefined && reasoning.effort !== reasoningEffort) {
    return refuse(
      `reasoning_effort=${reasoningEffort} and reasoning.effort=${reasoning.effort} contradict each other; send one.`,
      "reasoning.effort"
    )
  }
  const effort = reasoning?.effort ?? reasoningEffort
  const budget = reasoning?.max_tokens
  if (reasoning?.enabled === false) {
    if (effort !== undefined) {
      return refuse(
        `reasoning.enabled=false contradicts ${reasoning.effort !== undefined ? "reasoning.effort" : "reasoning_effort"}=${effort}.`,
        "reasoning.enabled"
      )
    }
    if (budget !== undefined) return refuse(`reasoning.enabled=false contradicts reasoning.max_tokens=${budget}.`, "reasoning.enabled")
    return Either.right(null)
  }
  if (effort !== undefined && budget !== undefined) {
    return refuse(
      `${reasoning?.effort !== undefined ? "reasoning.effort" : "reasoning_effort"}=${effort} and reasoning.max_tokens=${budget} are exclusive; send one.`,
      "reasoning.max_tokens"
    )
  }
  const exclude = reasoning?.exclude === true
  if (budget !== undefined) {
    return Either.map(checkBelowLimit(budget, "reasoning.max_tokens", maxTokens, limitField), () => ({
      effort: effortOfBudget(budget, maxTokens),
      budgetTokens: budget,
      exclude
    }))
  }
  const chosen = effort ?? "medium"
  const budgetTokens = budgetOfEffort(chosen, maxTokens)
  return Either.map(checkBelowLimit(budgetTokens, `reasoning budget (${chosen})`, maxTokens, limitField), () => ({
    effort: chosen,
    budgetTokens,
    exclude
  }))
}

/** The messages format's `thinking`: enabled with `budget_tokens` (floor 1024, below `max_tokens`) or disabled. */
export const reconcileThinking = (
  thinking: { readonly type: "enabled"; readonly budget_tokens: number } | { readonly type: "disabled" } | undefined,
  maxTokens: number
): Either.Either<ReasoningRequest | null | undefined, ValidationFailed> => {
  if (thinking === undefined) return Either.right(undefined)
  if (thinking.type === "disabled") return Either.right(null)
  const budget = thinking.budget_tokens
  if (budget < BUDGET_FLOOR) return refuse(`thinking.budget_tokens=${budget} is below the floor of ${BUDGET_FLOOR}.`, "thinking.budget_tokens")
  return Either.map(checkBelowLimit(budget, "thinking.budget_tokens", maxTokens, "max_tokens"), () => ({
    effort: effortOfBudget(budget, maxTokens),
    budgetTokens: budget,
    exclude: false
  }))
}

/** OpenAI's Responses efforts beyond the canonical three: the nearest one serves them. */
const RESPONSES_EFFORT: Record<"minimal" | "low" | "medium" | "high" | "xhigh", ReasoningEffort> = {
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high"
}

/**
 * The Responses format's `reasoning.effort`: undefined when absent (the model's default), null for `none` (off), else
 * the nearest canonical effort with its share of the output limit. The summary is the renderer's business: the
 * reasoning is always produced and billed, and shown only as a summary that was asked for.
 */
export const reconcileResponsesReasoning = (
  effort: "none" | keyof typeof RESPONSES_EFFORT | undefined,
  maxTokens: number | undefined
): ReasoningRequest | null | undefined => {
  if (effort === undefined) return undefined
  if (effort === "none") return null
  const chosen = RESPONSES_EFFORT[effort]
  return { effort: chosen, budgetTokens: budgetOfEffort(chosen, maxTokens), exclude: false }
}
