/**
 * The published documents pass Redocly's linter (its recommended rules) with no errors: client generators and
 * gateways run this kind of check before they accept a document. Warnings are allowed; the decisions record lists
 * the ones left.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { Option } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeApiDocuments } from "../src/http/apiDocuments.ts"

const cli = Path.resolve(import.meta.dirname, "../node_modules/@redocly/cli/bin/cli.js")
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-openapi-lint-"))

afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

interface Problem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer?: string }>
}

/** One document per run: with several, the JSON reports are written one after the other. */
const lint = async (file: string) => {
  // The linter exits non-zero when it finds errors; the report on stdout is what is checked either way.
  const run = await promisify(execFile)(process.execPath, [cli, "lint", file, "--format=json"], {
    // No telemetry, no update check: the run stays offline.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    maxBuffer: 16 * 1024 * 1024
  }).catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? "" }))
  return JSON.parse(run.stdout) as { totals: { errors: number; warnings: number }; problems: ReadonlyArray<Problem> }
}

describe("Redocly lint", () => {
  it.each([
    ["without PUBLIC_BASE_URL", Option.none<string>()],
    ["with PUBLIC_BASE_URL", Option.some("https://api.example.com")]
  ])("reports no errors on the public and the inference documents (%s)", async (_, publicBaseUrl) => {
    const documents = makeApiDocuments({ publicBaseUrl })
    for (const [name, body] of [
      ["public.yaml", documents.publicYaml.body],
      ["inference.yaml", documents.inferenceYaml.body]
    ] as const) {
      const file = Path.join(dir, `${Option.isSome(publicBaseUrl) ? "absolute" : "relative"}-${name}`)
      Fs.writeFileSync(file, body)
      const report = await lint(file)
      const errors = report.problems
        .filter((problem) => problem.severity === "error")
        .map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`)
      expect(errors, name).toEqual([])
      expect(report.totals.errors, name).toBe(0)
    }
  }, 60_000)
})
