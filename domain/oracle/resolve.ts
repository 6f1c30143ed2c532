/**
 * Name resolution (SPEC oracle behaviours 8-9): turns whatever a client calls a model into the catalog's canonical
 * key. It normalizes the name (version dashes to dots, bracket annotations and trailing date suffixes removed),
 * then matches the catalog, narrowed to the vendor when one is named. It reads only the name.
 */
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
