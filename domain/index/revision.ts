/**
 * A revision as the index publishes it: the basket governance proposed, turned into a manifest with its SCU and
 * hashes, and the reconstitution-log changes that explain it.
 */
import { Data } from "effect"
import type { BasketChange, BasketMember } from "../catalog/governance.ts"
import type { Usd18 } from "../money.ts"
import { buildManifest, contentHash, jcs, type Manifest, metadataHash } from "./manifest.ts"
import { scu18 } from "./scu.ts"

/** The methodology every revision is produced with today (SPEC "Price index" 10). */
export const CURRENT_METHODOLOGY_VERSION = 1

/**
 * Change types of the reconstitution log. SPEC names ModelAdded and ModelRemoved; a member replaced by a newer
 * version is logged as both (the old one removed, the new one added), and a member whose price changed as
 * PriceChanged.
 */
export type ReconstitutionChangeType = "ModelAdded" | "ModelRemoved" | "PriceChanged"

export interface ReconstitutionChange {
  readonly type: ReconstitutionChangeType
  readonly modelKey: string
  readonly description: string
}

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
  readonly members: ReadonlyArray<BasketMember>
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
