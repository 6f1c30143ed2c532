/**
 * The run's reliability table: the figures file is emptied when a run starts; when it ends, the table goes to
 * test-results/reliability.md, and with RELIABILITY_DOC=1 (`npm run reliability`) between the markers of
 * docs/reliability.md as well.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { FIGURES_FILE, projectRoot, renderReliabilityTable } from "./reliability.ts"

const DOC = Path.join(projectRoot, "docs", "reliability.md")
const START = "<!-- figures:start -->"
const END = "<!-- figures:end -->"

export const writeReliabilityReport = () => {
  Fs.rmSync(FIGURES_FILE, { force: true })
  return {
    finish: () => {
      const table = renderReliabilityTable()
      if (table === undefined) return
      const dated = `Figures of the run of ${new Date().toISOString().slice(0, 10)}, commit ${commitOf()}:\n\n${table}`
      Fs.writeFileSync(Path.join(projectRoot, "test-results", "reliability.md"), `${dated}\n`)
      if (process.env["RELIABILITY_DOC"] !== "1") return
      const doc = Fs.readFileSync(DOC, "utf8")
      const from = doc.indexOf(START)
      const to = doc.indexOf(END)
      if (from < 0 || to < from) throw new Error(`docs/reliability.md lost its ${START} ... ${END} markers`)
      Fs.writeFileSync(DOC, `${doc.slice(0, from + START.length)}\n${dated}\n${doc.slice(to)}`)
      console.log("[test] docs/reliability.md: figures of this run written")
    }
  }
}

/** The commit the run tested, marked when files other than this page differed from it. */
const commitOf = (): string => {
  try {
    const git = (...args: Array<string>) => execFileSync("git", args, { cwd: projectRoot, encoding: "utf8" }).trim()
    const changed = git("status", "--porcelain").split("\n").filter((line) => line.trim() !== "" && !line.endsWith("docs/reliability.md"))
    return `${git("rev-parse", "--short", "HEAD")}${changed.length > 0 ? " with uncommitted changes" : ""}`
  } catch {
    return "unknown"
  }
}
