/**
 * Price cards (data/README.md): the raw file shape, and its check. A card that fails is reported with the
 * file, the model and the field; nothing of it is used. Scalars are read in cardText.ts; an embedding model's fields
 * and rules (input price only, its vectors) are in embeddingCard.ts.
 */
import { Either, ParseResult, Schema } from "effect"
import type { Usd18 } from "../money.ts"
import {
  Availability,
  BooleanText,
  DateText,
  FamilyKey,
  fieldPath,
  hostOf,
  HttpsUrl,
  ModelId,
  ModelKind,
  PositiveIntText,
  Provenance,
  ProviderKey,
  registrableDomain,
  Slug,
  UsdText
} from "./cardText.ts"
import { checkInputOnlyEntry, type EmbeddingTraits, embeddingTraitsOf, RawEmbeddingFields } from "./embeddingCard.ts"

export type { EmbeddingTraits } from "./embeddingCard.ts"
export {
  Availability,
  BooleanText,
  DateText,
  FamilyKey,
  ModelId,
  ModelKind,
  PositiveIntText,
  Provenance,
  ProviderKey,
  UsdText
} from "./cardText.ts"

const MARK_STRENGTH: Record<Provenance, number> = { promotional: 0, inferred: 1, verified: 2 }

/** The weaker of two marks (promotional < inferred < verified): what one figure quoting both numbers can claim. */
export const weakerMark = (a: Provenance, b: Provenance): Provenance => (MARK_STRENGTH[a] <= MARK_STRENGTH[b] ? a : b)

export const PRICE_COMPONENTS = ["input", "output", "cachedInput", "cacheWrite5m", "cacheWrite1h", "reasoningOutput"] as const
export type PriceComponent = (typeof PRICE_COMPONENTS)[number]

// ---------------------------------------------------------------------------------------------------------
// The file shape.

const MarkedPriceObject = Schema.Struct({
  usd: UsdText,
  provenance: Schema.optional(Provenance),
  /** A page other than the entry's that states this one number, and the day it was read there. */
  sourceUrl: Schema.optional(HttpsUrl),
  checkedAt: Schema.optional(DateText),
  derivedFrom: Schema.optional(Schema.String),
  until: Schema.optional(DateText),
  regular: Schema.optional(UsdText)
})

/** A price: a plain decimal (marked by its entry) or an object carrying its own mark. */
const PriceField = Schema.Union(UsdText, MarkedPriceObject)

const RawTier = Schema.Struct({
  fromInputTokens: PositiveIntText,
  input: PriceField,
  output: PriceField
})

const RawPriceEntry = Schema.Struct({
  from: DateText,
  sourceUrl: Schema.optional(HttpsUrl),
  checkedAt: Schema.optional(DateText),
  provenance: Schema.optional(Provenance),
  derivedFrom: Schema.optional(Schema.String),
  input: PriceField,
  /** Required of every kind but embedding, which has none (checked in checkCard, naming the field). */
  output: Schema.optional(PriceField),
  cachedInput: Schema.optional(PriceField),
  cacheWrite5m: Schema.optional(PriceField),
  cacheWrite1h: Schema.optional(PriceField),
  reasoningOutput: Schema.optional(PriceField),
  contextTiers: Schema.optional(Schema.Array(RawTier)),
  note: Schema.optional(Schema.String)
})

const RawModel = Schema.Struct({
  id: ModelId,
  family: FamilyKey,
  displayName: Schema.NonEmptyTrimmedString,
  sdkId: Schema.NonEmptyTrimmedString,
  releasedAt: DateText,
  availability: Availability,
  kind: ModelKind,
  reasoning: BooleanText,
  maxInputTokens: Schema.optional(PositiveIntText),
  retiredAt: Schema.optional(DateText),
  ...RawEmbeddingFields,
  prices: Schema.Array(RawPriceEntry).pipe(Schema.minItems(1))
})

export const RawCard = Schema.Struct({
  provider: Schema.Struct({
    key: ProviderKey,
    name: Schema.NonEmptyTrimmedString,
    vendorSlug: Slug("vendor slug", /^[a-z0-9][a-z0-9-]{0,31}$/),
    pricingUrl: HttpsUrl,
    /** Further first-party domains (beyond pricingUrl's) whose pages may back a verified price. */
    domains: Schema.optional(Schema.Array(Slug("domain", /^[a-z0-9-]+(\.[a-z0-9-]+)+$/)))
  }),
  families: Schema.Array(
    Schema.Struct({
      key: FamilyKey,
      name: Schema.NonEmptyTrimmedString,
      description: Schema.optional(Schema.String)
    })
  ).pipe(Schema.minItems(1)),
  models: Schema.Array(RawModel).pipe(Schema.minItems(1))
}).annotations({ parseOptions: { errors: "all" } })
export type RawCard = typeof RawCard.Type


// ---------------------------------------------------------------------------------------------------------
// The checked card: defaults applied, cross-field rules enforced.

export interface MarkedPrice {
  readonly usd18: Usd18
  readonly provenance: Provenance
  /** This number's own source when it differs from its entry's (`PricePoint.sourceUrl`); null otherwise. */
  readonly sourceUrl: string | null
  /** The day `sourceUrl` was read; null with it. */
  readonly checkedAt: Date | null
  readonly derivedFrom: string | null
  readonly until: Date | null
  readonly regular18: Usd18 | null
}

export interface ContextTier {
  readonly fromInputTokens: number
  readonly input: MarkedPrice
  readonly output: MarkedPrice
}

export interface PricePoint {
  readonly effectiveFrom: Date
  readonly sourceUrl: string
  /** The day the source was seen stating these numbers; null when the entry names no source of its own. */
  readonly checkedAt: Date | null
  readonly note: string | null
  readonly input: MarkedPrice
  /** Null exactly for a model priced per input token only (an embedding model); every other kind has one. */
  readonly output: MarkedPrice | null
  readonly cachedInput: MarkedPrice | null
  readonly cacheWrite5m: MarkedPrice | null
  readonly cacheWrite1h: MarkedPrice | null
  readonly reasoningOutput: MarkedPrice | null
  readonly contextTiers: ReadonlyArray<ContextTier>
}

/**
 * The vendor page behind one number and the day it was read there: its own, else its entry's. Only a verified or
 * promotional number has one; an inferred number was not read off a vendor page (its `derivedFrom` says what it
 * rests on).
 */
export const sourceOfNumber = (
  mark: MarkedPrice,
  point: Pick<PricePoint, "sourceUrl" | "checkedAt">
): { readonly url: string; readonly checkedAt: Date | null } | null =>
  mark.provenance === "inferred"
    ? null
    : mark.sourceUrl !== null
      ? { url: mark.sourceUrl, checkedAt: mark.checkedAt }
      : { url: point.sourceUrl, checkedAt: point.checkedAt }

/**
 * The output price of a point of a model that has one: every kind but embedding (the card check refuses a chat
 * model's entry without it). For the basket, chat billing and routing, which only ever price such models; a point
 * without one reaching them is a defect.
 */
export const requireOutput = (point: Pick<PricePoint, "output" | "effectiveFrom">): MarkedPrice => {
  if (point.output === null) {
    throw new Error(`a price without an output price (in force from ${point.effectiveFrom.toISOString()}) reached a chat-only path`)
  }
  return point.output
}

export interface ModelCard {
  readonly id: string
  readonly providerKey: string
  readonly family: string
  readonly displayName: string
  readonly sdkId: string
  readonly releasedAt: Date
  readonly availability: "ga" | "preview"
  readonly kind: typeof ModelKind.Type
  readonly reasoning: boolean
  /** The context window (chat) or the tokens one input may hold (embedding), when published. */
  readonly maxInputTokens: number | null
  readonly retiredAt: Date | null
  /** An embedding model's vectors and batch size (embeddingCard.ts); null for every other kind. */
  readonly embedding: EmbeddingTraits | null
  readonly prices: ReadonlyArray<PricePoint>
}

export interface ProviderRecord {
  readonly key: string
  readonly name: string
  readonly vendorSlug: string
  readonly pricingUrl: string
}

export interface FamilyRecord {
  readonly key: string
  readonly providerKey: string
  readonly name: string
  readonly description: string | null
}

export interface PriceCard {
  /** Where the card was read from: a path under data/ or a URL. */
  readonly source: string
  readonly provider: ProviderRecord
  readonly families: ReadonlyArray<FamilyRecord>
  readonly models: ReadonlyArray<ModelCard>
}

/** One thing wrong with a card: where, and what. */
export class CardProblem extends Schema.TaggedError<CardProblem>()("CardProblem", {
  source: Schema.String,
  model: Schema.optional(Schema.String),
  field: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    return `${this.source}: ${this.model === undefined ? "" : `model ${this.model}: `}${this.field}: ${this.problem}`
  }
}

type RawPrice = typeof PriceField.Type
type RawEntry = typeof RawPriceEntry.Type

/** Turns decoder issues into problems that name the model by its id rather than its position. */
const problemsFromParseError = (source: string, raw: unknown, error: ParseResult.ParseError): ReadonlyArray<CardProblem> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const [head, index, ...rest] = issue.path
    if (head === "models" && typeof index === "number") {
      const id = (raw as { models?: Array<{ id?: unknown }> })?.models?.[index]?.id
      return new CardProblem({
        source,
        model: typeof id === "string" ? id : `#${index + 1}`,
        field: rest.length === 0 ? "(model)" : fieldPath(rest),
        problem: issue.message
      })
    }
    return new CardProblem({ source, field: issue.path.length === 0 ? "(card)" : fieldPath(issue.path), problem: issue.message })
  })

/** Checks a card read from `source` (already parsed from YAML) and returns it normalized, or every problem found. */
export const checkCard = (source: string, raw: unknown): Either.Either<PriceCard, ReadonlyArray<CardProblem>> => {
  const decoded = Schema.decodeUnknownEither(RawCard)(raw)
  if (Either.isLeft(decoded)) return Either.left(problemsFromParseError(source, raw, decoded.left))
  const card = decoded.right
  const problems: Array<CardProblem> = []
  const problem = (field: string, text: string, model?: string) =>
    problems.push(new CardProblem({ source, field, problem: text, ...(model === undefined ? {} : { model }) }))

  const providerKey = card.provider.key
  const familyKeys = new Set<string>()
  card.families.forEach((family, i) => {
    if (!family.key.startsWith(`${providerKey}.`)) problem(`families[${i}].key`, `"${family.key}" must start with "${providerKey}."`)
    if (familyKeys.has(family.key)) problem(`families[${i}].key`, `family "${family.key}" is declared twice`)
    familyKeys.add(family.key)
  })

  const firstPartyDomains = [registrableDomain(card.provider.pricingUrl), ...(card.provider.domains ?? [])]
  const isFirstParty = (url: string) => {
    const host = hostOf(url)
    return host !== undefined && firstPartyDomains.some((domain) => host === domain || host.endsWith(`.${domain}`))
  }

  const mark = (raw: RawPrice, entry: RawEntry, field: string, model: string, ownSourceAllowed = true): MarkedPrice => {
    const own = typeof raw === "bigint" ? undefined : raw
    const provenance = own?.provenance ?? entry.provenance ?? "verified"
    const derivedFrom = own?.derivedFrom ?? entry.derivedFrom ?? null
    if (provenance === "inferred" && derivedFrom === null) {
      problem(field, "an inferred price needs derivedFrom: what it was derived from", model)
    }
    const ownSource = own?.sourceUrl?.trim()
    if (!ownSourceAllowed && (ownSource !== undefined || own?.checkedAt !== undefined)) {
      problem(field, "a context tier's price takes its entry's sourceUrl and checkedAt, not its own", model)
    }
    if ((ownSource === undefined) !== (own?.checkedAt === undefined)) {
      problem(field, "a price's own sourceUrl and checkedAt go together: the page, and the day it was read", model)
    }
    // A vendor's page is the only thing that makes a number verified or promotional: the number (or its entry) names
    // that page and the day it was read, so a reader can check it and the provenance report can say how old it is.
    const sourceUrl = ownSource ?? entry.sourceUrl?.trim()
    const checkedAt = own?.checkedAt ?? entry.checkedAt
    if (provenance !== "inferred") {
      if (sourceUrl === undefined || checkedAt === undefined) {
        problem(
          field,
          `a ${provenance} price needs sourceUrl and checkedAt (the vendor page that states it, and the day it was read); otherwise mark it inferred with derivedFrom`,
          model
        )
      } else if (!isFirstParty(sourceUrl)) {
        problem(
          field,
          `a ${provenance} price needs a first-party source (${firstPartyDomains.join(", ")}), not ${sourceUrl}; mark it inferred`,
          model
        )
      }
    }
    if (provenance === "promotional" && own?.until === undefined) {
      problem(field, "a promotional price needs until: the day the vendor says the discount ends", model)
    }
    return {
      usd18: (typeof raw === "bigint" ? raw : raw.usd) as Usd18,
      provenance,
      sourceUrl: ownSource ?? null,
      checkedAt: ownSource === undefined ? null : (own?.checkedAt ?? null),
      derivedFrom,
      until: own?.until ?? null,
      regular18: (own?.regular ?? null) as Usd18 | null
    }
  }

  const modelIds = new Set<string>()
  const models = card.models.map((model): ModelCard => {
    const id = model.id
    if (!id.startsWith(`${card.provider.vendorSlug}/`)) problem("id", `must start with "${card.provider.vendorSlug}/"`, id)
    if (modelIds.has(id)) problem("id", "declared twice", id)
    modelIds.add(id)
    if (!familyKeys.has(model.family)) problem("family", `"${model.family}" is not a family of this card`, id)
    if (model.retiredAt !== undefined && model.retiredAt < model.releasedAt) problem("retiredAt", "is before releasedAt", id)
    const inputOnly = model.kind === "embedding"
    const embedding = embeddingTraitsOf(model.kind, model, (field, text) => problem(field, text, id))
    if (inputOnly && model.reasoning) problem("reasoning", "an embedding model does not reason: write reasoning: false", id)

    const prices = model.prices.map((entry, i): PricePoint => {
      const at = (name: string) => `prices[${i}].${name}`
      if (i > 0 && entry.from <= model.prices[i - 1]!.from) {
        problem(at("from"), "price entries must be in strictly increasing date order", id)
      }
      if (inputOnly) checkInputOnlyEntry(entry, (field, text) => problem(at(field), text, id))
      else if (entry.output === undefined) problem(at("output"), "is missing: every model but an embedding model has an output price", id)
      const optional = (name: "cachedInput" | "cacheWrite5m" | "cacheWrite1h" | "reasoningOutput") => {
        const value = entry[name]
        return value === undefined ? null : mark(value, entry, at(name), id)
      }
      const tiers = (entry.contextTiers ?? []).map((tier, t) => ({
        fromInputTokens: tier.fromInputTokens,
        input: mark(tier.input, entry, at(`contextTiers[${t}].input`), id, false),
        output: mark(tier.output, entry, at(`contextTiers[${t}].output`), id, false)
      }))
      tiers.forEach((tier, t) => {
        if (t > 0 && tier.fromInputTokens <= tiers[t - 1]!.fromInputTokens) {
          problem(at(`contextTiers[${t}].fromInputTokens`), "tiers must be in strictly increasing order of fromInputTokens", id)
        }
      })
      return {
        effectiveFrom: entry.from,
        sourceUrl: (entry.sourceUrl ?? card.provider.pricingUrl).trim(),
        checkedAt: entry.checkedAt ?? null,
        note: entry.note ?? null,
        input: mark(entry.input, entry, at("input"), id),
        output: entry.output === undefined ? null : mark(entry.output, entry, at("output"), id),
        cachedInput: optional("cachedInput"),
        cacheWrite5m: optional("cacheWrite5m"),
        cacheWrite1h: optional("cacheWrite1h"),
        reasoningOutput: optional("reasoningOutput"),
        contextTiers: tiers
      }
    })
    return {
      id,
      providerKey,
      family: model.family,
      displayName: model.displayName,
      sdkId: model.sdkId,
      releasedAt: model.releasedAt,
      availability: model.availability,
      kind: model.kind,
      reasoning: model.reasoning,
      maxInputTokens: model.maxInputTokens ?? null,
      retiredAt: model.retiredAt ?? null,
      embedding,
      prices
    }
  })

  if (problems.length > 0) return Either.left(problems)
  return Either.right({
    source,
    provider: {
      key: card.provider.key,
      name: card.provider.name,
      vendorSlug: card.provider.vendorSlug,
      pricingUrl: card.provider.pricingUrl.trim()
    },
    families: card.families.map((family) => ({
      key: family.key,
      providerKey,
      name: family.name,
      description: family.description ?? null
    })),
    models
  })
}
