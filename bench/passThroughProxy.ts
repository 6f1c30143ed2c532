/**
 * The "bare proxy" target of `npm run bench:exchange`: a `node:http` pass-through in its own process, forwarding
 * every request (method, path, headers, body) to one upstream over a keep-alive agent and piping the upstream's
 * answer back as it comes (status, headers, body), with no parsing of either body. It is the floor a gateway's
 * overhead is measured against: one more process and one more HTTP hop, nothing else.
 *
 * The upstream's origin comes from the parent over IPC (`PassThroughProxyRequest`); the proxy answers with the port it
 * listens on (`PassThroughProxyReady`) and exits when the parent disconnects or sends SIGTERM.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface PassThroughProxyRequest {
  /** `http://host:port` of the upstream. */
  readonly upstream: string
}

export interface PassThroughProxyReady {
  readonly port: number
}

const send = (message: PassThroughProxyReady) => {
  if (process.send === undefined) throw new Error("bench/passThroughProxy.ts must be started with an IPC channel (child_process.fork)")
  process.send(message)
}

/** Hop-by-hop headers (RFC 9110 7.6.1) are the connection's own, not the message's. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"])

const forwardable = (headers: Http.IncomingHttpHeaders | Http.IncomingMessage["headers"]): Http.OutgoingHttpHeaders => {
  const out: Http.OutgoingHttpHeaders = {}
  for (const name in headers) {
    if (!HOP_BY_HOP.has(name)) out[name] = headers[name]
  }
  return out
}

process.once("message", (message: PassThroughProxyRequest) => {
  const upstream = new URL(message.upstream)
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 })
  const server = Http.createServer({ keepAliveTimeout: 65_000 }, (request, response) => {
    const headers = forwardable(request.headers)
    headers["host"] = upstream.host
    const outgoing = Http.request(
      { agent, hostname: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, forwardable(answer.headers))
        answer.pipe(response)
      }
    )
    outgoing.on("error", (error) => {
      if (!response.headersSent) {
        response.writeHead(502, { "content-type": "text/plain" })
        response.end(`upstream error: ${error.message}`)
      } else {
        response.destroy(error)
      }
    })
    // A client that goes away takes its upstream request with it.
    response.on("close", () => {
      if (!response.writableFinished) outgoing.destroy()
    })
    request.pipe(outgoing)
  })
  server.listen(0, "127.0.0.1", () => send({ port: (server.address() as AddressInfo).port }))
  const stop = () => {
    server.close(() => process.exit(0))
    server.closeAllConnections()
    agent.destroy()
  }
  process.once("SIGTERM", stop)
  process.once("disconnect", stop)
})
