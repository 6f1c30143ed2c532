/**
 * Model selection (SPEC.md "Model selection" 1-8): which catalog models a request may be served by, in order, before
 * any capacity is asked. Pure: the routable catalog is built once per oracle snapshot (`makeRoutableCatalog`), and a
 * request's candidates are computed from it without any I/O.
 */
import { Either } from "effect"
import { type ModelCard, requireOutput } from "../catalog/card.ts"
import { ModelRestricted, ServiceUnavailable, ValidationFailed } from "../errors.ts"
import type { CatalogListing } from "../oracle/inputs.ts"
import type { KeyResolution } from "../oracle/keys.ts"
import type { ChatRequest, RouteRequest } from "./canonical.ts"
import { makeModelIdIndex } from "./modelIds.ts"
import { KEY_SHORTCUTS, type ProviderConfig } from "./providers.ts"
import { type InboundFormatName, type ModelTraits, parameterRefusal, traitsFor, type TraitsTable } from "./traits.ts"

export interface RoutableModel {
  readonly key: string
  readonly vendor: string
  readonly card: ModelCard
  readonly listing: CatalogListing
  readonly provider: ProviderConfig
  /** What the model takes beyond its card (data/exchange/model-traits.yaml). */
  readonly traits: ModelTraits
}

export interface RoutableCatalog {
  /** Catalog key -> the model with the provider that serves it. */
  readonly models: ReadonlyMap<string, RoutableModel>
  /** The embedding models (kind embedding, not retired) a configured provider serves: `/v1/embeddings` only. */
  readonly embeddings: ReadonlyMap<string, RoutableModel>
  /** A live catalog model's kind (text, embedding, ...), routable or not. */
  readonly kindOf: (modelKey: string) => string | undefined
  /**
   * Resolves a client's spelling against the whole catalog, answering only for routable models: the catalog's own
   * spellings and the vendors' API ids (modelIds.ts).
   */
  readonly resolve: (name: string) => KeyResolution
  /** The same resolution over the whole live catalog, routable or not. */
  readonly resolveInCatalog: (name: string) => KeyResolution
  /** The routable models closest to a name that resolved to nothing (at most three), for the refusal to name. */
  readonly suggest: (name: string) => ReadonlyArray<string>
  /** The vendor API ids that resolve to a catalog model besides its own spellings (its sdkId, derived aliases). */
  readonly aliasesOf: (modelKey: string) => ReadonlyArray<string>
  /** The vendors of the catalog that have no provider configured (what an operator could still enable). */
  readonly unconfiguredVendors: ReadonlyArray<string>
  /**
   * Why a catalog model is not routable here: `permanent` when it never will be (retired, not a chat model), else no
   * provider serves it (what an operator can change). For `embeddings`, not being a chat model is no reason.
   */
  readonly whyNotRoutable: (modelKey: string, route?: "chat" | "embeddings") => { readonly permanent: boolean; readonly reason: string }
  /**
   * A catalog model as a refusal names it: the id the client sent, then the model's display name and catalog key
   * (`claude-opus-4-8 (Claude Opus 4.8, anthropic/claude-opus-4.8)`); the key alone is never what the client asked for.
   */
  readonly nameAsAsked: (modelKey: string, asked: string) => string
}

const vendorOf = (key: string) => key.slice(0, key.indexOf("/"))

/** What enables a catalog provider: its name in PROVIDERS_FILE (the catalog's provider key), or its key variable. */
const toConfigure = (providerKey: string): string => {
  const shortcut = KEY_SHORTCUTS.find((s) => s.name === providerKey)
  return `configure ${providerKey} in PROVIDERS_FILE${shortcut === undefined ? "" : ` or set ${shortcut.variables.join(" or ")}`}`
}

/**
 * The catalog models a configured provider serves: text models (and, apart, embedding models), not retired, of the
 * provider's vendor (or its list).
 */
export const makeRoutableCatalog = (
  catalog: ReadonlyArray<CatalogListing>,
  vendors: ReadonlyArray<string>,
  providers: ReadonlyArray<ProviderConfig>,
  now: Date,
  traits: TraitsTable
): RoutableCatalog => {
  const byVendor = new Map(providers.map((p) => [p.name, p]))
  const models = new Map<string, RoutableModel>()
  const embeddings = new Map<string, RoutableModel>()
  const kinds = new Map(catalog.map((l) => [l.card.id, l.card.kind as string]))
  const cards = new Map(catalog.map((l) => [l.card.id, l.card]))
  const reasons = new Map<string, string>()
  const retirements = new Set<string>()
  for (const listing of catalog) {
    const card = listing.card
    if (card.retiredAt !== null && card.retiredAt <= now) {
      reasons.set(card.id, `it was retired on ${card.retiredAt.toISOString().slice(0, 10)} and is no longer served`)
      retirements.add(card.id)
      continue
    }
    if (card.kind !== "text") reasons.set(card.id, `it is not a chat model (kind ${card.kind})`)
    if (card.kind !== "text" && card.kind !== "embedding") continue
    const vendor = vendorOf(card.id)
    // A provider is named by the catalog's provider key (`xai`, `alibaba`), which is not always the slug its
    // model ids start with (`x-ai/`, `qwen/`); the slug is accepted too.
    const provider = byVendor.get(card.providerKey) ?? byVendor.get(vendor)
    if (provider === undefined) continue
    if (provider.models !== null && !provider.models.has(card.id.toLowerCase())) continue
    ;(card.kind === "text" ? models : embeddings).set(card.id, { key: card.id, vendor, card, listing, provider, traits: traitsFor(traits, card.id) })
  }
  // Built here, once per snapshot, so that a request's resolution is a few lookups.
  const ids = makeModelIdIndex(
    vendors,
    catalog.map(({ card }) => ({ key: card.id, sdkId: card.sdkId, retired: card.retiredAt !== null && card.retiredAt <= now })),
    models.keys()
  )
  return {
    models,
    embeddings,
    kindOf: (key) => kinds.get(key),
    resolve: ids.resolve,
    resolveInCatalog: ids.resolveInCatalog,
    suggest: (name) => ids.suggest(name),
    aliasesOf: ids.aliasesOf,
    whyNotRoutable: (key, route = "chat") => {
      const permanent = route === "chat" || retirements.has(key) ? reasons.get(key) : undefined
      return permanent !== undefined
        ? { permanent: true, reason: permanent }
        : { permanent: false, reason: `no configured provider serves it (${toConfigure(cards.get(key)?.providerKey ?? vendorOf(key))})` }
    },
    nameAsAsked: (key, asked) => {
      const card = cards.get(key)
      const sent = asked.trim()
      const known = card === undefined ? key : `${card.displayName}, ${key}`
      return sent.toLowerCase() === key.toLowerCase() ? `${key}${card === undefined ? "" : ` (${card.displayName})`}` : `${sent} (${known})`
    },
    unconfiguredVendors: [...new Set(catalog.filter((l) => !byVendor.has(l.card.providerKey) && !byVendor.has(vendorOf(l.card.id))).map((l) => l.card.providerKey))].sort()
  }
}

/** Whether the model prices reasoning output (SPEC: reasoning is available exactly there). */
export const canReason = (model: RoutableModel): boolean => model.card.reasoning && model.listing.price.reasoningOutput !== null

export const wantsReasoning = (chat: ChatRequest): boolean => chat.reasoning !== undefined && chat.reasoning !== null

/** Reasoning the model must give: asked for, and not adaptive (which a model that cannot reason answers without). */
const lacksReasoning = (chat: ChatRequest, model: RoutableModel): boolean =>
  wantsReasoning(chat) && chat.reasoning?.adaptive !== true && !canReason(model)

/** The request as one candidate takes it: adaptive thinking is left out for a model that cannot reason. */
export const requestFor = (chat: ChatRequest, model: RoutableModel): ChatRequest =>
  chat.reasoning?.adaptive === true && !canReason(model) ? { ...chat, reasoning: undefined } : chat

export type Chooser = "engine" | "list" | "degraded" | "pin"

export interface CandidatePlan {
  /** In the order they are tried. */
  readonly candidates: ReadonlyArray<RoutableModel>
  /** `auto` answers name how the model was chosen; absent when the client named one. */
  readonly chooser: Chooser | undefined
  /** Whether the client asked for `auto`. */
  readonly auto: boolean
}

export type PlanFailure = ValidationFailed | ModelRestricted | ServiceUnavailable

const invalid = (message: string, param: string) => new ValidationFailed({ message, param })

const isAuto = (name: string | undefined) => name === undefined || name.trim().toLowerCase() === "auto"

/**
 * Resolves one named model: unknown vendor or wrong vendor 422, a name matching no catalog model (or more than one) 422
 * naming the closest routable ones, a catalog model no provider serves 503 naming what to configure.
 */
const resolveNamed = (catalog: RoutableCatalog, name: string, param: string): Either.Either<RoutableModel, PlanFailure> => {
  if (name.trim().toLowerCase().startsWith("auto/") || name.trim().toLowerCase() === "auto") {
    return Either.left(invalid(`"auto" takes no vendor prefix and cannot appear in models[].`, param))
  }
  const found = catalog.resolve(name)
  if (found._tag === "Found") return Either.right(catalog.models.get(found.modelKey)!)
  if (found._tag === "Invalid") return Either.left(invalid(`${param}: ${found.message}${found.message.endsWith("?") ? "" : "."}`, param))
  // Not routable: either not in the catalog at all, or in it without a provider (or retired, or not a text model).
  const inCatalog = catalog.resolveInCatalog(name)
  if (inCatalog._tag === "Found") {
    const key = inCatalog.modelKey
    const why = catalog.whyNotRoutable(key)
    // A model that will never be served is the client's to change (422, with what is close); a missing provider is
    // the operator's (503).
    if (why.permanent) {
      const close = catalog.suggest(name)
      const hint = close.length === 0 ? "" : ` Did you mean ${close.join(", ")}?`
      return Either.left(invalid(`${param}: ${catalog.nameAsAsked(key, name)} is not served: ${why.reason}.${hint}`, param))
    }
    return Either.left(new ServiceUnavailable({ message: `${catalog.nameAsAsked(key, name)} is in the catalog but not routable here: ${why.reason}.` }))
  }
  // The closest routable ids help with a typo or another gateway's spelling of the model.
  const close = catalog.suggest(name)
  const hint = close.length === 0 ? "" : ` Did you mean ${close.join(", ")}?`
  return Either.left(invalid(`${param}: no model "${name}" in the catalog.${hint} GET /v1/models lists the routable ones.`, param))
}

const allowedBy = (allowed: ReadonlyArray<string>) => {
  const set = new Set(allowed.map((m) => m.toLowerCase()))
  return (model: RoutableModel) => set.size === 0 || set.has(model.key.toLowerCase())
}

/**
 * The candidates of a request, in order. Named: that model, then `models[]`; `auto`: every routable model the key may
 * use that can take the request, cheapest first (the operator's list, a pin or the routing engine then choose among
 * them: domain/exchange/autoRouting.ts). Capability gaps (reasoning) refuse a named model and skip a list entry or an `auto` candidate.
 */
export const planCandidates = (
  catalog: RoutableCatalog,
  route: RouteRequest,
  chat: ChatRequest,
  allowedModels: ReadonlyArray<string>,
  inbound: InboundFormatName = "chat"
): Either.Either<CandidatePlan, PlanFailure> =>
  Either.gen(function* () {
    const allowed = allowedBy(allowedModels)
    const auto = isAuto(route.model) && route.models === undefined
    const reasoningParam = inbound === "messages" ? "thinking" : "reasoning"
    const refusalOf = (m: RoutableModel) => parameterRefusal(m.traits, m.vendor, requestFor(chat, m), { inbound, model: m.key })
    if (route.models !== undefined && route.model !== undefined && isAuto(route.model)) {
      return yield* Either.left(invalid("models[] cannot be combined with model \"auto\".", "models"))
    }
    if (route.routingBias !== undefined && !auto) {
      return yield* Either.left(invalid("routing_bias leans only an auto choice; remove it or set model to auto.", "routing_bias"))
    }
    if (auto) {
      const able = [...catalog.models.values()]
        .filter(allowed)
        .filter((m) => !lacksReasoning(chat, m))
      // A model that refuses one of the request's parameters cannot serve it; if every one does, the first refusal says why.
      const candidates = able
        .filter((m) => refusalOf(m) === undefined)
        .sort((a, b) => referencePrice(a) < referencePrice(b) ? -1 : referencePrice(a) > referencePrice(b) ? 1 : a.key.localeCompare(b.key))
      if (candidates.length === 0) {
        const refusal = able.map(refusalOf).find((r) => r !== undefined)
        return yield* Either.left(refusal ?? new ServiceUnavailable({ message: "No model can serve this request: nothing routable matches it." }))
      }
      return { candidates, chooser: undefined, auto: true }
    }
    const names: Array<{ name: string; param: string }> = []
    if (route.model !== undefined) names.push({ name: route.model, param: "model" })
    for (const [i, name] of (route.models ?? []).entries()) names.push({ name, param: `models.${i}` })
    const candidates: Array<RoutableModel> = []
    let skipped: ValidationFailed | undefined
    for (const { name, param } of names) {
      const model = yield* resolveNamed(catalog, name, param)
      if (!allowed(model)) {
        return yield* Either.left(new ModelRestricted({ message: `This API key may not use ${model.key} (allowedModels).`, param }))
      }
      if (lacksReasoning(chat, model)) {
        const refusal = invalid(`${model.key} does not offer reasoning (no priced reasoning output).`, reasoningParam)
        if (names.length === 1) return yield* Either.left(refusal)
        skipped ??= refusal
        continue
      }
      const refusal = refusalOf(model)
      if (refusal !== undefined) {
        // SPEC Model selection 6: a list entry lacking a capability (tools, structured output) is skipped; a parameter
        // the entry rejects as invalid aborts the request, as it does for a single named model.
        if (names.length > 1 && CAPABILITY_PARAMS.has(refusal.param ?? "")) {
          skipped ??= refusal
          continue
        }
        return yield* Either.left(refusal)
      }
      if (!candidates.some((c) => c.key === model.key)) candidates.push(model)
    }
    if (candidates.length === 0) {
      return yield* Either.left(skipped ?? invalid("No model in models[] can serve this request.", "models"))
    }
    return { candidates, chooser: undefined, auto: false }
  })

/** Refusals that mean a missing capability rather than an invalid value: a models[] entry with one is skipped. */
const CAPABILITY_PARAMS = new Set(["tools", "tool_choice", "response_format", "text.format"])

/** The price a cheapest-first choice compares: input plus output per million (the reference workload's shape). */
const referencePrice = (model: RoutableModel): bigint => model.listing.price.input.usd18 * 2n + requireOutput(model.listing.price).usd18

/**
 * The window check (SPEC Limits): a named model or a list entry whose window is below the estimated input aborts the
 * request with 422 before anything is reserved; `auto` drops such candidates and fails only when none is left.
 */
export const checkWindows = (
  plan: CandidatePlan,
  inputTokensOf: (model: RoutableModel) => number
): Either.Either<CandidatePlan, ValidationFailed> => {
  const fits = (m: RoutableModel) => m.card.maxInputTokens === null || inputTokensOf(m) <= m.card.maxInputTokens
  if (plan.auto) {
    const candidates = plan.candidates.filter(fits)
    return candidates.length > 0
      ? Either.right({ ...plan, candidates })
      : Either.left(invalid("The request's input is larger than every routable model's window.", "messages"))
  }
  const over = plan.candidates.find((m) => !fits(m))
  return over === undefined
    ? Either.right(plan)
    : Either.left(
      invalid(`The estimated input of ${inputTokensOf(over)} tokens is over ${over.key}'s window of ${over.card.maxInputTokens} tokens.`, "messages")
    )
}

/**
 * A request larger than every key of a candidate's provider may take in a minute (its estimated input plus its output
 * limit above the largest TPM) can never be admitted: that candidate is dropped, and with none left the request is
 * 422 naming max_tokens before anything is reserved, never a 5xx asking to retry (issue 11, fuzzing).
 */
export const checkKeyBudgets = (
  plan: CandidatePlan,
  tokensOf: (model: RoutableModel) => number,
  largestBudget: (model: RoutableModel) => number
): Either.Either<CandidatePlan, ValidationFailed> => {
  const candidates = plan.candidates.filter((m) => tokensOf(m) <= largestBudget(m))
  if (candidates.length > 0) return Either.right({ ...plan, candidates })
  const first = plan.candidates[0]!
  return Either.left(
    invalid(
      `This request needs ${tokensOf(first)} tokens of an upstream key's per-minute budget (its input plus max_tokens); ` +
        `no key serving ${plan.candidates.map((m) => m.key).join(", ")} takes more than ${largestBudget(first)}. Lower max_tokens.`,
      "max_tokens"
    )
  )
}

