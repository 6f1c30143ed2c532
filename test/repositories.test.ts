/**
 * Repositories decode what they read (DESIGN.md sections 3 and 9): stored data that does not fit its schema is a
 * defect at the repository boundary (a 500 over HTTP), never garbage handed on. Each case writes one corrupt row
 * straight into the database, as a bad migration or a hand edit would, with a plain INSERT (no trigger bypassed).
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Option, ParseResult } from "effect"
import pg from "pg"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { CatalogRepository } from "../services/oracle/CatalogRepository.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { CorruptStoredData } from "../services/platform/RepositoryBoundary.ts"
import { at, fixturesDir } from "./support/catalogFixtures.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { type OracleHarness, startOracle } from "./support/oracle.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

const HASH = `0x${"ab".repeat(32)}`
const TX = `0x${"cd".repeat(32)}`

/** The defect an exit died with; fails the test when the exit is anything else (a success, a plain failure). */
const defectOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isSuccess(exit)) return undefined
  expect(Cause.isDie(exit.cause)).toBe(true)
  expect(Cause.isFailure(exit.cause)).toBe(false)
  return Option.getOrUndefined(Cause.dieOption(exit.cause))
}

const insertConfirmedRevision = (manifestJcs: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO revisions (revision_version, methodology_version, scu_usd18, content_hash, metadata_hash, manifest_jcs,
                             status, tx_hash, published_at, confirmed_at)
      VALUES (1, 1, 1000000000000000, ${HASH}, ${HASH}, ${manifestJcs}, 'CONFIRMED', ${TX}, now(), now())`
  )

describe("reading corrupt stored data", () => {
  let harness: OracleHarness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  const scanned = async () => {
    harness = await startOracle()
    await harness.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
    return harness
  }

  it("dies on a price row without its input price, rather than serving a price with a hole in it", async () => {
    const h = await scanned()
    await h.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`
          WITH scan AS (SELECT max(id) AS id FROM price_scans),
               row AS (INSERT INTO price_rows (model_id, effective_from, scan_id, source_url, fingerprint)
                       SELECT 'acme/small-1', '2026-02-01', id, 'https://acme.example/pricing', 'corrupt' FROM scan RETURNING id)
          INSERT INTO price_components (price_row_id, component, usd18, provenance)
          SELECT id, 'output', 400000000000000000, 'verified' FROM row`
      )
    )
    const priceAt = await h.run(Effect.exit(Effect.flatMap(CatalogRepository, (repo) => repo.priceAt("acme/small-1", at("2026-03-01")))))
    const defect = defectOf(priceAt)
    expect(defect).toBeInstanceOf(CorruptStoredData)
    expect((defect as CorruptStoredData).message).toMatch(/acme\/small-1 has no input price/)
    // Before the corrupt entry took effect, the model's price still reads.
    const earlier = await h.run(Effect.flatMap(CatalogRepository, (repo) => repo.priceAt("acme/small-1", at("2026-01-01"))))
    expect(earlier?.input.usd18).toBe(100_000_000_000_000_000n)
    expect(defectOf(await h.run(Effect.exit(Effect.flatMap(CatalogRepository, (repo) => repo.modelsWithHistory))))).toBeInstanceOf(
      CorruptStoredData
    )
  })

  it("dies on a stored basket whose price is not an integer number of usd18", async () => {
    const h = await scanned()
    await h.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`
          INSERT INTO price_scans (trigger, finished_at, outcome, basket) VALUES ('test', now(), 'succeeded', ${JSON.stringify({
            asOf: "2026-01-01T00:00:00.000Z",
            members: [
              {
                family: "acme.small",
                modelKey: "acme/small-1",
                displayName: "Small 1",
                providerKey: "acme",
                sdkId: "small-1",
                inputPrice18: "0.1",
                outputPrice18: "400000000000000000",
                priceFrom: "2025-06-01T00:00:00.000Z"
              }
            ]
          })}::jsonb)`
      )
    )
    const defect = defectOf(await h.run(Effect.exit(Effect.flatMap(PriceScan, (scan) => scan.currentBasket))))
    expect(ParseResult.isParseError(defect)).toBe(true)
    expect(String((defect as ParseResult.ParseError).message)).toMatch(/inputPrice18/)
  })

  it("dies on a revision whose stored manifest is not a manifest", async () => {
    const h = await scanned()
    await h.run(insertConfirmedRevision(JSON.stringify({ schemaVersion: 1, revisionVersion: 1, models: "none" })))
    const reads: ReadonlyArray<(r: RevisionRepository) => Effect.Effect<unknown>> = [(r) => r.confirmed, (r) => r.latestConfirmed]
    for (const read of reads) {
      const defect = defectOf(await h.run(Effect.exit(Effect.provide(Effect.flatMap(RevisionRepository, read), RevisionRepository.Default))))
      expect(ParseResult.isParseError(defect)).toBe(true)
    }
  })

  it("dies on a manifest that is not JSON at all, and on a reconstitution-log entry of an unknown change type", async () => {
    const h = await scanned()
    await h.run(insertConfirmedRevision("{not json"))
    await h.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`
          INSERT INTO reconstitution_log (revision_version, published_at, methodology_version, summary, scu_after_usd18, changes, tx_hash)
          VALUES (1, now(), 1, 'Genesis', 1000000000000000, ${JSON.stringify([{ type: "ModelExploded", modelKey: "acme/x", description: "?" }])}::jsonb, ${TX})`
      )
    )
    const repository = <A>(read: (r: RevisionRepository) => Effect.Effect<A>) =>
      h.run(Effect.exit(Effect.provide(Effect.flatMap(RevisionRepository, read), RevisionRepository.Default)))
    expect(ParseResult.isParseError(defectOf(await repository((r) => r.byVersion(1))))).toBe(true)
    expect(ParseResult.isParseError(defectOf(await repository((r) => r.log)))).toBe(true)
  })
})

describe("corrupt stored data over HTTP", () => {
  const TOKEN = "maintainer-secret-for-tests"
  let database: TestDatabase
  let server: TestServer

  beforeAll(async () => {
    database = await createTestDatabase()
    server = await startTestServer({ DATABASE_URL: database.url, PRICE_DATA_DIR: fixturesDir, MAINTAINER_TOKEN: TOKEN })
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await database?.close()
  })

  const revisions = () => fetch(`${server.baseUrl}/v1/admin/revisions`, { headers: { authorization: `Bearer ${TOKEN}` } })

  it("answers 500 internal_error, with nothing of the row in the body", async () => {
    expect((await revisions()).status).toBe(200)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      await client.query(
        `INSERT INTO revisions (revision_version, methodology_version, scu_usd18, content_hash, metadata_hash, manifest_jcs,
                                status, tx_hash, published_at, confirmed_at)
         VALUES (1, 1, 1000000000000000, $1, $1, '{"schemaVersion":"one"}', 'CONFIRMED', $2, now(), now())`,
        [HASH, TX]
      )
    } finally {
      await client.end()
    }
    const response = await revisions()
    expect(response.status).toBe(500)
    const body = (await response.json()) as { error: { code: string; type: string; message: string } }
    expect(body.error).toMatchObject({ code: "internal_error", type: "server_error" })
    expect(body.error.message).not.toMatch(/schemaVersion|manifest/)
  })
})
