/**
 * Temporal edges over a real socket (issue 5): revisions 2 and 3 share a publishedAt, an instant exactly at a
 * publishedAt, and acme/small-1 leaves the basket (revision 3) and comes back (revision 4).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { draftRevision } from "../domain/index/revision.ts"
import { parseUsd18 } from "../domain/money.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { type OracleHarness, startOracle } from "./support/oracle.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

let oracle: OracleHarness
let server: TestServer
type Json = Record<string, any>

const member = (modelKey: string, family: string, input: string) => ({
  modelKey,
  family,
  inputPrice18: parseUsd18(input),
  outputPrice18: parseUsd18("1"),
  displayName: modelKey,
  providerKey: "acme",
  sdkId: modelKey
})

const big = (input: string) => member("acme/big-1", "acme.big", input)
const small = (input: string) => member("acme/small-1", "acme.small", input)

/** Records a confirmed revision as the publication pipeline would after a receipt with block time `at`. */
const confirm = (n: number, at: string, members: ReadonlyArray<ReturnType<typeof member>>) =>
  Effect.gen(function* () {
    const repository = yield* RevisionRepository
    const draft = draftRevision({ revisionVersion: n, methodologyVersion: 1, members, changes: [] })
    const row = yield* repository.insertDraft(draft, { requiresApproval: false, intendedAt: null })
    const txHash = `0x${n.toString(16).padStart(64, "0")}`
    yield* repository.markBroadcast(row.id, txHash)
    yield* repository.markConfirmed(row, { txHash, blockNumber: BigInt(n), blockTimestamp: new Date(at) })
  }).pipe(Effect.provide(RevisionRepository.Default))

beforeAll(async () => {
  oracle = await startOracle()
  await oracle.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
  await oracle.run(confirm(1, "2025-06-17T00:00:00Z", [big("3"), small("0.1")]))
  await oracle.run(confirm(2, "2025-07-01T00:00:00Z", [big("3"), small("0.2")]))
  await oracle.run(confirm(3, "2025-07-01T00:00:00Z", [big("3")]))
  await oracle.run(confirm(4, "2025-08-01T00:00:00Z", [big("3"), small("0.3")]))
  server = await startTestServer({ DATABASE_URL: oracle.database.url, PRICE_DATA_DIR: oracle.dataDir, RATE_LIMIT_ENABLED: "false" })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await oracle?.close()
})

const body = async (path: string): Promise<Json> => (await (await fetch(`${server.baseUrl}${path}`)).json()) as Json

describe("revisions sharing a publishedAt", () => {
  it("the highest revision wins at that instant and after it, for scu-at and price-at", async () => {
    expect((await body("/v1/oracle/scu-at?date=2025-07-01T00:00:00Z")).revisionVersion).toBe(3)
    expect((await body("/v1/oracle/scu-at?date=2025-07-31T23:59:59Z")).revisionVersion).toBe(3)
    expect((await body("/v1/oracle/scu-at?date=2025-06-30T23:59:59Z")).revisionVersion).toBe(1)
  })

  it("both appear in the per-revision history, with the same date", async () => {
    const history = await body("/v1/oracle/history")
    expect(history.data.map((p: Json) => [p.revisionVersion, p.date])).toEqual([
      [1, "2025-06-17T00:00:00.000Z"],
      [2, "2025-07-01T00:00:00.000Z"],
      [3, "2025-07-01T00:00:00.000Z"],
      [4, "2025-08-01T00:00:00.000Z"]
    ])
    const daily = await body("/v1/oracle/history?granularity=daily&from=2025-07-01&to=2025-07-01")
    expect(daily.data.map((p: Json) => p.revisionVersion)).toEqual([3])
  })
})

describe("a model that left the basket and came back", () => {
  it("is a member again, not retired", async () => {
    expect(await body("/v1/oracle/models/acme%2Fsmall-1")).toMatchObject({ inBasket: true, retiredAtRevision: null })
  })

  it("is priced by the manifest while a member, by the catalog while out, and by the manifest again", async () => {
    expect(await body("/v1/oracle/models/small-1/price-at?date=2025-06-20T00:00:00Z")).toMatchObject({ source: "manifest", revisionVersion: 1, inputPriceUsdPerMillion: 0.1 })
    expect(await body("/v1/oracle/models/small-1/price-at?date=2025-07-15T00:00:00Z")).toMatchObject({ source: "catalog", inputPriceUsdPerMillion: 0.1 })
    expect(await body("/v1/oracle/models/small-1/price-at?date=2025-08-01T00:00:00Z")).toMatchObject({ source: "manifest", revisionVersion: 4, inputPriceUsdPerMillion: 0.3 })
    const history = await body("/v1/oracle/models/small-1/price-history?from=2025-06-17&to=2025-08-15")
    expect(history.data.map((p: Json) => [p.date.slice(0, 10), p.source, p.inputPriceUsdPerMillion])).toEqual([
      ["2025-06-17", "manifest", 0.1],
      ["2025-07-01", "catalog", 0.1],
      ["2025-08-01", "manifest", 0.3]
    ])
  })

  it("the reconstitution log lists the four revisions in order, two with the same publishedAt", async () => {
    const log = await body("/v1/oracle/reconstitutions")
    expect(log.entries.map((e: Json) => [e.revisionVersion, e.previousVersion, e.publishedAt])).toEqual([
      [1, null, "2025-06-17T00:00:00.000Z"],
      [2, 1, "2025-07-01T00:00:00.000Z"],
      [3, 2, "2025-07-01T00:00:00.000Z"],
      [4, 3, "2025-08-01T00:00:00.000Z"]
    ])
  })
})
