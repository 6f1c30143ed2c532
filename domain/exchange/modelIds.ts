/**
 * The model ids clients send to the exchange (DESIGN.md 10, "Model ids"): besides the catalog's own spellings, the
 * vendor's API ids, read off the price cards. Pure; built once per oracle snapshot (routing.ts `makeRoutableCatalog`),
 * so a request costs a few map lookups.
 *
 * Rules (all case-insensitive, surrounding spaces ignored):
 * 1. The catalog's spellings come first and keep the oracle's rules (keys.ts): `<vendor>/<model>` or the bare name, an
 *    unknown vendor or a model under the wrong vendor refused. A name that is a catalog name is never read as an alias,
 *    so no alias can take a catalog name from its model (not even from one that is not routable here).
 * 2. Then a card's `sdkId`, exactly (`claude-sonnet-4-5-20250929`, `gpt-4.1-nano`, `MiniMax-M2.5`).
 * 3. Then the aliases derived from a card: its sdkId without a date suffix (`claude-sonnet-4-5` for
 *    `claude-sonnet-4-5-20250929`) and its bare name with dots as dashes (`claude-sonnet-4-5` for `claude-sonnet-4.5`).
 * 4. A client id that names nothing as sent and ends in a date (`-YYYYMMDD`, `-YYYY-MM-DD`) or in `-latest` is tried
 *    again without it, on 1-3. A date names a snapshot: when the card's own sdkId carries a different date, the client
 *    asked for another snapshot than the one the catalog prices, and is refused rather than served the card's.
 *    `-latest` is taken only where its stem names one model: Anthropic's `claude-3-7-sonnet-latest` pointed at the
 *    newest snapshot of that one model, whereas Mistral's `mistral-large-latest` and Google's `gemini-flash-latest`
 *    move across versions (their stems name no catalog model), and OpenAI's `chatgpt-4o-latest` is a model of its own.
 * 5. `<vendor>/` may precede any of these (`anthropic/claude-sonnet-4-5-20250929`); the model must be that vendor's.
 * 6. Ambiguity is never settled by picking one: the first of 1-3 that any model claims decides (a catalog name over an
 *    sdkId, an sdkId over a derived alias). Among the models claiming it, a retired one yields to a live one (vendors
 *    move an alias to the model that replaced it: DeepSeek's `deepseek-chat` named five models in turn). Two or more
 *    left: the id resolves to nothing, and the refusal names them.
 * 7. An id that names nothing is refused as before; `suggest` gives the closest routable models by edit distance over
 *    their bare names, sdkIds and derived aliases, for the refusal to name.
 */
import { type KeyResolution, makeKeyIndex } from "../oracle/keys.ts"

/** What the index needs of a catalog model. */
export interface ModelIdSource {
  /** The catalog key, `<vendor>/<model>`. */
  readonly key: string
  /** The vendor's own API id (the card's `sdkId`). */
  readonly sdkId: string
  /** Retired at the snapshot's time: its claim on an alias yields to a live model's. */
  readonly retired: boolean
}

export interface ModelIdIndex {
  /** Resolves a client's id, answering only for the routable models (another catalog model is NotFound). */
  readonly resolve: (name: string) => KeyResolution
  /** The same resolution over the whole catalog. */
  readonly resolveInCatalog: (name: string) => KeyResolution
  /** The closest routable catalog keys to an id that resolved to nothing, closest first (at most `limit`). */
  readonly suggest: (name: string, limit?: number) => ReadonlyArray<string>
  /** The vendor ids that resolve to a model besides its catalog spellings (its sdkId and derived aliases), sorted. */
  readonly aliasesOf: (modelKey: string) => ReadonlyArray<string>
}

const COMPACT_DATE = /-((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/
const DASHED_DATE = /-((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/
const LATEST = "-latest"

/** An id's trailing date, as `YYYYMMDD` whichever way it was written, and what precedes it. */
export const splitDate = (id: string): { readonly stem: string; readonly date: string } | undefined => {
  const match = COMPACT_DATE.exec(id) ?? DASHED_DATE.exec(id)
  if (match === null || match.index === 0) return undefined
  return { stem: id.slice(0, match.index), date: `${match[1]}${match[2]}${match[3]}` }
}

const vendorOf = (key: string) => key.slice(0, key.indexOf("/")).toLowerCase()
const bareOf = (key: string) => key.slice(key.indexOf("/") + 1).toLowerCase()

const add = (index: Map<string, Array<string>>, name: string, key: string) => {
  const keys = index.get(name)
  if (keys === undefined) index.set(name, [key])
  else if (!keys.includes(key)) keys.push(key)
}

/**
 * Levenshtein distance, or `max + 1` as soon as it is certain to exceed `max` (suggestions only care about close
 * names, and the bound keeps a long unknown id cheap).
 */
const distance = (a: string, b: string, max: number): number => {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      current.push(value)
      if (value < rowMin) rowMin = value
    }
    if (rowMin > max) return max + 1
    previous = current
  }
  return previous[b.length]!
}

/** How far a suggestion may be from what was sent: two edits, or 40% of its length for longer ids. */
const suggestionBound = (id: string) => Math.max(2, Math.floor(id.length * 0.4))

/**
 * `vendors`: every vendor slug the catalog knows; `catalog`: every catalog model; `routable`: the keys the exchange can
 * serve (the rest resolve to NotFound on `resolve`, so the caller can tell "not routable here" from "unknown").
 */
export const makeModelIdIndex = (vendors: Iterable<string>, catalog: ReadonlyArray<ModelIdSource>, routable: Iterable<string>): ModelIdIndex => {
  const vendorList = [...vendors]
  const vendorSet = new Set(vendorList.map((v) => v.toLowerCase()))
  const catalogKeys = catalog.map((m) => m.key)
  const routableKeys = new Set(routable)
  const retired = new Set(catalog.filter((m) => m.retired).map((m) => m.key))
  const sdkIdOf = new Map(catalog.map((m) => [m.key, m.sdkId.trim().toLowerCase()]))

  // The three kinds of claim, in the order they decide (rule 6).
  const byBare = new Map<string, Array<string>>()
  const bySdkId = new Map<string, Array<string>>()
  const byDerived = new Map<string, Array<string>>()
  const derivedOf = new Map<string, ReadonlyArray<string>>()
  for (const model of catalog) {
    const bare = bareOf(model.key)
    const sdkId = sdkIdOf.get(model.key)!
    add(byBare, bare, model.key)
    add(bySdkId, sdkId, model.key)
    const derived = [splitDate(sdkId)?.stem, bare.replaceAll(".", "-")].filter(
      (alias): alias is string => alias !== undefined && alias !== bare && alias !== sdkId
    )
    derivedOf.set(model.key, [...new Set(derived)])
    for (const alias of derived) add(byDerived, alias, model.key)
  }

  const claimsOf = (id: string): ReadonlyArray<string> => byBare.get(id) ?? bySdkId.get(id) ?? byDerived.get(id) ?? []

  const catalogNames = makeKeyIndex(vendorList, catalogKeys)
  const routableNames = makeKeyIndex(vendorList, routableKeys, catalogKeys)

  /** Rules 2-6 over one id, the vendor prefix (known) already split off; a stripped form is tried on rule 1's names too. */
  const lookup = (id: string, vendor: string | undefined): KeyResolution | undefined => {
    const forms: Array<{ readonly id: string; readonly date: string | undefined }> = [{ id, date: undefined }]
    const dated = splitDate(id)
    if (dated !== undefined) forms.push({ id: dated.stem, date: dated.date })
    else if (id.endsWith(LATEST) && id.length > LATEST.length) forms.push({ id: id.slice(0, -LATEST.length), date: undefined })
    for (const form of forms) {
      const claims = claimsOf(form.id)
      if (claims.length === 0) continue
      const ofVendor = vendor === undefined ? claims : claims.filter((key) => vendorOf(key) === vendor)
      if (ofVendor.length === 0) {
        return { _tag: "Invalid", message: `"${form.id}" is not a ${vendor} model; did you mean ${claims.join(" or ")}?` }
      }
      const live = ofVendor.filter((key) => !retired.has(key))
      const left = live.length > 0 ? live : ofVendor
      if (left.length > 1) {
        return { _tag: "Invalid", message: `"${form.id}" names more than one catalog model (${left.join(", ")}); name one of them` }
      }
      const key = left[0]!
      const cardDate = splitDate(sdkIdOf.get(key)!)?.date
      if (form.date !== undefined && cardDate !== undefined && cardDate !== form.date) {
        return {
          _tag: "Invalid",
          message: `"${id}" is not the snapshot the catalog prices: ${key} is ${sdkIdOf.get(key)}`
        }
      }
      return { _tag: "Found", modelKey: key }
    }
    return undefined
  }

  const suggestible = catalog
    .filter((m) => routableKeys.has(m.key))
    .map((m) => ({ key: m.key, names: [bareOf(m.key), sdkIdOf.get(m.key)!, ...derivedOf.get(m.key)!] }))

  const suggest = (raw: string, limit = 3): ReadonlyArray<string> => {
    const key = raw.trim().toLowerCase()
    const id = key.slice(key.indexOf("/") + 1)
    if (id === "") return []
    const stripped = splitDate(id)?.stem ?? (id.endsWith(LATEST) ? id.slice(0, -LATEST.length) : undefined)
    const forms = stripped === undefined || stripped === "" ? [id] : [id, stripped]
    const bound = suggestionBound(id)
    return suggestible
      .map((m) => ({ key: m.key, d: Math.min(...forms.flatMap((form) => m.names.map((name) => distance(form, name, bound)))) }))
      .filter((m) => m.d <= bound)
      .sort((a, b) => a.d - b.d || a.key.localeCompare(b.key))
      .slice(0, limit)
      .map((m) => m.key)
  }

  const resolveAgainst = (names: ReturnType<typeof makeKeyIndex>, answerable: (key: string) => boolean) => (raw: string): KeyResolution => {
    const named = names.resolve(raw)
    if (named._tag === "Found") return named
    if (named._tag === "Invalid") {
      // A mistyped vendor (`antropic/...`): the rest of the id may still be close to a model worth naming.
      const key = raw.trim().toLowerCase()
      const slash = key.indexOf("/")
      const close = slash >= 0 && !vendorSet.has(key.slice(0, slash)) ? suggest(raw) : []
      return close.length === 0 ? named : { _tag: "Invalid", message: `${named.message}; did you mean ${close.join(", ")}?` }
    }
    // A catalog name is decided by the catalog's rules, routable or not (rule 1).
    if (catalogNames.resolve(raw)._tag !== "NotFound") return named
    const key = raw.trim().toLowerCase()
    const slash = key.indexOf("/")
    // Past the catalog's rules, a prefix names a known vendor (an unknown one was refused above).
    const found = slash >= 0 ? lookup(key.slice(slash + 1), key.slice(0, slash)) : lookup(key, undefined)
    if (found === undefined) return named
    if (found._tag === "Found" && !answerable(found.modelKey)) return { _tag: "NotFound", message: `no model ${key}` }
    return found
  }

  const resolveInCatalog = resolveAgainst(catalogNames, () => true)

  // Only the ids that do reach the model (an alias lost to a catalog name or to another model is not one).
  const aliases = new Map<string, ReadonlyArray<string>>()
  for (const model of catalog) {
    const candidates = new Set([sdkIdOf.get(model.key)!, ...derivedOf.get(model.key)!])
    candidates.delete(bareOf(model.key))
    aliases.set(
      model.key,
      [...candidates].filter((alias) => {
        const found = resolveInCatalog(alias)
        return found._tag === "Found" && found.modelKey === model.key
      }).sort()
    )
  }

  return {
    resolve: resolveAgainst(routableNames, (key) => routableKeys.has(key)),
    resolveInCatalog,
    suggest,
    aliasesOf: (modelKey) => aliases.get(modelKey) ?? []
  }
}
