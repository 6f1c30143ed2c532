/**
 * The oracle's services over a per-suite test database, configured like the service (through Config), with a
 * private copy of a price-data directory that a test may edit between scans.
 */
import type { SqlClient } from "@effect/sql"
import { type Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseLive } from "../../layers/Database.ts"
import { OracleLive } from "../../layers/Oracle.ts"
import type { CatalogRepository } from "../../services/oracle/CatalogRepository.ts"
import type { PriceScan } from "../../services/oracle/PriceScan.ts"
import type { Jobs } from "../../services/platform/Jobs.ts"
import { fixturesDir } from "./catalogFixtures.ts"
import { createMigratedDatabase, type TestDatabase } from "./database.ts"
import { startLayer } from "./harness.ts"

export type OracleServices = PriceScan | CatalogRepository | Jobs | SqlClient.SqlClient

export interface OracleHarness {
  readonly dataDir: string
  readonly database: TestDatabase
  readonly run: <A, E>(effect: Effect.Effect<A, E, OracleServices>) => Promise<A>
  /** Rewrites a file of the private data directory (relative path), or removes it with `null`. */
  readonly edit: (file: string, change: ((text: string) => string) | null) => void
  readonly close: () => Promise<void>
}

export const startOracle = async (env: Record<string, string> = {}, database?: TestDatabase): Promise<OracleHarness> => {
  const db = database ?? (await createMigratedDatabase())
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-prices-"))
  Fs.cpSync(fixturesDir, dataDir, { recursive: true })
  const started = await startLayer(OracleLive.pipe(Layer.provideMerge(DatabaseLive)), {
    DATABASE_URL: db.url,
    PRICE_DATA_DIR: dataDir,
    LOG_LEVEL: "WARN",
    ...env
  })
  return {
    dataDir,
    database: db,
    run: started.run,
    edit: (file, change) => {
      const path = Path.join(dataDir, file)
      if (change === null) Fs.rmSync(path)
      else Fs.writeFileSync(path, change(Fs.readFileSync(path, "utf8")))
    },
    close: async () => {
      await started.close()
      Fs.rmSync(dataDir, { recursive: true, force: true })
      if (database === undefined) await db.close()
    }
  }
}
