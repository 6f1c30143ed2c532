/**
 * The figures the reliability suites produce (requests sent, faults injected, refusals checked, bodies fuzzed, money
 * reconciled): each suite records what it tried and what held as it runs, and the run's table is rendered from them
 * (`renderReliabilityTable`, called when the run ends; `npm run reliability` writes it into docs/reliability.md).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
export const projectRoot = Path.resolve(import.meta.dirname, "../..")
export const FIGURES_FILE = Path.join(projectRoot, "test-results", "reliability.jsonl")

export interface Figure {
  /** The suite's file, e.g. "test/replicas.test.ts". */
  readonly suite: string
  /** What was tried. */
  readonly tried: string
  /** How much of it, in numbers a reader can check. */
  readonly volume: string
  /** What held. */
  readonly held: string
}

/** Appends one row to this run's figures and prints it. */
export const recordFigure = (figure: Figure) => {
  Fs.mkdirSync(Path.dirname(FIGURES_FILE), { recursive: true })
  Fs.appendFileSync(FIGURES_FILE, `${JSON.stringify({ ...figure, at: new Date().toISOString() })}\n`)
  console.log(`[reliability] ${figure.tried}: ${figure.volume}; ${figure.held}`)
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

/** The run's figures as a Markdown table, in the order they were recorded; undefined when none were. */
export const renderReliabilityTable = (): string | undefined => {
  if (!Fs.existsSync(FIGURES_FILE)) return undefined
  const rows = Fs.readFileSync(FIGURES_FILE, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Figure & { readonly at: string })
  if (rows.length === 0) return undefined
  return [
    "| suite | what was tried | how much | what held |",
    "|---|---|---:|---|",
    ...rows.map((row) => `| \`${cell(row.suite)}\` | ${cell(row.tried)} | ${cell(row.volume)} | ${cell(row.held)} |`)
  ].join("\n")
}
