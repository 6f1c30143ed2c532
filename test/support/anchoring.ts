/**
 * The oracle with its anchoring (publication, sync, replay) over a per-suite database and either the embedded
 * chain (DATA_DIR, EMBEDDED_CHAIN_PORT) or a test anvil given by RPC_URL, configured through Config.
 */
import type { SqlClient } from "@effect/sql"
import { type Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseLive } from "../../layers/Database.ts"
import { AnchoringLive } from "../../layers/Oracle.ts"
import type { Layer as L } from "effect"
import { fixturesDir } from "./catalogFixtures.ts"
import { createMigratedDatabase, type TestDatabase } from "./database.ts"
import { startLayer } from "./harness.ts"
import { freePort } from "./ports.ts"

type AnchoringServices = L.Layer.Success<typeof AnchoringLive> | SqlClient.SqlClient

export interface AnchoringHarness {
  readonly dataDir: string
  readonly priceDir: string
  readonly database: TestDatabase
  readonly run: <A, E>(effect: Effect.Effect<A, E, AnchoringServices>) => Promise<A>
  readonly edit: (file: string, change: (text: string) => string) => void
  readonly close: () => Promise<void>
  /** Stops the services but keeps database, data and price directories, as a process exit would. */
  readonly stop: () => Promise<void>
}

export const startAnchoring = async (
  env: Record<string, string> = {},
  reuse?: { database: TestDatabase; dataDir: string; priceDir: string }
): Promise<AnchoringHarness> => {
  const database = reuse?.database ?? (await createMigratedDatabase())
  const dataDir = reuse?.dataDir ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-anchor-"))
  const priceDir = reuse?.priceDir ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-prices-"))
  if (reuse === undefined) Fs.cpSync(fixturesDir, priceDir, { recursive: true })
  const started = await startLayer(AnchoringLive.pipe(Layer.provideMerge(DatabaseLive)), {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PRICE_DATA_DIR: priceDir,
    EMBEDDED_CHAIN_PORT: String(await freePort()),
    LOG_LEVEL: "WARN",
    ...env
  })
  return {
    dataDir,
    priceDir,
    database,
    run: started.run,
    edit: (file, change) => {
      const path = Path.join(priceDir, file)
      Fs.writeFileSync(path, change(Fs.readFileSync(path, "utf8")))
    },
    stop: started.close,
    close: async () => {
      await started.close()
      if (reuse === undefined) {
        Fs.rmSync(dataDir, { recursive: true, force: true })
        Fs.rmSync(priceDir, { recursive: true, force: true })
        await database.close()
      }
    }
  }
}
