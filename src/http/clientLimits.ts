/**
 * What a request head may be (issue 8): a target of at most 8 KiB, headers of at most 16 KiB in all, and a target
 * that is valid percent-encoded UTF-8. Every refusal is the error envelope, never a bare status or a reset.
 *
 * Three layers answer, outermost first:
 * - Node's HTTP parser refuses a head over its own `maxHeaderSize`. `SERVER_OPTIONS` sets that well above our limits,
 *   and `installClientErrorHandler` answers what still reaches it (414/431, or 400 for a head that is not HTTP) with
 *   the envelope written on the raw socket, then closes the connection.
 * - `guardRequestHead`, the first thing the server runs for a parsed request (before the fast path and the Effect
 *   stack), answers 414/431 for a head over our limits.
 * - `wellFormedTarget`, in the request pipeline, answers 400 `bad_request` for a target that does not
 *   percent-decode, before routing (the router would otherwise miss the route, or fail while decoding a parameter).
 */
import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import * as Http from "node:http"
import type { Duplex } from "node:stream"
import { type ApiError, BadRequest, HeadersTooLarge, UriTooLong } from "../../domain/errors.ts"
import { SERVICE_DESC_LINK } from "./apiDocuments.ts"
import { isPublicPath, PUBLIC_CORS_HEADERS } from "./cors.ts"
import { renderError, renderErrorParts } from "./errorEnvelope.ts"
import { pathOf } from "./paths.ts"
import { REQUEST_ID_HEADER, requestIdOf } from "./requestContext.ts"
import { carriesServiceDescLink } from "./serviceDescLink.ts"

/** Longest request target (path and query) served. Common proxies and CDNs stop at 8 KiB as well. */
export const MAX_TARGET_BYTES = 8 * 1024
/** Most header bytes (names, values and their separators) one request may carry. */
export const MAX_HEADER_BYTES = 16 * 1024
/**
 * Node's own ceiling on a request head. Set well above ours so that `guardRequestHead` answers heads between our
 * limits and this one with a precise code; beyond it the parser refuses and `installClientErrorHandler` answers.
 */
const PARSER_MAX_HEADER_BYTES = 64 * 1024

/** Options to merge into `http.createServer(options)`. */
export const SERVER_OPTIONS = { maxHeaderSize: PARSER_MAX_HEADER_BYTES } as const satisfies Http.ServerOptions

const uriTooLong = () =>
  new UriTooLong({
    message: `The request target (path and query) exceeds ${MAX_TARGET_BYTES} bytes.`,
    details: { limitBytes: MAX_TARGET_BYTES }
  })

const headersTooLarge = () =>
  new HeadersTooLarge({
    message: `The request headers exceed ${MAX_HEADER_BYTES} bytes.`,
    details: { limitBytes: MAX_HEADER_BYTES }
  })

/** Header bytes as they came on the wire: `name: value\r\n` per field. */
const headerBytes = (rawHeaders: ReadonlyArray<string>): number => {
  let total = 0
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) total += rawHeaders[i]!.length + rawHeaders[i + 1]!.length + 4
  return total
}

/** Headers of an answer given outside the stack: what the stack would add for this path (id, link, CORS). */
const headersOutsideStack = (path: string, requestId: string): Record<string, string> => ({
  [REQUEST_ID_HEADER]: requestId,
  ...(carriesServiceDescLink(path) ? { link: SERVICE_DESC_LINK } : {}),
  ...(isPublicPath(path) ? PUBLIC_CORS_HEADERS : {})
})

/**
 * Called first for every request. Answers 414 or 431 (and closes the connection, since a body may follow) when the
 * head is over our limits, and returns true; returns false, having done nothing, otherwise.
 */
export const guardRequestHead = (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
  const target = request.url ?? "/"
  const refusal: ApiError | undefined =
    Buffer.byteLength(target) > MAX_TARGET_BYTES
      ? uriTooLong()
      : headerBytes(request.rawHeaders) > MAX_HEADER_BYTES
        ? headersTooLarge()
        : undefined
  if (refusal === undefined) return false
  const { body, headers, status } = renderErrorParts(refusal)
  const incomingId = request.headers[REQUEST_ID_HEADER]
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...headers,
    ...headersOutsideStack(pathOf(target), requestIdOf(typeof incomingId === "string" ? incomingId : undefined)),
    connection: "close"
  })
  response.end(body)
  return true
}

/**
 * The parser says only that the head overflowed, and `rawPacket` holds the bytes it had not consumed. When their
 * first line ends the request line (`... HTTP/1.1`), the overflow was in the target.
 */
const overflowInRequestLine = (packet: Buffer | undefined): boolean => {
  if (packet === undefined) return false
  const lineEnd = packet.indexOf("\r\n")
  return lineEnd !== -1 && / HTTP\/\d\.\d$/.test(packet.subarray(Math.max(0, lineEnd - 9), lineEnd).toString("latin1"))
}

/** Which refusal a parser error is; undefined when the connection is only to be dropped. */
const refusalOf = (error: NodeJS.ErrnoException & { readonly rawPacket?: Buffer }): ApiError | undefined => {
  const code = error.code ?? ""
  if (code === "HPE_HEADER_OVERFLOW") return overflowInRequestLine(error.rawPacket) ? uriTooLong() : headersTooLarge()
  if (code.startsWith("HPE_")) {
    return new BadRequest({ message: "The request is not well-formed HTTP/1.1." })
  }
  // Timeouts, resets and the like: there is no request to answer.
  return undefined
}

/**
 * Answers what Node's HTTP parser refuses with the envelope on the raw socket, then closes. Like Node's own
 * handler, it writes only when no response of this connection is on the wire, so it cannot corrupt one.
 */
export const installClientErrorHandler = (server: Http.Server): void => {
  server.on("clientError", (error: NodeJS.ErrnoException & { readonly rawPacket?: Buffer }, socket: Duplex) => {
    const inFlight = (socket as Duplex & { readonly _httpMessage?: unknown })._httpMessage
    const refusal = refusalOf(error)
    if (refusal === undefined || !socket.writable || inFlight != null) {
      socket.destroy()
      return
    }
    const { body, headers, status } = renderErrorParts(refusal)
    const head = [
      `HTTP/1.1 ${status} ${Http.STATUS_CODES[status] ?? ""}`,
      "content-type: application/json",
      `content-length: ${Buffer.byteLength(body)}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      "connection: close"
    ]
    socket.end(`${head.join("\r\n")}\r\n\r\n${body}`)
    // The client may still be sending the rest of its head: give the answer a moment to be read, then let go.
    setTimeout(() => socket.destroy(), 1_000).unref()
  })
}

const decodes = (text: string): boolean => {
  try {
    decodeURIComponent(text)
    return true
  } catch {
    return false
  }
}

const clip = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}...` : text)

/** A refusal when the target does not percent-decode to UTF-8 (`%zz`, a cut-off `%A`, `%FF`), else undefined. */
export const malformedTarget = (target: string): BadRequest | undefined => {
  const path = pathOf(target)
  const queryAt = path.length === target.length ? -1 : path.length
  if (!decodes(path)) {
    return new BadRequest({ message: `The request path is not valid percent-encoded UTF-8: ${clip(path)}` })
  }
  if (queryAt === -1) return undefined
  for (const pair of target.slice(queryAt + 1).split("&")) {
    const equals = pair.indexOf("=")
    const name = (equals === -1 ? pair : pair.slice(0, equals)).replace(/\+/g, " ")
    if (!decodes(name) || !decodes(pair.slice(equals + 1).replace(/\+/g, " "))) {
      const param = decodes(name) ? decodeURIComponent(name) : undefined
      return new BadRequest({
        message: `The query parameter ${clip(param ?? name)} is not valid percent-encoded UTF-8.`,
        ...(param === undefined ? {} : { param })
      })
    }
  }
  return undefined
}

/** Pipeline step: refuses a target that does not percent-decode, before routing. */
export const wellFormedTarget = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refusal = malformedTarget(request.url)
    return refusal === undefined ? app : Effect.succeed(renderError(refusal))
  })
