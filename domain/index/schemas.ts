/**
 * The index's wire shapes (the manifest, a reconstitution change), apart from the hashing and building of
 * manifest.ts and revision.ts: the oracle's API definitions carry them to the browser, which must not download a
 * keccak implementation to read a revision.
 */
import { Schema } from "effect"

export const MANIFEST_SCHEMA_VERSION = 1

/**
 * The one manifest schema: the oracle serves manifests through it, and stored ones are decoded through it, so a
 * stored manifest that is not one fails loudly instead of being cast into shape.
 */
const Usd18Digits = Schema.String.pipe(Schema.pattern(/^[0-9]+$/)).annotations({
  description: "USD per million tokens scaled by 10^18, as digits"
})

export const ReferenceWorkload = Schema.Struct({ inputTokens: Schema.Int, outputTokens: Schema.Int })

export const ManifestModel = Schema.Struct({
  modelKey: Schema.String,
  family: Schema.String,
  inputPrice: Usd18Digits,
  outputPrice: Usd18Digits,
  displayName: Schema.String,
  providerKey: Schema.String,
  sdkId: Schema.String
})
export type ManifestModel = typeof ManifestModel.Type

export const Manifest = Schema.Struct({
  schemaVersion: Schema.Int,
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  referenceWorkload: ReferenceWorkload,
  models: Schema.Array(ManifestModel)
})
export type Manifest = typeof Manifest.Type

/**
 * One change of a revision's basket, as the reconstitution log stores and serves it. SPEC names ModelAdded and
 * ModelRemoved; a member replaced by a newer version is logged as both (the old one removed, the new one added),
 * and a member whose price changed as PriceChanged.
 */
export const ReconstitutionChange = Schema.Struct({
  type: Schema.Literal("ModelAdded", "ModelRemoved", "PriceChanged"),
  modelKey: Schema.String,
  description: Schema.String
})
export type ReconstitutionChange = typeof ReconstitutionChange.Type
