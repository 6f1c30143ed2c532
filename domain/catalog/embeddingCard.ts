/**
 * Embedding models on the price cards (DESIGN.md section 10, "Agents' dialects"; data/README.md): a model of
 * `kind: embedding` is priced per input token only, and says what its vectors are (default dimensions, the sizes a
 * request may ask for) and how many inputs one request takes. This module holds those card fields and their rules;
 * card.ts applies them while it checks a card. Embedding models never enter the basket (governance.ts keeps every
 * kind but text out), so nothing here reaches a manifest or a hash.
 */
import { Schema } from "effect"
import { BooleanText, PositiveIntText } from "./cardText.ts"

/** What a card says of an embedding model beyond its price. */
export interface EmbeddingTraits {
  /** The vector size the vendor returns when the request names none. */
  readonly dimensions: number
  /** The only sizes a request may ask for (the vendor's list, ascending), when the vendor takes a fixed set. */
  readonly dimensionOptions: ReadonlyArray<number> | null
  /** The vendor takes any size up to `maxDimensions` (Matryoshka truncation). */
  readonly flexibleDimensions: boolean
  /** With flexibleDimensions: the largest size a request may ask for; null means `dimensions`. */
  readonly maxDimensions: number | null
  /** How many inputs one request may carry, when the vendor states it. */
  readonly maxBatchInputs: number | null
}

/** The model-level card fields of an embedding model (all optional in the file shape; card.ts says which apply). */
export const RawEmbeddingFields = {
  dimensions: Schema.optional(PositiveIntText),
  dimensionOptions: Schema.optional(Schema.Array(PositiveIntText)),
  flexibleDimensions: Schema.optional(BooleanText),
  maxDimensions: Schema.optional(PositiveIntText),
  maxBatchInputs: Schema.optional(PositiveIntText)
}

export const EMBEDDING_FIELDS = Object.keys(RawEmbeddingFields) as ReadonlyArray<keyof typeof RawEmbeddingFields>

interface RawEmbedding {
  readonly dimensions?: number | undefined
  readonly dimensionOptions?: ReadonlyArray<number> | undefined
  readonly flexibleDimensions?: boolean | undefined
  readonly maxDimensions?: number | undefined
  readonly maxBatchInputs?: number | undefined
}

/** Price-entry fields that do not apply to a model priced per input token only. */
export const CHAT_ONLY_PRICE_FIELDS = ["output", "cachedInput", "cacheWrite5m", "cacheWrite1h", "reasoningOutput", "contextTiers"] as const

type Problem = (field: string, text: string) => void

/**
 * The traits of a model from its card fields, reporting every rule broken: an embedding model needs `dimensions`,
 * takes either a list of sizes or any size (not both), and the list holds its default; any other kind carries none of
 * these fields.
 */
export const embeddingTraitsOf = (kind: string, raw: RawEmbedding, problem: Problem): EmbeddingTraits | null => {
  if (kind !== "embedding") {
    for (const field of EMBEDDING_FIELDS) {
      if (raw[field] !== undefined) problem(field, `only an embedding model (kind: embedding) has ${field}; this is a ${kind} model`)
    }
    return null
  }
  if (raw.dimensions === undefined) {
    problem("dimensions", "an embedding model needs dimensions: the size of the vectors it returns by default")
    return null
  }
  const dimensions = raw.dimensions
  const flexible = raw.flexibleDimensions ?? false
  const options = raw.dimensionOptions === undefined ? null : [...new Set(raw.dimensionOptions)].sort((a, b) => a - b)
  if (options !== null && flexible) {
    problem("flexibleDimensions", "give dimensionOptions (the only sizes the API takes) or flexibleDimensions: true (any size), not both")
  }
  if (options !== null && !options.includes(dimensions)) {
    problem("dimensionOptions", `must include the default size, dimensions (${dimensions})`)
  }
  if (options !== null && options.length !== raw.dimensionOptions!.length) problem("dimensionOptions", "lists a size twice")
  if (raw.maxDimensions !== undefined && !flexible) {
    problem("maxDimensions", "applies only with flexibleDimensions: true (the largest size a request may ask for)")
  }
  if (raw.maxDimensions !== undefined && raw.maxDimensions < dimensions) {
    problem("maxDimensions", `is below the default size, dimensions (${dimensions})`)
  }
  return {
    dimensions,
    dimensionOptions: options,
    flexibleDimensions: flexible,
    maxDimensions: raw.maxDimensions ?? null,
    maxBatchInputs: raw.maxBatchInputs ?? null
  }
}

/** Refuses, on an embedding model's price entry, every field but its input price (and its source, marks and note). */
export const checkInputOnlyEntry = (entry: Readonly<Record<string, unknown>>, problem: Problem): void => {
  for (const field of CHAT_ONLY_PRICE_FIELDS) {
    if (entry[field] === undefined) continue
    problem(
      field,
      field === "output"
        ? "an embedding model has an input price only: it returns vectors, not tokens, so it has no output price"
        : `an embedding model is priced per input token only: ${field} does not apply to it`
    )
  }
}

/** Whether a request may name an output size at all (OpenAI's `dimensions`, Gemini's `outputDimensionality`). */
export const takesDimensions = (traits: EmbeddingTraits): boolean => traits.flexibleDimensions || traits.dimensionOptions !== null

/** Whether a request may ask this model for vectors of `size`. */
export const acceptsDimensions = (traits: EmbeddingTraits, size: number): boolean =>
  size === traits.dimensions ||
  (traits.dimensionOptions !== null
    ? traits.dimensionOptions.includes(size)
    : traits.flexibleDimensions && Number.isInteger(size) && size >= 1 && size <= (traits.maxDimensions ?? traits.dimensions))
