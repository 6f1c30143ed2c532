/**
 * Everything a keyed oracle read looks up, built once per snapshot rather than per request: which model a path key
 * names (SPEC oracle behaviour 1) among the basket members and ex-members (`/models/{key}`) or among every model the
 * oracle tracks (`price-at`, `price-history`: in the catalog now, or in any manifest), with the family and price
 * history those reads need, and the name resolution of `/resolve`.
 */
import type { ConfirmedRevision, OracleInputs, StoredPoint } from "./inputs.ts"
import { makeKeyIndex } from "./keys.ts"
import { makeNameResolution, type ResolveAnswer } from "./resolve.ts"
import type { ModelEntry } from "./schemas.ts"

export interface TrackedModel {
  readonly modelKey: string
  /** The family of its most recent basket appearance, else its catalog family. */
  readonly family: string | null
  readonly history: ReadonlyArray<StoredPoint>
  /** Whether any confirmed manifest attests it. */
  readonly everAttested: boolean
}

/** What a path key named: the thing, a refusal of the key itself (422), or nothing (404). */
export type Lookup<A> =
  | { readonly _tag: "Found"; readonly value: A }
  | { readonly _tag: "Invalid"; readonly message: string }
  | { readonly _tag: "NotFound"; readonly message: string }

export interface OracleLookups {
  readonly model: (key: string) => Lookup<ModelEntry>
  /** Any model of the live catalog, by canonical key or unambiguous bare name: its canonical key. */
  readonly catalogModel: (key: string) => Lookup<string>
  readonly tracked: (key: string) => Lookup<TrackedModel>
  readonly resolveName: (name: string) => ResolveAnswer
}

export const buildLookups = (
  inputs: OracleInputs,
  models: ReadonlyArray<ModelEntry>,
  histories: ReadonlyMap<string, { readonly family: string; readonly prices: ReadonlyArray<StoredPoint> }>
): OracleLookups => {
  const vendors = inputs.providers.map((p) => p.vendorSlug)
  const catalogKeys = inputs.catalog.map((l) => l.card.id)
  const entries = new Map(models.map((m) => [m.id, m]))
  const modelIndex = makeKeyIndex(vendors, entries.keys(), catalogKeys)
  const catalogIndex = makeKeyIndex(vendors, catalogKeys)

  // The latest manifest naming each model decides its family.
  const lastAttestation = new Map<string, ConfirmedRevision>()
  for (const revision of inputs.revisions) for (const m of revision.manifest?.models ?? []) lastAttestation.set(m.modelKey, revision)
  // An embedding model is priced per input token only: never attested, and not served by price-at or price-history
  // (their points quote an output price); its dated prices are in the catalog's `embeddingModels`.
  const embeddingKeys = inputs.catalog.filter((l) => l.card.kind === "embedding").map((l) => l.card.id)
  const embeddingSet = new Set(embeddingKeys)
  const trackedKeys = new Set([...[...histories.keys()].filter((key) => !embeddingSet.has(key)), ...lastAttestation.keys()])
  const trackedIndex = makeKeyIndex(vendors, trackedKeys)
  const embeddingIndex = makeKeyIndex(vendors, embeddingKeys)
  const trackedModel = (modelKey: string): TrackedModel => {
    const attested = lastAttestation.get(modelKey)?.manifest?.models.find((m) => m.modelKey === modelKey)
    return {
      modelKey,
      family: attested?.family ?? histories.get(modelKey)?.family ?? null,
      history: histories.get(modelKey)?.prices ?? [],
      everAttested: attested !== undefined
    }
  }
  const tracked = new Map([...trackedKeys].map((key) => [key, trackedModel(key)]))

  const lookupIn =
    <A>(index: ReturnType<typeof makeKeyIndex>, values: ReadonlyMap<string, A>) =>
    (key: string): Lookup<A> => {
      const found = index.resolve(key)
      return found._tag === "Found" ? { _tag: "Found", value: values.get(found.modelKey)! } : found
    }

  return {
    model: lookupIn(modelIndex, entries),
    catalogModel: lookupIn(catalogIndex, new Map(catalogKeys.map((key) => [key, key]))),
    tracked: (key) => {
      const found = lookupIn(trackedIndex, tracked)(key)
      const embedding = found._tag === "NotFound" ? embeddingIndex.resolve(key) : undefined
      return embedding?._tag === "Found"
        ? {
            _tag: "NotFound",
            message: `${embedding.modelKey} is an embedding model, priced per input token only: its price history is in /v1/oracle/catalog (embeddingModels[].priceHistory)`
          }
        : found
    },
    resolveName: makeNameResolution(inputs)
  }
}
