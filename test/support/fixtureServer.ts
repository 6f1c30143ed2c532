/**
 * A real server over a test database of its own that has replayed the fixture history (test/fixtures/catalog: four
 * revisions, genesis 2025-06-17, 2025-07-22, 2025-09-08 version change, 2025-12-02 held price change) on its embedded
 * chain, for the suites that read the oracle over a socket.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fixturesDir } from "./catalogFixtures.ts"
import { createMigratedDatabase, type TestDatabase } from "./database.ts"
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts"

export const FIXTURE_REVISIONS = 4

export interface FixtureServer extends TestServer {
  readonly database: TestDatabase
  /** The server's private copy of the fixture price cards. */
  readonly priceDir: string
}

export interface FixtureServerOptions extends TestServerOptions {
  /** Edits the private copy of the price cards before the server reads them. */
  readonly editPrices?: (priceDir: string) => void
}

/** Waits until the server serves the fixture history's last revision (each poll as a client of its own). */
const awaitReplay = async (server: TestServer) => {
  for (let poll = 0; poll < 150; poll++) {
    const response = await fetch(`${server.baseUrl}/v1/oracle/health`, { headers: { "x-forwarded-for": `192.0.2.${(poll % 250) + 1}` } })
    if (response.ok && ((await response.json()) as { latestRevisionVersion: number | null }).latestRevisionVersion === FIXTURE_REVISIONS) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`the fixture history was not replayed within 30 s (revision ${FIXTURE_REVISIONS} never confirmed)`)
}

export const startFixtureServer = async (env: Record<string, string> = {}, options: FixtureServerOptions = {}): Promise<FixtureServer> => {
  const database = await createMigratedDatabase()
  const priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-fixture-prices-"))
  Fs.cpSync(fixturesDir, priceDir, { recursive: true })
  const cleanUp = async () => {
    await database.close()
    Fs.rmSync(priceDir, { recursive: true, force: true })
  }
  try {
    options.editPrices?.(priceDir)
    // The boot scan loads the cards; the history replay follows it.
    const server = await startTestServer({ DATABASE_URL: database.url, PRICE_DATA_DIR: priceDir, PRICE_SCAN_INTERVAL_HOURS: "24", ...env }, options)
    try {
      await awaitReplay(server)
    } catch (error) {
      await server.close()
      throw error
    }
    return {
      ...server,
      database,
      priceDir,
      close: async () => {
        await server.close()
        await cleanUp()
      }
    }
  } catch (error) {
    await cleanUp()
    throw error
  }
}
