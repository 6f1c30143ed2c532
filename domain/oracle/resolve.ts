/**
 * Name resolution (SPEC oracle behaviours 8-9): turns whatever a client calls a model into the catalog's canonical
 * key. It normalizes the name (version dashes to dots, bracket annotations and trailing date suffixes removed),
 * then matches the catalog, narrowed to the vendor when one is named. It reads only the name.
 */
import { chatListings, latestRevision, type OracleInputs } from "./inputs.ts"
import { num } from "./numbers.ts"
import type { ResolveResult } from "./schemas.ts"
import { cacheBlock, providerOf, reasoningBlock } from "./views.ts"

export type ResolveOutcome =
  | { readonly _tag: "Resolved"; readonly modelKey: string }
  | { readonly _tag: "OffBasket"; readonly normalizedKey: string }
  | { readonly _tag: "UnknownVendor"; readonly vendor: string }

/** `claude-3-5-haiku-20241022 (latest)` -> `claude-3.5-haiku`; `gpt-4.1-2025-04-14` -> `gpt-4.1`. */
export const normalizeModelName = (name: string): string =>
  name
    .trim()
    .toLowerCase()
    .replace(/\s*[([{][^)\]}]*[)\]}]\s*/g, "")
    .replace(/[-_@:](\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{2}-\d{2})$/, "")
    .replace(/(\d)-(?=\d)/g, "$1.")
    .trim()

export const makeResolver = (input: {
  readonly vendors: ReadonlyMap<string, string>
  readonly modelKeys: Iterable<string>
}) => {
  const keys = [...input.modelKeys]
  const byBare = new Map<string, Array<string>>()
  for (const key of keys) {
    const bare = normalizeModelName(key.slice(key.indexOf("/") + 1))
    byBare.set(bare, [...(byBare.get(bare) ?? []), key])
  }
  return (raw: string): ResolveOutcome => {
    const text = raw.trim()
    const slash = text.indexOf("/")
    const vendor = slash >= 0 ? text.slice(0, slash).trim().toLowerCase() : null
    const name = normalizeModelName(slash >= 0 ? text.slice(slash + 1) : text)
    if (vendor !== null && !input.vendors.has(vendor)) return { _tag: "UnknownVendor", vendor }
    const candidates = (byBare.get(name) ?? []).filter((key) => vendor === null || key.startsWith(`${vendor}/`))
    if (candidates.length >= 1) return { _tag: "Resolved", modelKey: candidates.sort()[0]! }
    return { _tag: "OffBasket", normalizedKey: vendor === null ? name : `${vendor}/${name}` }
  }
}

/** The answer for one name; `unknownVendor` is set when the name's vendor prefix names no vendor we know. */
export interface ResolveAnswer {
  readonly result: ResolveResult
  readonly unknownVendor: string | null
}

const offBasket = (name: string, resolvedKey: string, unknownVendor: string | null): ResolveAnswer => ({
  result: {
    inputKey: name,
    resolvedKey,
    family: null,
    provider: null,
    priceSource: "off-basket",
    prices: null,
    cache: null,
    reasoning: null,
    inBasket: false
  },
  unknownVendor
})

/**
 * The resolve rule of SPEC oracle behaviour 8: a name resolved to a priced model carries the latest attested prices
 * when the model is in the basket ('oracle-basket'), else its live catalog prices ('oracle-catalog'); marks,
 * cache and reasoning blocks come from the live catalog. Anything else is 'off-basket' under its normalized key.
 * In a batch an unknown vendor is one more off-basket entry; alone it is refused (the caller decides).
 * Built once per snapshot; each call is a few map lookups.
 */
export const makeNameResolution = (inputs: OracleInputs): ((name: string) => ResolveAnswer) => {
  // Chat models only: a resolve answer quotes input and output prices, which an embedding model does not have.
  const listings = new Map(chatListings(inputs.catalog).map((l) => [l.card.id, l]))
  const attested = new Map((latestRevision(inputs)?.manifest?.models ?? []).map((m) => [m.modelKey, m]))
  const resolve = makeResolver({
    vendors: new Map(inputs.providers.map((p) => [p.vendorSlug, p.key])),
    modelKeys: listings.keys()
  })
  return (name) => {
    const outcome = resolve(name)
    if (outcome._tag === "UnknownVendor") return offBasket(name, name.trim().toLowerCase(), outcome.vendor)
    if (outcome._tag === "OffBasket") return offBasket(name, outcome.normalizedKey, null)
    const listing = listings.get(outcome.modelKey)!
    const member = attested.get(outcome.modelKey)
    return {
      unknownVendor: null,
      result: {
        inputKey: name,
        resolvedKey: outcome.modelKey,
        family: listing.card.family,
        provider: providerOf(inputs.providers, listing.card.providerKey),
        priceSource: member === undefined ? "oracle-catalog" : "oracle-basket",
        prices: {
          inputUsdPerMillion: num(member === undefined ? listing.price.input.usd18 : BigInt(member.inputPrice)),
          outputUsdPerMillion: num(member === undefined ? listing.price.output.usd18 : BigInt(member.outputPrice)),
          provenance: { input: listing.price.input.provenance, output: listing.price.output.provenance }
        },
        cache: cacheBlock(listing.price),
        reasoning: reasoningBlock(listing),
        inBasket: member !== undefined
      }
    }
  }
}
