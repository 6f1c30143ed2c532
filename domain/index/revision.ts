/**
 * A revision as the index publishes it: the basket governance proposed, turned into a manifest with its SCU and
 * hashes, and the reconstitution-log changes that explain it.
 */
import { Data, Either, ParseResult, Schema } from "effect"
import type { BasketChange, BasketMember } from "../catalog/governance.ts"
import type { Usd18 } from "../money.ts"
import { buildManifest, contentHash, jcs, Manifest, type ManifestMember, metadataHash } from "./manifest.ts"
import { scu18 } from "./scu.ts"

/** The methodology every revision is produced with today (SPEC "Price index" 10). */
export const CURRENT_METHODOLOGY_VERSION = 1

export { ReconstitutionChange } from "./schemas.ts"
import type { ReconstitutionChange } from "./schemas.ts"
export type ReconstitutionChangeType = ReconstitutionChange["type"]

export interface RevisionDraft {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly manifest: Manifest
  readonly manifestJcs: string
  readonly metadataHash: `0x${string}`
  readonly contentHash: `0x${string}`
  readonly scu18: Usd18
  readonly changes: ReadonlyArray<ReconstitutionChange>
  readonly summary: string
}

export const reconstitutionChanges = (changes: ReadonlyArray<BasketChange>): ReadonlyArray<ReconstitutionChange> =>
  changes.flatMap((change): Array<ReconstitutionChange> => {
    switch (change.type) {
      case "ModelAdded":
      case "ModelRemoved":
      case "PriceChanged":
        return [{ type: change.type, modelKey: change.modelKey, description: change.description }]
      case "ModelReplaced":
        return [
          { type: "ModelRemoved", modelKey: change.previousModelKey!, description: change.description },
          { type: "ModelAdded", modelKey: change.modelKey, description: change.description }
        ]
    }
  })

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

export const summarize = (revisionVersion: number, members: number, changes: ReadonlyArray<BasketChange>): string => {
  if (revisionVersion === 1) return `Genesis basket: ${members} ${members === 1 ? "family" : "families"}`
  const count = (type: BasketChange["type"]) => changes.filter((c) => c.type === type).length
  const parts = [
    [count("ModelReplaced"), "version change"],
    [count("ModelAdded"), "family added"],
    [count("ModelRemoved"), "family removed"],
    [count("PriceChanged"), "price change"]
  ] as const
  return parts
    .filter(([n]) => n > 0)
    .map(([n, word]) => (word === "family added" ? `${n} ${n === 1 ? "family" : "families"} added` : word === "family removed" ? `${n} ${n === 1 ? "family" : "families"} removed` : plural(n, word)))
    .join(", ")
}

export class EmptyBasket extends Data.TaggedError("EmptyBasket")<{ readonly message: string }> {}

/** Builds revision `revisionVersion` from the basket members and the changes that led to it. */
export const draftRevision = (input: {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly members: ReadonlyArray<ManifestMember>
  readonly changes: ReadonlyArray<BasketChange>
}): RevisionDraft => {
  if (input.members.length === 0) throw new EmptyBasket({ message: "a revision needs at least one basket member" })
  const manifest = buildManifest({
    revisionVersion: input.revisionVersion,
    methodologyVersion: input.methodologyVersion,
    members: input.members
  })
  return {
    revisionVersion: input.revisionVersion,
    methodologyVersion: input.methodologyVersion,
    manifest,
    manifestJcs: jcs(manifest),
    metadataHash: metadataHash(manifest),
    contentHash: contentHash(manifest),
    scu18: scu18(input.members),
    changes: reconstitutionChanges(input.changes),
    summary: summarize(input.revisionVersion, input.members.length, input.changes)
  }
}

/** The members a manifest attests, as governance compares them. */
export const membersOfManifest = (manifest: Manifest, publishedAt: Date): ReadonlyArray<BasketMember> =>
  manifest.models.map((m) => ({
    family: m.family,
    modelKey: m.modelKey,
    displayName: m.displayName,
    providerKey: m.providerKey,
    sdkId: m.sdkId,
    inputPrice18: BigInt(m.inputPrice) as Usd18,
    outputPrice18: BigInt(m.outputPrice) as Usd18,
    priceFrom: publishedAt
  }))

export interface AnchoredHeader {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly scuUsd18: bigint
  readonly contentHash: string
  readonly metadataHash: string
  readonly publishedAt: Date
}

const decodeManifestJson = Schema.decodeUnknownEither(Schema.parseJson(Manifest))

/**
 * Every way a stored revision disagrees with its own manifest or with the chain: the SCU recomputed from the
 * manifest's prices, keccak256(JCS(manifest)) against metadataHash, the content projection against contentHash,
 * and the on-chain header field by field. Empty when the revision verifies.
 */
export const verifyRevision = (
  stored: AnchoredHeader & { readonly manifestJcs: string },
  onChain: AnchoredHeader
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const decoded = decodeManifestJson(stored.manifestJcs)
  if (Either.isLeft(decoded)) return [`the stored manifest is not a manifest: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`]
  const manifest = decoded.right
  if (jcs(manifest) !== stored.manifestJcs) problems.push("the stored manifest is not in canonical (JCS) form")
  if (metadataHash(manifest) !== stored.metadataHash) problems.push(`keccak256(JCS(manifest)) is ${metadataHash(manifest)}, not ${stored.metadataHash}`)
  if (contentHash(manifest) !== stored.contentHash) problems.push(`the content projection hashes to ${contentHash(manifest)}, not ${stored.contentHash}`)
  if (manifest.revisionVersion !== stored.revisionVersion) problems.push(`the manifest says revision ${manifest.revisionVersion}`)
  if (manifest.methodologyVersion !== stored.methodologyVersion) problems.push(`the manifest says methodology ${manifest.methodologyVersion}`)
  const recomputed = scu18(manifest.models.map((m) => ({ inputPrice18: BigInt(m.inputPrice) as Usd18, outputPrice18: BigInt(m.outputPrice) as Usd18 })))
  if (recomputed !== stored.scuUsd18) problems.push(`the SCU recomputes to ${recomputed}, not ${stored.scuUsd18}`)
  const fields: ReadonlyArray<[string, unknown, unknown]> = [
    ["revisionVersion", onChain.revisionVersion, stored.revisionVersion],
    ["methodologyVersion", onChain.methodologyVersion, stored.methodologyVersion],
    ["scuUsd", onChain.scuUsd18, stored.scuUsd18],
    ["contentHash", onChain.contentHash.toLowerCase(), stored.contentHash.toLowerCase()],
    ["metadataHash", onChain.metadataHash.toLowerCase(), stored.metadataHash.toLowerCase()],
    ["publishedAt", onChain.publishedAt.getTime(), stored.publishedAt.getTime()]
  ]
  for (const [name, chainValue, storedValue] of fields) {
    if (chainValue !== storedValue) problems.push(`on-chain ${name} is ${String(chainValue)}, stored ${String(storedValue)}`)
  }
  return problems
}
