/**
 * The price scan over a real database: cards become catalog rows, changes become new rows (never overwrites),
 * and a malformed or unreachable source changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Deferred, Effect, Exit, Fiber, Option } from "effect"
import * as Http from "node:http"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { formatScanReport } from "../domain/catalog/scanReport.ts"
import { formatUsd18 } from "../domain/money.ts"
import { CatalogRepository } from "../services/oracle/CatalogRepository.ts"
import { PRICE_SCAN_JOB, PriceScan } from "../services/oracle/PriceScan.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { at } from "./support/catalogFixtures.ts"
import { type OracleHarness, startOracle } from "./support/oracle.ts"
import { freePort } from "./support/ports.ts"

let harness: OracleHarness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const scan = () => Effect.flatMap(PriceScan, (s) => s.run("test"))
const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql(table)}`).pipe(
    Effect.map((rows) => Number(rows[0]!.n))
  )
const priceAt = (model: string, iso: string) =>
  Effect.flatMap(CatalogRepository, (repo) => repo.priceAt(model, at(iso)))
const catalogSnapshot = Effect.all({
  rows: count("price_rows"),
  components: count("price_components"),
  tiers: count("price_tiers"),
  models: Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT id, deleted_at, family_key FROM models ORDER BY id`)
})

describe("a scan on a fresh database", () => {
  it("loads every card and prints the basket with the reason for every member", async () => {
    harness = await startOracle()
    const report = await harness.run(scan())
    expect(report.outcome).toBe("succeeded")
    expect(report.sources.map((s) => [s.status, s.provider, s.models])).toEqual([
      ["read", "acme", 5],
      ["read", "zeta", 2]
    ])
    const types = report.changes.map((c) => c.type)
    expect(types.filter((t) => t === "ProviderAdded")).toHaveLength(2)
    expect(types.filter((t) => t === "ModelAdded")).toHaveLength(7)
    expect(types.filter((t) => t === "PriceRecorded")).toHaveLength(8)
    expect(report.basket.members.map((m) => m.modelKey)).toEqual([
      "acme/big-2",
      "acme/small-1",
      "zeta-labs/zeta-mini",
      "zeta-labs/zeta-pro"
    ])
    expect(report.basket.changes.map((c) => `${c.type} ${c.modelKey}`)).toEqual([
      "ModelAdded acme/big-2",
      "ModelAdded acme/small-1",
      "ModelAdded zeta-labs/zeta-pro",
      "ModelAdded zeta-labs/zeta-mini"
    ])
    const text = formatScanReport(report)
    expect(text).toContain("basket as of")
    expect(text).toContain("ModelAdded     Big 2 enters as the representative of acme.big")
    expect(await harness.run(count("price_tiers"))).toBe(1)
  })

  it("changes nothing when scanned again with the same cards", async () => {
    harness = await startOracle()
    await harness.run(scan())
    const before = await harness.run(catalogSnapshot)
    const again = await harness.run(scan())
    expect(again.changes).toEqual([])
    expect(again.basket.changes).toEqual([])
    expect(await harness.run(catalogSnapshot)).toEqual(before)
  })
})

describe("temporal price rows", () => {
  it("records a price change as a new row and answers the price at any instant", async () => {
    harness = await startOracle()
    await harness.run(scan())
    harness.edit("cards/acme.yaml", (text) =>
      text.replace(
        "        input: 0.1\n        output: 0.4\n",
        "        input: 0.1\n        output: 0.4\n      - from: 2026-01-15\n        sourceUrl: https://acme.example/pricing\n        checkedAt: 2026-01-15\n        input: 0.08\n        output: 0.32\n"
      )
    )
    const report = await harness.run(scan())
    expect(report.changes).toEqual([
      expect.objectContaining({ type: "PriceRecorded", model: "acme/small-1", effectiveFrom: "2026-01-15T00:00:00.000Z" })
    ])
    expect(formatUsd18((await harness.run(priceAt("acme/small-1", "2026-01-14T23:59:59Z")))!.input.usd18)).toBe("0.1")
    expect(formatUsd18((await harness.run(priceAt("acme/small-1", "2026-01-15")))!.input.usd18)).toBe("0.08")
    expect(await harness.run(priceAt("acme/small-1", "2025-05-31"))).toBeUndefined()
    expect(report.basket.changes).toEqual([
      expect.objectContaining({ type: "PriceChanged", modelKey: "acme/small-1" })
    ])
  })

  it("keeps a corrected entry: the correction is a new row that supersedes it", async () => {
    harness = await startOracle()
    await harness.run(scan())
    harness.edit("cards/acme.yaml", (text) => text.replace("output: 0.4\n", "output: 0.5\n"))
    const report = await harness.run(scan())
    expect(report.changes).toEqual([expect.objectContaining({ type: "PriceCorrected", model: "acme/small-1" })])
    const rows = await harness.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ id: string }>`SELECT id FROM price_rows WHERE model_id = 'acme/small-1' ORDER BY id`
      )
    )
    expect(rows).toHaveLength(2)
    expect(formatUsd18((await harness.run(priceAt("acme/small-1", "2025-07-01")))!.output!.usd18)).toBe("0.5")
  })

  it("refuses to update or delete a price row", async () => {
    harness = await startOracle()
    await harness.run(scan())
    for (const statement of ["UPDATE price_rows SET note = 'x'", "DELETE FROM price_components", "DELETE FROM price_tiers"]) {
      const exit = await harness.run(Effect.exit(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement))))
      expect(Exit.isFailure(exit)).toBe(true)
    }
  })

  it("serves the catalog now with cache, reasoning and context tiers", async () => {
    harness = await startOracle()
    await harness.run(scan())
    const now = await harness.run(Effect.flatMap(CatalogRepository, (repo) => repo.catalogNow(new Date())))
    expect(now.map((m) => m.card.id)).toEqual([
      "acme/big-1",
      "acme/big-2",
      "acme/embed-1",
      "acme/small-1",
      "acme/small-2-preview",
      "zeta-labs/zeta-mini",
      "zeta-labs/zeta-pro"
    ])
    const big2 = now.find((m) => m.card.id === "acme/big-2")!.price
    expect(formatUsd18(big2.input.usd18)).toBe("1")
    expect(formatUsd18(big2.cachedInput!.usd18)).toBe("0.1")
    expect(formatUsd18(big2.reasoningOutput!.usd18)).toBe("10")
    const zetaPro = now.find((m) => m.card.id === "zeta-labs/zeta-pro")!.price
    expect(zetaPro.cachedInput).toMatchObject({ provenance: "inferred", derivedFrom: expect.stringContaining("caching guide") })
    const big2Launch = await harness.run(priceAt("acme/big-2", "2025-10-01"))
    expect(big2Launch!.contextTiers.map((t) => [t.fromInputTokens, formatUsd18(t.input.usd18), formatUsd18(t.output.usd18)])).toEqual([
      [200001, "4", "15"]
    ])
  })
})

describe("sources that fail change nothing", () => {
  it("a malformed card is reported with file, model and field, and its prices stay", async () => {
    harness = await startOracle()
    await harness.run(scan())
    const before = await harness.run(catalogSnapshot)
    harness.edit("cards/zeta.yaml", (text) => text.replace("output: 10", "output: ten"))
    const report = await harness.run(scan())
    expect(report.outcome).toBe("partial")
    const zeta = report.sources.find((s) => s.source.endsWith("zeta.yaml"))!
    expect(zeta.status).toBe("invalid")
    expect(zeta.problems.some((p) => /zeta\.yaml: model zeta-labs\/zeta-pro: prices\[0\]\.output/.test(p))).toBe(true)
    expect(report.changes).toEqual([])
    expect(await harness.run(catalogSnapshot)).toEqual(before)
    expect(formatScanReport(report)).toContain("INVALID")
  })

  it("an unreachable source is reported and its provider's models are neither changed nor removed", async () => {
    const port = await freePort()
    harness = await startOracle({ PRICE_CARD_URLS: `http://127.0.0.1:${port}/zeta.yaml`, PRICE_SOURCE_TIMEOUT_MS: "2000" })
    await harness.run(scan())
    const before = await harness.run(catalogSnapshot)
    harness.edit("cards/zeta.yaml", null)
    const report = await harness.run(scan())
    expect(report.outcome).toBe("partial")
    expect(report.sources.find((s) => s.source.startsWith("http://"))).toMatchObject({ status: "unreachable" })
    expect(report.changes).toEqual([])
    expect(await harness.run(catalogSnapshot)).toEqual(before)
  })
})

describe("HTTP sources", () => {
  it("reads a card from a configured URL like a bundled file", async () => {
    const port = await freePort()
    const zetaText = Fs.readFileSync(Path.join(import.meta.dirname, "fixtures/catalog/cards/zeta.yaml"), "utf8")
    const server = Http.createServer((request, response) => {
      if (request.url === "/cards/zeta.yaml") response.writeHead(200, { "content-type": "text/yaml" }).end(zetaText)
      else response.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
    try {
      harness = await startOracle({ PRICE_CARD_URLS: `http://127.0.0.1:${port}/cards/zeta.yaml, http://127.0.0.1:${port}/missing.yaml` })
      harness.edit("cards/zeta.yaml", null)
      const report = await harness.run(scan())
      expect(report.sources.map((s) => [s.source.replace(/:\d+/, ":PORT"), s.status])).toEqual([
        [expect.stringMatching(/acme\.yaml$/), "read"],
        ["http://127.0.0.1:PORT/cards/zeta.yaml", "read"],
        ["http://127.0.0.1:PORT/missing.yaml", "unreachable"]
      ])
      expect(report.basket.members.map((m) => m.modelKey)).toContain("zeta-labs/zeta-pro")
    } finally {
      server.close()
    }
  })
})

describe("removal and liveness", () => {
  it("soft-deletes a model gone from its card and restores it when it returns", async () => {
    harness = await startOracle()
    await harness.run(scan())
    const original = Fs.readFileSync(Path.join(harness.dataDir, "cards/acme.yaml"), "utf8")
    harness.edit("cards/acme.yaml", (text) => text.slice(0, text.indexOf("  - id: acme/small-1")) + text.slice(text.indexOf("  - id: acme/small-2-preview")))
    const removed = await harness.run(scan())
    expect(removed.changes).toEqual([expect.objectContaining({ type: "ModelDeleted", model: "acme/small-1" })])
    expect(removed.basket.changes).toEqual([expect.objectContaining({ type: "ModelRemoved", modelKey: "acme/small-1" })])
    const listed = await harness.run(Effect.flatMap(CatalogRepository, (repo) => repo.catalogNow(new Date())))
    expect(listed.map((m) => m.card.id)).not.toContain("acme/small-1")
    // Its history is kept, and it comes back with it.
    expect(await harness.run(priceAt("acme/small-1", "2025-07-01"))).toBeDefined()
    harness.edit("cards/acme.yaml", () => original)
    const restored = await harness.run(scan())
    expect(restored.changes).toEqual([expect.objectContaining({ type: "ModelRestored", model: "acme/small-1" })])
    expect(restored.basket.changes).toEqual([expect.objectContaining({ type: "ModelAdded", modelKey: "acme/small-1" })])
  })

  it("drops the models of a card not seen for the liveness window from the basket", async () => {
    harness = await startOracle({ INDEX_LIVENESS_SCANS: "2" })
    await harness.run(scan())
    harness.edit("cards/acme.yaml", (text) => text.replace("name: Acme AI", "name: [broken"))
    const second = await harness.run(scan())
    expect(second.basket.members.map((m) => m.modelKey)).toContain("acme/big-2")
    const third = await harness.run(scan())
    expect(third.basket.members.map((m) => m.modelKey)).toEqual(["zeta-labs/zeta-mini", "zeta-labs/zeta-pro"])
    expect(third.basket.excluded.find((e) => e.modelKey === "acme/big-2")?.reasons).toContain(
      "not seen on its price card in the last 2 scans"
    )
    expect(third.basket.changes.map((c) => c.type)).toEqual(["ModelRemoved", "ModelRemoved"])
  })
})

describe("query plans", () => {
  it("answers the price of a model at an instant, and the catalog now, from the (model, time) index", async () => {
    harness = await startOracle()
    await harness.run(scan())
    const plan = (query: string) =>
      harness!.run(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.withTransaction(
            Effect.zipRight(
              sql.unsafe("SET LOCAL enable_seqscan = off"),
              sql.unsafe<{ queryPlan: string }>(`EXPLAIN ${query}`)
            )
          )
        ).pipe(Effect.map((rows) => rows.map((row) => Object.values(row)[0]).join("\n")))
      )
    const priceAtPlan = await plan(
      `SELECT id FROM price_rows WHERE model_id = 'acme/big-2' AND effective_from <= now()
       ORDER BY effective_from DESC, observed_at DESC, id DESC LIMIT 1`
    )
    expect(priceAtPlan).toContain("price_rows_model_time")
    expect(priceAtPlan).not.toMatch(/Sort/)
    const catalogPlan = await plan(
      `SELECT p.id FROM models m CROSS JOIN LATERAL (
         SELECT * FROM price_rows r WHERE r.model_id = m.id AND r.effective_from <= now()
         ORDER BY r.effective_from DESC, r.observed_at DESC, r.id DESC LIMIT 1) p
       WHERE m.deleted_at IS NULL`
    )
    expect(catalogPlan).toContain("price_rows_model_time")
  })
})

describe("one scan at a time", () => {
  it("refuses a scan asked for while one is running and lets the schedule skip it, whoever holds the lock", async () => {
    harness = await startOracle()
    const outcome = await harness.run(
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const priceScan = yield* PriceScan
        const release = yield* Deferred.make<void>()
        const holding = yield* Deferred.make<void>()
        const running = yield* Effect.fork(
          jobs.runExclusive(PRICE_SCAN_JOB, Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(release)))
        )
        yield* Deferred.await(holding)
        const asked = yield* Effect.exit(priceScan.run("test"))
        const scheduled = yield* priceScan.runIfIdle("schedule")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(running)
        const afterwards = yield* priceScan.run("test")
        return { asked, scheduled, afterwards }
      })
    )
    const refusal = Exit.isFailure(outcome.asked) ? Option.getOrUndefined(Cause.failureOption(outcome.asked.cause)) : undefined
    expect(refusal).toMatchObject({ _tag: "Conflict", details: { job: "price-scan" } })
    expect(outcome.scheduled).toEqual(Option.none())
    expect(outcome.afterwards.outcome).toBe("succeeded")
    // Neither refused attempt opened a scan: the one that ran is the first.
    expect(outcome.afterwards.scanId).toBe("1")
  })
})
