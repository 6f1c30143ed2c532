/**
 * `npm run migrate`: the same migrations the service runs at boot, on demand, saying what it did.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { fixturesDir } from "./support/catalogFixtures.ts"
import { cleanEnv, startProcess } from "./support/process.ts"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  await database?.close()
})

const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const cli = startProcess(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], cleanEnv(env))
  const code = await cli.exited
  return { code, output: cli.output() }
}

describe("npm run migrate", () => {
  it("applies pending migrations, then finds nothing to do", async () => {
    const first = await runCli(["migrate"], { DATABASE_URL: database.url, LOG_LEVEL: "WARN" })
    expect(first.code).toBe(0)
    expect(first.output).toMatch(/applied 24 migration\(s\): 0001_foundation, 0002_catalog, 0003_revisions, 0004_identity, 0005_ledger, 0006_api_keys, 0007_funding, 0008_withdrawals, 0009_generations, 0010_ledger_functions, 0011_routing, 0012_points_referrals, 0013_organizations, 0014_pools, 0015_app_grants, 0016_transfers, 0017_key_holders, 0018_generation_logs, 0019_settle_batch, 0020_price_sources, 0021_stored_responses, 0022_embedding_models, 0023_embeddings_format, 0024_repeatable_migrations\n/)
    const second = await runCli(["migrate"], { DATABASE_URL: database.url, LOG_LEVEL: "WARN" })
    expect(second.code).toBe(0)
    expect(second.output).toMatch(/schema is current; nothing to apply/)
  }, 60_000)

  it("refuses an unknown command with its usage and a non-zero exit", async () => {
    const result = await runCli(["frobnicate"], {})
    expect(result.code).toBe(2)
    expect(result.output).toMatch(/unknown command "frobnicate"/)
    expect(result.output).toMatch(/migrate/)
  }, 30_000)
})

describe("npm run oracle -- scan", () => {
  it("loads the cards into a fresh database and prints the basket with reasons", async () => {
    const fresh = await createTestDatabase()
    try {
      const result = await runCli(["oracle", "scan"], {
        DATABASE_URL: fresh.url,
        PRICE_DATA_DIR: fixturesDir,
        LOG_LEVEL: "WARN"
      })
      expect(result.code).toBe(0)
      expect(result.output).toMatch(/price scan #1 \(cli\): succeeded/)
      expect(result.output).toMatch(/READ +test\/fixtures\/catalog\/cards\/acme\.yaml \(acme, 5 models\)/)
      expect(result.output).toMatch(/basket as of .*: 4 families/)
      expect(result.output).toMatch(/ModelAdded +Zeta Pro enters as the representative of zeta\.flagship/)
      const again = await runCli(["oracle", "scan"], { DATABASE_URL: fresh.url, PRICE_DATA_DIR: fixturesDir, LOG_LEVEL: "WARN" })
      expect(again.output).toMatch(/catalog changes: none/)
      expect(again.output).toMatch(/basket changes: none/)
    } finally {
      await fresh.close()
    }
  }, 60_000)

  it("loads the bundled cards by default", async () => {
    const fresh = await createTestDatabase()
    try {
      const result = await runCli(["oracle", "scan"], { DATABASE_URL: fresh.url, LOG_LEVEL: "WARN" })
      expect(result.code).toBe(0)
      for (const provider of ["anthropic", "google", "openai", "xai", "deepseek", "mistral", "alibaba", "moonshot"]) {
        expect(result.output).toMatch(new RegExp(`READ +data/cards/${provider}\\.yaml \\(${provider}, \\d+ models\\)`))
      }
      const size = Number(/basket as of .*: (\d+) families/.exec(result.output)![1])
      expect(size).toBeGreaterThanOrEqual(18)
    } finally {
      await fresh.close()
    }
  }, 60_000)

  it("fails when no card can be read", async () => {
    const result = await runCli(["oracle", "scan"], { DATABASE_URL: database.url, PRICE_DATA_DIR: "/nonexistent", LOG_LEVEL: "WARN" })
    expect(result.code).toBe(1)
    expect(result.output).toMatch(/: failed in/)
    expect(result.output).toMatch(/error: no price card could be read/)
  }, 60_000)
})

/** A DATA_DIR no service runs on, so the command runs here rather than being sent to one. */
const emptyDataDir = () => Fs.mkdtemp(Path.join(Os.tmpdir(), "provenance-"))

describe("npm run oracle -- provenance", () => {
  it("prints the marks of the prices in force per provider, reading the cards only", async () => {
    const result = await runCli(["oracle", "provenance", "--verbose"], { DATA_DIR: await emptyDataDir(), PRICE_DATA_DIR: fixturesDir, LOG_LEVEL: "WARN" })
    expect(result.code).toBe(0)
    expect(result.output).toMatch(/reading the price cards \(.*test\/fixtures\/catalog\/cards and any PRICE_CARD_URLS\)/)
    // acme/embed-1, an embedding model, has one number: its input price.
    expect(result.output).toMatch(/\nacme +5 +15 +15 \(100\.0%\) +0 +0\n/)
    expect(result.output).toMatch(/\nzeta +2 +5 +2 \(40\.0%\) +3 +0\n/)
    expect(result.output).toMatch(/zeta-labs\/zeta-pro cachedInput \(from 2025-07-15\): 10% of input/)
  }, 60_000)

  it("reports the cards it could not read and exits non-zero", async () => {
    const result = await runCli(["oracle", "provenance"], {
      DATA_DIR: await emptyDataDir(),
      PRICE_DATA_DIR: fixturesDir,
      PRICE_CARD_URLS: "http://127.0.0.1:9/card.yaml",
      LOG_LEVEL: "WARN"
    })
    expect(result.code).toBe(1)
    expect(result.output).toMatch(/\nacme +5 +15/)
    expect(result.output).toMatch(/http:\/\/127\.0\.0\.1:9\/card\.yaml: unreachable/)
    expect(result.output).toMatch(/error: some price cards could not be read; the report leaves them out/)
  }, 60_000)
})
