/**
 * A price point's identity for change detection: every number, mark and source it carries, in a fixed order.
 * Two scans that read the same entry produce the same fingerprint; any edit produces another.
 */
import { createHash } from "node:crypto"
import type { MarkedPrice, PricePoint } from "./card.ts"

const markText = (mark: MarkedPrice | null) =>
  mark === null
    ? null
    : [
        mark.usd18.toString(),
        mark.provenance,
        mark.derivedFrom,
        mark.until?.toISOString() ?? null,
        mark.regular18?.toString() ?? null,
        // Appended only when present, so an entry read before sources were recorded keeps its fingerprint.
        ...(mark.sourceUrl === null ? [] : [mark.sourceUrl, mark.checkedAt?.toISOString() ?? null])
      ]

export const priceFingerprint = (point: PricePoint): string =>
  createHash("sha256")
    .update(
      JSON.stringify([
        point.effectiveFrom.toISOString(),
        point.checkedAt === null ? point.sourceUrl : [point.sourceUrl, point.checkedAt.toISOString()],
        point.note,
        markText(point.input),
        markText(point.output),
        markText(point.cachedInput),
        markText(point.cacheWrite5m),
        markText(point.cacheWrite1h),
        markText(point.reasoningOutput),
        point.contextTiers.map((tier) => [tier.fromInputTokens, markText(tier.input), markText(tier.output)])
      ])
    )
    .digest("hex")
