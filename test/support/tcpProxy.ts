/**
 * A loopback TCP proxy in front of the test database, so a suite can make the database unreachable
 * (and reachable again) underneath a running server.
 */
import * as Net from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Drops every open connection and refuses new ones. */
  readonly cut: () => void
  readonly restore: () => void
  readonly close: () => Promise<void>
}

export const startTcpProxy = (target: { host: string; port: number }): Promise<TcpProxy> =>
  new Promise((resolve, reject) => {
    let open = true
    const sockets = new Set<Net.Socket>()
    const server = Net.createServer((client) => {
      if (!open) return client.destroy()
      const upstream = Net.connect(target)
      sockets.add(client).add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
      client.pipe(upstream).pipe(client)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      resolve({
        port: (server.address() as Net.AddressInfo).port,
        cut: () => {
          open = false
          for (const socket of sockets) socket.destroy()
          sockets.clear()
        },
        restore: () => {
          open = true
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
