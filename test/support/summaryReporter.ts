/**
 * Ends a run with one plain line, "N passed, N failed" (", N skipped" when any), after vitest's own
 * summary, so tools outside vitest can read the outcome from the last line.
 */
import type { RunnerTask, RunnerTestFile } from "vitest"
import type { Reporter } from "vitest/reporters"

const count = (tasks: ReadonlyArray<RunnerTask>, totals: { passed: number; failed: number; skipped: number }) => {
  for (const task of tasks) {
    if (task.type === "suite") {
      count(task.tasks, totals)
      if (task.result?.state === "fail" && task.tasks.length === 0) totals.failed++
    } else if (task.result?.state === "pass") totals.passed++
    else if (task.result?.state === "fail") totals.failed++
    else totals.skipped++
  }
}

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile> = [], errors: ReadonlyArray<unknown> = []) {
    const totals = { passed: 0, failed: 0, skipped: 0 }
    count(files, totals)
    totals.failed += errors.length
    // Printed after the default reporter's summary (reporters finish in the order they are listed).
    setImmediate(() =>
      console.log(`\n${totals.passed} passed, ${totals.failed} failed${totals.skipped > 0 ? `, ${totals.skipped} skipped` : ""}`)
    )
  }
}
