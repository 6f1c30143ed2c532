/**
 * The baseline of `npm run bench:oracle`: a bare `node:http` server, in its own process like the service,
 * answering every request with one fixed body and content-type (sent by the parent over IPC). It tells the
 * parent its port over IPC and exits when the parent disconnects or sends SIGTERM.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface BareServerRequest {
  readonly bodyBase64: string
  readonly contentType: string
}

export interface BareServerReady {
  readonly port: number
}

const send = (message: BareServerReady) => {
  if (process.send === undefined) throw new Error("bench/bareServer.ts must be started with an IPC channel (child_process.fork)")
  process.send(message)
}

process.once("message", (message: BareServerRequest) => {
  const body = Buffer.from(message.bodyBase64, "base64")
  const headers = { "content-type": message.contentType, "content-length": String(body.length) }
  const server = Http.createServer((request, response) => {
    // Drain whatever the client sent, then answer with the same bytes every time.
    request.resume()
    response.writeHead(200, headers)
    response.end(body)
  })
  server.listen(0, "127.0.0.1", () => send({ port: (server.address() as AddressInfo).port }))
  const stop = () => {
    server.close(() => process.exit(0))
    server.closeAllConnections()
  }
  process.once("SIGTERM", stop)
  process.once("disconnect", stop)
})
