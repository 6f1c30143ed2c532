/**
 * Request bodies: only to a route that takes the method, JSON only, and at most the ceiling of SPEC "Limits"
 * (4194304 bytes), all checked before anything parses the body.
 * A declared Content-Length over the ceiling is refused without reading a byte; a body without one is
 * counted while it streams and refused the moment it passes the ceiling. Nothing larger than the
 * ceiling is ever held in memory, and the rest of an over-long body is discarded, not buffered.
 * A JSON body nesting deeper than MAX_BODY_DEPTH is refused when it is read (422), and an empty body is read as JSON
 * whatever type it declares.
 */
import { Headers, type HttpApp, HttpServerError, HttpServerRequest, UrlParams } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Stream } from "effect"
import type * as Http from "node:http"
import { BadRequest, PayloadTooLarge, ValidationFailed } from "../../domain/errors.ts"
import { MAX_BODY_DEPTH, nestsDeeperThan } from "../../domain/exchange/translate/parseIssues.ts"
import { renderError } from "./errorEnvelope.ts"
import { routeMiss } from "./errorTranslation.ts"
import { pathOf } from "./paths.ts"
import type { RouteTable } from "./routeTable.ts"

export const MAX_BODY_BYTES = 4_194_304

/** Bytes of an over-long body we are willing to read and throw away before dropping the connection. */
const MAX_DISCARD_BYTES = 64 * 1024 * 1024

const tooLarge = () =>
  renderError(
    new PayloadTooLarge({
      message: `The request body exceeds the ${MAX_BODY_BYTES}-byte limit.`,
      details: { limitBytes: MAX_BODY_BYTES }
    })
  )

/** Reads and drops what is left of a refused body, so the connection can carry the 413 and live on. */
const discardRest = (source: Http.IncomingMessage) => {
  let discarded = 0
  source.removeAllListeners("data")
  source.on("data", (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > MAX_DISCARD_BYTES) source.socket.destroy()
  })
  source.resume()
}

type ReadOutcome = { readonly _tag: "Complete"; readonly body: Buffer } | { readonly _tag: "TooLarge" }

export const readWithin = (source: Http.IncomingMessage, limit: number) =>
  Effect.async<ReadOutcome, Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        chunks.length = 0
        discardRest(source)
        resume(Effect.succeed({ _tag: "TooLarge" }))
      } else {
        chunks.push(chunk)
      }
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed({ _tag: "Complete", body: Buffer.concat(chunks, size) }))
    }
    const onError = (error: Error) => {
      cleanup()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(cleanup)
  })

/**
 * The same request, answering body reads from the bytes already read. Everything else (headers, url,
 * the response it is bound to) is the original's.
 */
const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  body: Buffer
): HttpServerRequest.HttpServerRequest => {
  const decodeError = (cause: unknown) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
  const text = Effect.sync(() => body.toString("utf8"))
  return Object.create(request, {
    text: { value: text },
    json: {
      value: Effect.flatMap(text, (content) =>
        Effect.try({ try: () => (content === "" ? null : (JSON.parse(content) as unknown)), catch: decodeError })
      ).pipe(Effect.tap((json) => (nestsDeeperThan(json, MAX_BODY_DEPTH) ? Effect.die(tooDeep()) : Effect.void)))
    },
    arrayBuffer: {
      value: Effect.sync(() => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer)
    },
    urlParamsBody: {
      value: Effect.flatMap(text, (content) =>
        Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(content)), catch: decodeError })
      )
    },
    stream: { value: Stream.succeed(new Uint8Array(body)) },
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) =>
        withBody(request.modify(options), body)
    }
  }) as HttpServerRequest.HttpServerRequest
}

/**
 * The inference decoder's depth rule (domain/exchange/translate/parseIssues.ts), applied to every JSON body: the
 * payload validator formats a refused value recursively, and thousands of levels overflow the stack (a 500). Raised as a
 * defect, not a read error, so a route that maps read errors to its own refusal still answers this one; the error
 * translation renders it as the 422 the inference routes give.
 */
const tooDeep = () =>
  new ValidationFailed({ message: `The body nests deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`, param: "" })

const carriesBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const length = request.headers["content-length"]
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")
}

/** Every body this API takes is JSON; a request that says it is something else is refused before reading. */
export const isJsonOrUnspecified = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return true
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
  return mediaType === "application/json" || mediaType.endsWith("+json")
}

export const requestBody =
  (routes: RouteTable) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!carriesBody(request)) {
        if (isJsonOrUnspecified(request.headers["content-type"])) return yield* app
        // No body under a type that is not JSON: the platform would read the nothing with that type's reader (the
        // multipart one never finishes, and fails without a boundary; the form one makes `{}` of it). It is read as
        // the empty JSON body it is: a route that takes a body refuses it as missing, one that takes none is unaffected.
        const asJson = request.modify({ headers: Headers.set(request.headers, "content-type", "application/json") })
        return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody(asJson, Buffer.alloc(0)))
      }
      // Method before body: a body sent to a path or method no route takes is refused for that (404/405), whatever
      // its size or type, and never read.
      const path = pathOf(request.url)
      if (!routes.methodsAt(path).includes(request.method)) {
        discardRest(NodeHttpServerRequest.toIncomingMessage(request))
        return renderError(routeMiss(request.method, path, routes))
      }
      const contentType = request.headers["content-type"]
      if (!isJsonOrUnspecified(contentType)) {
        discardRest(NodeHttpServerRequest.toIncomingMessage(request))
        return renderError(
          new BadRequest({ message: `Request bodies are JSON: send Content-Type: application/json (got ${contentType}).` })
        )
      }
      const source = NodeHttpServerRequest.toIncomingMessage(request)
      const declared = Number(request.headers["content-length"] ?? "0")
      if (declared > MAX_BODY_BYTES) {
        discardRest(source)
        return tooLarge()
      }
      const outcome = yield* Effect.either(readWithin(source, MAX_BODY_BYTES))
      if (outcome._tag === "Left") return renderError(new BadRequest({ message: "The request body could not be read." }))
      if (outcome.right._tag === "TooLarge") return tooLarge()
      return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody(request, outcome.right.body))
    }) as HttpApp.Default<E, R>
