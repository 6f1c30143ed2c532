/**
 * Revision manifests and their hashes (DESIGN.md section 5). The manifest is content-addressed by
 * metadataHash = keccak256(JCS(manifest)); contentHash covers only what prices the index, so a display-only
 * correction moves metadataHash and leaves contentHash alone.
 */
import canonicalize from "canonicalize"
import { keccak256, stringToBytes, type Hex } from "viem"
import { REFERENCE_WORKLOAD, type Usd18 } from "../money.ts"

export {
  Manifest,
  MANIFEST_SCHEMA_VERSION,
  ManifestModel,
  ReferenceWorkload
} from "./schemas.ts"
import { Manifest, MANIFEST_SCHEMA_VERSION } from "./schemas.ts"

export interface ManifestMember {
  readonly modelKey: string
  readonly family: string
  readonly inputPrice18: Usd18
  readonly outputPrice18: Usd18
  readonly displayName: string
  readonly providerKey: string
  readonly sdkId: string
}

const byModelKey = (a: { modelKey: string }, b: { modelKey: string }) =>
  a.modelKey < b.modelKey ? -1 : a.modelKey > b.modelKey ? 1 : 0

export const buildManifest = (input: {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly members: ReadonlyArray<ManifestMember>
}): Manifest => ({
  schemaVersion: MANIFEST_SCHEMA_VERSION,
  revisionVersion: input.revisionVersion,
  methodologyVersion: input.methodologyVersion,
  referenceWorkload: { inputTokens: REFERENCE_WORKLOAD.inputTokens, outputTokens: REFERENCE_WORKLOAD.outputTokens },
  models: [...input.members].sort(byModelKey).map((m) => ({
    modelKey: m.modelKey,
    family: m.family,
    inputPrice: m.inputPrice18.toString(),
    outputPrice: m.outputPrice18.toString(),
    displayName: m.displayName,
    providerKey: m.providerKey,
    sdkId: m.sdkId
  }))
})

/** RFC 8785 canonical JSON. */
export const jcs = (value: unknown): string => {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError("value has no JSON form")
  return text
}

const hashJson = (value: unknown): Hex => keccak256(stringToBytes(jcs(value)))

export const metadataHash = (manifest: Manifest): Hex => hashJson(manifest)

/** The projection that prices the index: methodology, and per model its key, family and two prices, in manifest order. */
export const contentProjection = (manifest: Manifest) => ({
  methodologyVersion: manifest.methodologyVersion,
  models: manifest.models.map(({ family, inputPrice, modelKey, outputPrice }) => ({ modelKey, family, inputPrice, outputPrice }))
})

export const contentHash = (manifest: Manifest): Hex => hashJson(contentProjection(manifest))

/** The revision record's `basket`: `{schemaVersion, models}` of the manifest. */
export const basketOf = (manifest: Manifest) => ({ schemaVersion: manifest.schemaVersion, models: manifest.models })
