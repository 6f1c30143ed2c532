/**
 * A real server on a real loopback socket for HTTP suites: the product's own layers (ProbeApi adds
 * test-only routes), configured through the same Config module as `npm start`.
 */
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeMainLayer } from "../../layers/Main.ts"
import { ProbeApi, ProbeHandlers } from "./probeApi.ts"

export interface TestServer {
  readonly baseUrl: string
  readonly port: number
  readonly close: () => Promise<void>
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })

export const startTestServer = async (env: Record<string, string>): Promise<TestServer> => {
  const port = await freePort()
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-server-"))
  const provider = ConfigProvider.fromMap(
    new Map(
      Object.entries({
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
    )
  )
  const layer = makeMainLayer(ProbeApi, ProbeHandlers).pipe(Layer.provide(Layer.setConfigProvider(provider)))
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
