/**
 * Which embedding models may answer a `/v1/embeddings` request, in order (DESIGN.md section 10, "Agents' dialects"),
 * pure: `model` or `models[]` resolved over the whole catalog, kept only where they are embedding models a configured
 * provider serves with an embeddings API, the key allows, and the request fits (its `dimensions`, its input form, each
 * input's size). A single named model that fails one of these is refused naming why; a list entry is skipped, and the
 * first skip is the refusal when none is left. The chat routing (routing.ts) keeps embedding models out; this is the
 * reverse.
 */
import { Either } from "effect"
import { acceptsDimensions, takesDimensions } from "../catalog/embeddingCard.ts"
import { ModelRestricted, ServiceUnavailable, ValidationFailed } from "../errors.ts"
import type { UpstreamFormat } from "./providers.ts"
import type { RoutableCatalog, RoutableModel } from "./routing.ts"
import type { EmbeddingText } from "./translate/embeddings.ts"

export type EmbeddingPlanFailure = ValidationFailed | ModelRestricted | ServiceUnavailable

export interface EmbeddingPlanRequest {
  readonly route: { readonly model?: string | undefined; readonly models?: ReadonlyArray<string> | undefined }
  readonly inputs: ReadonlyArray<EmbeddingText>
  readonly dimensions: number | undefined
  readonly allowedModels: ReadonlyArray<string>
  /** Which upstream formats have an embeddings call (adapters with `embed`). */
  readonly embeds: (format: UpstreamFormat) => boolean
  /** The tokens of each input, in order (o200k for texts, the array's length for token ids). */
  readonly inputTokens: ReadonlyArray<number>
}

const invalid = (message: string, param: string) => new ValidationFailed({ message, param })

/** The sizes a model takes, for a refusal. */
export const dimensionsText = (model: RoutableModel): string => {
  const traits = model.card.embedding!
  if (!takesDimensions(traits)) return `${model.key} returns ${traits.dimensions} dimensions only and takes no \`dimensions\``
  if (traits.dimensionOptions !== null) return `${model.key} takes \`dimensions\` of ${traits.dimensionOptions.join(", ")}`
  return `${model.key} takes \`dimensions\` from 1 to ${traits.maxDimensions ?? traits.dimensions}`
}

/** Resolves one name to an embedding model a provider serves, or why not (a 503 when an operator could change it). */
const resolveEmbedding = (catalog: RoutableCatalog, name: string, param: string): Either.Either<RoutableModel, EmbeddingPlanFailure> => {
  const found = catalog.resolveInCatalog(name)
  if (found._tag === "Invalid") return Either.left(invalid(`${param}: ${found.message}`, param))
  if (found._tag === "NotFound") {
    const close = [...catalog.embeddings.keys()].filter((key) => key.includes(name.split("/").pop() ?? name)).slice(0, 3)
    const hint = close.length === 0 ? "" : ` Did you mean ${close.join(", ")}?`
    return Either.left(invalid(`${param}: no model "${name}" in the catalog.${hint} GET /v1/oracle/catalog lists the embedding models (embeddingModels).`, param))
  }
  const key = found.modelKey
  const model = catalog.embeddings.get(key)
  if (model !== undefined) return Either.right(model)
  const kind = catalog.kindOf(key)
  if (kind !== "embedding") {
    return Either.left(invalid(`${param}: ${key} is not an embedding model (kind ${kind ?? "unknown"}); /v1/embeddings serves embedding models only.`, param))
  }
  const why = catalog.whyNotRoutable(key, "embeddings")
  if (why.permanent) return Either.left(invalid(`${param}: ${catalog.nameAsAsked(key, name)} is not served: ${why.reason}.`, param))
  return Either.left(new ServiceUnavailable({ message: `${catalog.nameAsAsked(key, name)} is in the catalog but not routable here: ${why.reason}.` }))
}

/** Why a model cannot take this request (undefined: it can). */
const unfit = (model: RoutableModel, request: EmbeddingPlanRequest, param: string): ValidationFailed | undefined => {
  if (!request.embeds(model.provider.format)) {
    return invalid(`${param}: ${model.key} is served by ${model.provider.name}, whose API has no embeddings here.`, param)
  }
  if (request.dimensions !== undefined && !acceptsDimensions(model.card.embedding!, request.dimensions)) {
    return invalid(`\`dimensions\` ${request.dimensions} is not available: ${dimensionsText(model)}.`, "dimensions")
  }
  if (model.provider.format !== "openai-chat" && request.inputs.some((input) => "tokens" in input)) {
    return invalid(`${model.key} takes text only: token-id inputs go to OpenAI-compatible vendors.`, "input")
  }
  const limit = model.card.maxInputTokens
  if (limit !== null) {
    const over = request.inputTokens.findIndex((tokens) => tokens > limit)
    if (over >= 0) {
      const param = request.inputs.length === 1 ? "input" : `input.${over}`
      return invalid(`Input ${over} holds ${request.inputTokens[over]} tokens; ${model.key} takes at most ${limit} per input.`, param)
    }
  }
  return undefined
}

export const planEmbeddingCandidates = (
  catalog: RoutableCatalog,
  request: EmbeddingPlanRequest
): Either.Either<ReadonlyArray<RoutableModel>, EmbeddingPlanFailure> =>
  Either.gen(function* () {
    const allowed = new Set(request.allowedModels.map((m) => m.toLowerCase()))
    const names: Array<{ name: string; param: string }> = []
    if (request.route.model !== undefined) names.push({ name: request.route.model, param: "model" })
    for (const [i, name] of (request.route.models ?? []).entries()) names.push({ name, param: `models.${i}` })
    const candidates: Array<RoutableModel> = []
    let skipped: ValidationFailed | undefined
    for (const { name, param } of names) {
      const resolved = resolveEmbedding(catalog, name, param)
      if (Either.isLeft(resolved)) {
        if (names.length > 1 && resolved.left._tag === "ValidationFailed" && resolved.left.message.includes("is not an embedding model")) {
          skipped ??= resolved.left
          continue
        }
        return yield* Either.left(resolved.left)
      }
      const model = resolved.right
      if (allowed.size > 0 && !allowed.has(model.key.toLowerCase())) {
        return yield* Either.left(new ModelRestricted({ message: `This API key may not use ${model.key} (allowedModels).`, param }))
      }
      const refusal = unfit(model, request, param)
      if (refusal !== undefined) {
        if (names.length === 1) return yield* Either.left(refusal)
        skipped ??= refusal
        continue
      }
      if (!candidates.some((c) => c.key === model.key)) candidates.push(model)
    }
    if (candidates.length === 0) return yield* Either.left(skipped ?? invalid("No model in models[] can serve this request.", "models"))
    return candidates
  })
