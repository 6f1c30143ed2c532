/**
 * What the oracle's public reads are computed from: confirmed revisions, the live catalog and the reconstitution
 * log, as the snapshot service loads them. Pure data; the views, series and renderers shape it.
 */
import type { MarkedPrice, ModelCard, PricePoint, ProviderRecord } from "../catalog/card.ts"
import type { Manifest } from "../index/manifest.ts"
import type { ReconstitutionChange } from "../index/revision.ts"
import type { Usd18 } from "../money.ts"

export interface ConfirmedRevision {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly scuUsd18: Usd18
  readonly contentHash: string
  readonly metadataHash: string
  readonly manifest: Manifest | null
  readonly publishedAt: Date
  readonly publishedBlock: bigint
  readonly confirmedAt: Date
  readonly txHash: string
}

/** A catalog price entry as recorded: the vendor's numbers and when we observed them. */
export type StoredPoint = PricePoint & { readonly observedAt: Date }

export interface CatalogListing {
  readonly card: ModelCard
  readonly price: StoredPoint
}

/**
 * A listing priced per input and output token: every kind but embedding. The catalog's `models`, the pricing list's
 * `models`, resolve and the basket's entries are made of these; embedding models (input price only) are listed apart.
 */
export type ChatListing = CatalogListing & { readonly price: StoredPoint & { readonly output: MarkedPrice } }

export const isChatListing = (listing: CatalogListing): listing is ChatListing =>
  listing.card.kind !== "embedding" && listing.price.output !== null

export const chatListings = (catalog: ReadonlyArray<CatalogListing>): ReadonlyArray<ChatListing> => catalog.filter(isChatListing)

/** The embedding models of the catalog: priced per input token only, never in the basket. */
export const embeddingListings = (catalog: ReadonlyArray<CatalogListing>): ReadonlyArray<CatalogListing> =>
  catalog.filter((listing) => listing.card.kind === "embedding")

export interface OracleInputs {
  readonly revisions: ReadonlyArray<ConfirmedRevision>
  readonly catalog: ReadonlyArray<CatalogListing>
  readonly providers: ReadonlyArray<ProviderRecord>
  readonly pegUsd18: Usd18
  /** Models the exchange can route today (none until the exchange is built). */
  readonly routable: ReadonlySet<string>
  readonly now: Date
}

/** One entry of the reconstitution log, as stored with its revision. */
export interface LogInput {
  readonly id: string
  readonly revisionVersion: number
  readonly previousVersion: number | null
  readonly publishedAt: Date
  readonly methodologyVersion: number
  readonly summary: string
  readonly scuBeforeUsd18: bigint | null
  readonly scuAfterUsd18: bigint
  readonly changes: ReadonlyArray<ReconstitutionChange>
  readonly txHash: string
}

export const latestRevision = (inputs: OracleInputs): ConfirmedRevision | undefined => inputs.revisions[inputs.revisions.length - 1]
