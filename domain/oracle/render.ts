/**
 * The oracle's text renderings: RFC 4180 CSV of the two series, and the reconstitution log as Markdown.
 */
import type { LogInput } from "./inputs.ts"
import { iso, num } from "./numbers.ts"
import type { HistoryResponse, PriceHistoryResponse } from "./schemas.ts"

export const HISTORY_CSV_HEADER = "date,scuUsd,computeIndex,revisionVersion,methodologyVersion,metadataHash"

export const PRICE_HISTORY_CSV_HEADER =
  "date,inputPriceUsdPerMillion,outputPriceUsdPerMillion,source,revisionVersion,methodologyVersion,metadataHash"

/** RFC 4180: CRLF line ends; no field here needs quoting (numbers, ISO dates, hex, fixed words). */
const csv = (header: string, rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string =>
  [header, ...rows.map((row) => row.map((field) => field ?? "").join(","))].join("\r\n") + "\r\n"

export const historyCsv = (view: HistoryResponse): string =>
  csv(
    HISTORY_CSV_HEADER,
    view.data.map((p) => [p.date, p.scuUsd, p.computeIndex, p.revisionVersion, p.methodologyVersion, p.metadataHash])
  )

export const priceHistoryCsv = (view: PriceHistoryResponse): string =>
  csv(
    PRICE_HISTORY_CSV_HEADER,
    view.data.map((p) => [
      p.date,
      p.inputPriceUsdPerMillion,
      p.outputPriceUsdPerMillion,
      p.source,
      p.revisionVersion,
      p.methodologyVersion,
      p.metadataHash
    ])
  )

/** The whole log as a Markdown document, newest first. */
export const reconstitutionsMarkdown = (log: ReadonlyArray<LogInput>, generatedAt: Date): string => {
  const lines = [
    "# SCU index reconstitution log",
    "",
    `Generated ${iso(generatedAt)}. ${log.length} revisions. SCU in USD for the reference workload (1000 input + 500 output tokens).`,
    ""
  ]
  for (const entry of [...log].reverse()) {
    lines.push(`## Revision ${entry.revisionVersion} (${iso(entry.publishedAt).slice(0, 10)})`, "")
    lines.push(`- Published: ${iso(entry.publishedAt)}`)
    lines.push(`- Methodology: ${entry.methodologyVersion}`)
    lines.push(`- SCU: ${entry.scuBeforeUsd18 === null ? "(genesis)" : num(entry.scuBeforeUsd18)} -> ${num(entry.scuAfterUsd18)}`)
    lines.push(`- Transaction: \`${entry.txHash}\``)
    lines.push(`- Summary: ${entry.summary}`, "")
    if (entry.changes.length > 0) {
      lines.push("| change | model | description |", "|---|---|---|")
      for (const change of entry.changes) {
        lines.push(`| ${change.type} | \`${change.modelKey}\` | ${change.description.replace(/\|/g, "\\|")} |`)
      }
      lines.push("")
    }
  }
  return `${lines.join("\n")}\n`
}
