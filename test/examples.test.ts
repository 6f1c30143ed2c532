/**
 * The programs in examples/ run as their users would run them (their own process, importing the package by its name
 * through package.json `exports`; the `compute-exchange:source` condition maps the name to this checkout's sources,
 * test/package-install.test.ts runs the built package), against a service serving the fixture history: the oracle
 * embedded in another Effect program over the service's database prints the SCU the service's API gives, and the
 * typed client reads the API and gets a refusal as a typed failure.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"
import { cleanEnv, projectRoot } from "./support/process.ts"

const run = promisify(execFile)

let fx: FixtureServer
/** The consumer importing every export path: it needs no server, so it runs while the fixture server starts. */
let exportsRun: Promise<{ stdout: string }> | undefined
/** Every child process a test started, so none outlives the server and database it talks to. */
const children: Array<Promise<unknown>> = []

/** Starts `promise` now, to be awaited later: a failure is only reported by the test that awaits it. */
const started = <A>(promise: Promise<A>): Promise<A> => {
  promise.catch(() => undefined)
  children.push(promise)
  return promise
}

beforeAll(async () => {
  exportsRun = started(
    run(
      process.execPath,
      [
        "--conditions=compute-exchange:source",
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `for (const path of ["oracle", "exchange", "accounts", "api"]) {
           const m = await import("compute-exchange/" + path)
           console.log(path + ": " + Object.keys(m).sort().join(" "))
         }`
      ],
      { cwd: projectRoot, env: cleanEnv({}), timeout: 60_000 }
    )
  )
  fx = await startFixtureServer()
}, 120_000)

afterAll(async () => {
  await Promise.allSettled(children)
  await fx?.close()
})

const example = async (file: string, env: Record<string, string>) => {
  const { stdout } = await started(run(process.execPath, ["--conditions=compute-exchange:source", "--import", "tsx", file], { cwd: projectRoot, env: cleanEnv(env), timeout: 60_000 }))
  return stdout
}

const scuOverHttp = async () => {
  const response = await fetch(`${fx.baseUrl}/v1/oracle/scu`, { headers: { "x-forwarded-for": "198.51.100.40" } })
  expect(response.status).toBe(200)
  return (await response.json()) as {
    scuUsd: number
    computeIndex: number | null
    methodologyVersion: number
    updatedAt: string
    breakdown: { familyRepresentatives: Array<{ family: string; modelKey: string }> }
  }
}

describe("examples/", () => {
  // The two programs only read the replayed history, so they run side by side (each test checks with its own `expect`).
  it.concurrent("embed-oracle.ts: another Effect program over the service's database prints the SCU the API serves", async ({ expect }) => {
    const scu = await scuOverHttp()
    const stdout = await example("examples/embed-oracle.ts", { DATABASE_URL: fx.database.url })
    expect(stdout.trim().split("\n")).toEqual([
      `SCU ${scu.scuUsd} USD (compute index ${scu.computeIndex ?? "n/a"}, methodology ${scu.methodologyVersion}, updated ${scu.updatedAt})`,
      ...scu.breakdown.familyRepresentatives.map((member) => `  ${member.family}: ${member.modelKey}`)
    ])
  }, 90_000)

  it.concurrent("typed-client.ts: the typed client reads status, SCU and models, and a refusal arrives typed", async ({ expect }) => {
    const scu = await scuOverHttp()
    const models = (await (await fetch(`${fx.baseUrl}/v1/oracle/models`, { headers: { "x-forwarded-for": "198.51.100.41" } })).json()) as { models: Array<unknown> }
    const stdout = await example("examples/typed-client.ts", { BASE_URL: fx.baseUrl })
    expect(stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^service ok, version \S+, database postgres$/),
      `SCU ${scu.scuUsd} USD (compute index ${scu.computeIndex ?? "n/a"})`,
      `${models.models.length} models tracked`,
      "asking for no-such-model: NotFound"
    ])
  }, 90_000)

  it("every path package.json exports resolves for a consumer importing the package by name, with its services and layers", async () => {
    const { stdout } = await exportsRun!
    const exported = Object.fromEntries(stdout.trim().split("\n").map((line) => [line.split(": ")[0], line.split(": ")[1]!.split(" ")]))
    expect(exported.oracle).toEqual(expect.arrayContaining(["OracleReads", "OracleReadsLive", "OracleLive", "pgClientLayer", "migrate", "DatabaseLive"]))
    expect(exported.exchange).toEqual(expect.arrayContaining(["Exchange", "ExchangeLive", "Quotes", "ModelCatalog"]))
    expect(exported.accounts).toEqual(expect.arrayContaining(["AccountsLive", "Ledger", "ApiKeys", "Organizations", "Sessions", "Usage"]))
    expect(exported.api).toEqual(expect.arrayContaining(["PublicApi", "InferenceApi", "makeClient", "makeInferenceClient"]))
  }, 90_000)
})
