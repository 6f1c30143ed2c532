/**
 * The scan report as an operator reads it: sources, what changed in the catalog, and the basket with the
 * reason for every change.
 */
import { formatUsd18 } from "../money.ts"
import type { BasketProposal } from "./governance.ts"

export interface PrintableSource {
  readonly source: string
  readonly status: string
  readonly provider: string | null
  readonly models: number
  readonly problems: ReadonlyArray<string>
}

export interface PrintableChange {
  readonly type: string
  readonly [key: string]: unknown
}

export interface PrintableScan {
  readonly scanId: string
  readonly trigger: string
  readonly startedAt: Date
  readonly finishedAt: Date
  readonly outcome: string
  readonly sources: ReadonlyArray<PrintableSource>
  readonly decisions: PrintableSource
  readonly changes: ReadonlyArray<PrintableChange>
  readonly basket: BasketProposal
}

const pad = (text: string, width: number) => (text.length >= width ? text : text + " ".repeat(width - text.length))

const describeCatalogChange = (change: PrintableChange): string => {
  const subject = String(change.model ?? change.family ?? change.provider ?? "")
  const rest = [change.effectiveFrom ? `from ${String(change.effectiveFrom).slice(0, 10)}` : "", change.detail ?? ""]
    .filter((part) => part !== "")
    .join(": ")
  return `${pad(String(change.type), 16)} ${subject}${rest === "" ? "" : ` (${rest})`}`
}

export const formatBasket = (basket: BasketProposal): Array<string> => {
  const lines: Array<string> = []
  lines.push(`basket as of ${basket.asOf.toISOString()}: ${basket.members.length} families`)
  const familyWidth = Math.max(6, ...basket.members.map((m) => m.family.length))
  const modelWidth = Math.max(5, ...basket.members.map((m) => m.modelKey.length))
  lines.push(`  ${pad("family", familyWidth)}  ${pad("model", modelWidth)}  input/M   output/M  (USD, price from)`)
  for (const member of [...basket.members].sort((a, b) => a.family.localeCompare(b.family))) {
    lines.push(
      `  ${pad(member.family, familyWidth)}  ${pad(member.modelKey, modelWidth)}  ${pad(formatUsd18(member.inputPrice18), 8)}  ` +
        `${pad(formatUsd18(member.outputPrice18), 8)}  ${member.priceFrom.toISOString().slice(0, 10)}`
    )
  }
  lines.push(basket.changes.length === 0 ? "basket changes: none" : `basket changes (${basket.changes.length}):`)
  for (const change of basket.changes) lines.push(`  ${pad(change.type, 14)} ${change.description}`)
  if (basket.held.length > 0) {
    lines.push(`held price changes (${basket.held.length}):`)
    for (const held of basket.held) lines.push(`  ${held.modelKey}: ${held.description}`)
  }
  if (basket.familiesWithoutMember.length > 0) {
    lines.push(`families without an eligible model: ${basket.familiesWithoutMember.join(", ")}`)
  }
  return lines
}

export const formatScanReport = (report: PrintableScan, options: { readonly verbose?: boolean } = {}): string => {
  const lines: Array<string> = []
  const seconds = ((report.finishedAt.getTime() - report.startedAt.getTime()) / 1000).toFixed(2)
  lines.push(`price scan #${report.scanId} (${report.trigger}): ${report.outcome} in ${seconds} s`)
  lines.push("sources:")
  for (const source of [...report.sources, report.decisions]) {
    const what = source.provider === null ? "" : `${source.provider}, ${source.models} models`
    lines.push(`  ${pad(source.status.toUpperCase(), 11)} ${source.source}${what === "" ? "" : ` (${what})`}`)
    for (const problem of source.problems) lines.push(`      ${problem}`)
  }
  lines.push(report.changes.length === 0 ? "catalog changes: none" : `catalog changes (${report.changes.length}):`)
  const shown = options.verbose ? report.changes : report.changes.slice(0, 40)
  for (const change of shown) lines.push(`  ${describeCatalogChange(change)}`)
  if (shown.length < report.changes.length) lines.push(`  ... and ${report.changes.length - shown.length} more (--verbose shows all)`)
  lines.push(...formatBasket(report.basket))
  if (options.verbose && report.basket.excluded.length > 0) {
    lines.push(`models not eligible now (${report.basket.excluded.length}):`)
    for (const excluded of report.basket.excluded) lines.push(`  ${excluded.modelKey}: ${excluded.reasons.join("; ")}`)
  }
  return lines.join("\n")
}
