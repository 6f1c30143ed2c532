/**
 * The daily scan runs on its own: at start when no scan is recent enough, not again until the interval has
 * passed, and never when switched off.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixturesDir } from "./support/catalogFixtures.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer } from "./support/server.ts"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  await database?.close()
})

const scans = async () => {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return (await client.query<{ trigger: string; outcome: string | null }>("SELECT trigger, outcome FROM price_scans ORDER BY id")).rows
  } finally {
    await client.end()
  }
}

const eventually = async <A>(probe: () => Promise<A>, accept: (a: A) => boolean, timeoutMs = 20_000): Promise<A> => {
  const started = Date.now()
  for (;;) {
    const value = await probe()
    if (accept(value) || Date.now() - started > timeoutMs) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("the scheduled price scan", () => {
  it("is off when PRICE_SCAN_INTERVAL_HOURS is 0", async () => {
    const server = await startTestServer({ DATABASE_URL: database.url, PRICE_DATA_DIR: fixturesDir, PRICE_SCAN_INTERVAL_HOURS: "0" })
    try {
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(await scans()).toEqual([])
    } finally {
      await server.close()
    }
  })

  it("scans at start, and a restart within the interval does not scan again", async () => {
    const env = { DATABASE_URL: database.url, PRICE_DATA_DIR: fixturesDir, PRICE_SCAN_INTERVAL_HOURS: "24" }
    const first = await startTestServer(env)
    try {
      const done = await eventually(scans, (rows) => rows.length === 1 && rows[0]!.outcome !== null)
      expect(done).toEqual([{ trigger: "boot", outcome: "succeeded" }])
    } finally {
      await first.close()
    }
    const second = await startTestServer(env)
    try {
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(await scans()).toHaveLength(1)
    } finally {
      await second.close()
    }
  })
})
