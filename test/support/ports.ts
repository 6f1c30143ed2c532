/**
 * Free loopback ports, for suites that only start processes: this module loads nothing of the product (server.ts,
 * which re-exports it, loads the whole service with its layers, several seconds of a suite's collection).
 */
import * as Net from "node:net"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })
