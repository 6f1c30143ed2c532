/**
 * A real server on a real loopback socket for HTTP suites: the product's own layers (ProbeApi adds
 * test-only routes), configured through the same Config module as `npm start`.
 */
import { Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeMainLayer } from "../../layers/Main.ts"
import { FixedClock } from "../../layers/Test.ts"
import { startLayer } from "./harness.ts"
import { freePort } from "./ports.ts"
import { ProbeApi, ProbeHandlers } from "./probeApi.ts"

export { freePort }

export interface TestServer {
  readonly baseUrl: string
  readonly port: number
  readonly close: () => Promise<void>
}

/**
 * A clock that always reads `at` (sleeps still take real time): two servers pinned to the same instant build
 * byte-identical snapshots from the same data, so their answers can be compared byte for byte.
 */

export interface TestServerOptions {
  /** Pins the service's clock to this instant. */
  readonly frozenAt?: Date
}

export const startTestServer = async (env: Record<string, string>, options: TestServerOptions = {}): Promise<TestServer> => {
  const port = await freePort()
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-server-"))
  const main = makeMainLayer(ProbeApi, ProbeHandlers)
  const layer = options.frozenAt === undefined ? main : main.pipe(Layer.provide(FixedClock(options.frozenAt)))
  const started = await startLayer(layer, {
    HOST: "127.0.0.1",
    PORT: String(port),
    LOG_LEVEL: "WARN",
    LOG_FORMAT: "json",
    DATA_DIR: dataDir,
    EMBEDDED_CHAIN_PORT: String(await freePort()),
    // Suites that test the scan, the sync or the replay start them themselves.
    PRICE_SCAN_INTERVAL_HOURS: "0",
    CHAIN_SYNC_INTERVAL_SECONDS: "0",
    ...env
  })
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      await started.close()
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
