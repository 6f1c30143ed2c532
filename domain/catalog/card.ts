/**
 * Price cards (data/README.md): the raw file shape, and its check. A card that fails is reported with the
 * file, the model and the field; nothing of it is used.
 */
import { Either, ParseResult, Schema } from "effect"
import { DateOrInstantParam } from "../dates.ts"
import { parseUsd18Either, type Usd18 } from "../money.ts"

export const Provenance = Schema.Literal("verified", "inferred", "promotional")
export type Provenance = typeof Provenance.Type

const MARK_STRENGTH: Record<Provenance, number> = { promotional: 0, inferred: 1, verified: 2 }

/** The weaker of two marks (promotional < inferred < verified): what one figure quoting both numbers can claim. */
export const weakerMark = (a: Provenance, b: Provenance): Provenance => (MARK_STRENGTH[a] <= MARK_STRENGTH[b] ? a : b)

export const PRICE_COMPONENTS = ["input", "output", "cachedInput", "cacheWrite5m", "cacheWrite1h", "reasoningOutput"] as const
export type PriceComponent = (typeof PRICE_COMPONENTS)[number]

export const Availability = Schema.Literal("ga", "preview")
export const ModelKind = Schema.Literal("text", "embedding", "image", "audio", "video", "moderation", "other")

// ---------------------------------------------------------------------------------------------------------
// Scalars as they come from a failsafe YAML read: text, checked and converted here.

/** A USD amount written as a plain decimal. */
export const UsdText = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (text, _, ast) =>
    Either.match(parseUsd18Either(text.trim()), {
      onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, text, message)),
      onRight: (value) => ParseResult.succeed(value as bigint)
    }),
  encode: (value) => ParseResult.succeed(value.toString())
}).annotations({ identifier: "UsdPerMillion" })

/** A date (midnight UTC) or an instant with its offset, read as every date of this service is (domain/dates.ts). */
export const DateText = Schema.compose(Schema.Trim, DateOrInstantParam)

export const PositiveIntText = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (text, _, ast) =>
    /^[1-9][0-9]{0,15}$/.test(text.trim())
      ? ParseResult.succeed(Number(text.trim()))
      : ParseResult.fail(new ParseResult.Type(ast, text, `"${text}" is not a positive integer`)),
  encode: (n) => ParseResult.succeed(String(n))
})

export const BooleanText = Schema.transformOrFail(Schema.String, Schema.Boolean, {
  strict: true,
  decode: (text, _, ast) =>
    text.trim() === "true"
      ? ParseResult.succeed(true)
      : text.trim() === "false"
        ? ParseResult.succeed(false)
        : ParseResult.fail(new ParseResult.Type(ast, text, `"${text}" is not true or false`)),
  encode: (b) => ParseResult.succeed(String(b))
})

const HttpsUrl = Schema.String.pipe(
  Schema.filter((text) => /^https:\/\/[^\s/]+\.[^\s]+$/.test(text.trim()) || `"${text}" is not an https URL`)
)

const Slug = (what: string, pattern: RegExp) =>
  Schema.String.pipe(Schema.filter((text) => pattern.test(text) || `"${text}" is not a valid ${what}`))

export const ProviderKey = Slug("provider key", /^[a-z][a-z0-9-]{1,31}$/)
export const FamilyKey = Slug("family key (<provider>.<product-line>)", /^[a-z][a-z0-9-]{1,31}\.[a-z0-9][a-z0-9.-]{0,63}$/)
export const ModelId = Slug("model id (<vendor>/<model>, lower case)", /^[a-z0-9][a-z0-9-]{0,31}\/[a-z0-9][a-z0-9._:-]{0,95}$/)

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
  output: PriceField,
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
  readonly output: MarkedPrice
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
  readonly maxInputTokens: number | null
  readonly retiredAt: Date | null
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

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url.trim()).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/** The last two labels of a URL's host: platform.openai.com -> openai.com, docs.z.ai -> z.ai. */
const registrableDomain = (url: string): string => (hostOf(url) ?? "").split(".").slice(-2).join(".")

type RawPrice = typeof PriceField.Type
type RawEntry = typeof RawPriceEntry.Type

const fieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, segment) => (typeof segment === "number" ? `${text}[${segment}]` : text === "" ? String(segment) : `${text}.${String(segment)}`),
    ""
  )

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

    const prices = model.prices.map((entry, i): PricePoint => {
      const at = (name: string) => `prices[${i}].${name}`
      if (i > 0 && entry.from <= model.prices[i - 1]!.from) {
        problem(at("from"), "price entries must be in strictly increasing date order", id)
      }
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
        output: mark(entry.output, entry, at("output"), id),
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
