/**
 * The vendor simulator: a plain node:http server speaking OpenAI chat completions and embeddings, Anthropic messages
 * and Gemini generateContent and embedContent, with scripted faults and a request log under `/__control/`. Never
 * loaded by the product.
 */
import * as Http from "node:http"
import { anthropicVendor, prepareCountTokens, prepareMessages } from "./anthropic.ts"
import { prepareGeminiEmbeddings, prepareOpenAIEmbeddings, type GeminiEmbedMethod } from "./embeddings.ts"
import { FaultBook, parseFault, RequestLog, type Fault } from "./faults.ts"
import { geminiVendor, prepareGemini, type GeminiMethod } from "./gemini.ts"
import {
  json,
  readBody,
  writeJson,
  writeMalformed,
  writePaced,
  writeReply,
  writeThenDrop,
  writeThenStall,
  writeTrickle,
  type Prepared,
  type Reply,
  type Vendor
} from "./http.ts"
import { openaiVendor, prepareOpenAI } from "./openai.ts"
import { BreakpointCache, PrefixMemory, type Memory } from "./cache.ts"

export interface SimulatorOptions {
  readonly port?: number
  readonly host?: string
}

export interface Simulator {
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
}

type Route =
  | { readonly vendor: Vendor; readonly kind: "openai" }
  | { readonly vendor: Vendor; readonly kind: "openai-embeddings" }
  | { readonly vendor: Vendor; readonly kind: "anthropic"; readonly count: boolean }
  | { readonly vendor: Vendor; readonly kind: "gemini"; readonly model: string; readonly method: GeminiMethod }
  | { readonly vendor: Vendor; readonly kind: "gemini-embeddings"; readonly model: string; readonly method: GeminiEmbedMethod }

const GEMINI_PATH =
  /^\/(?:v1beta|v1|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$/

const routeOf = (method: string | undefined, path: string): Route | undefined => {
  if (method !== "POST") return undefined
  switch (path) {
    case "/v1/chat/completions":
    case "/chat/completions":
      return { vendor: openaiVendor, kind: "openai" }
    case "/v1/embeddings":
    case "/embeddings":
      return { vendor: openaiVendor, kind: "openai-embeddings" }
    case "/v1/messages":
      return { vendor: anthropicVendor, kind: "anthropic", count: false }
    case "/v1/messages/count_tokens":
      return { vendor: anthropicVendor, kind: "anthropic", count: true }
  }
  const gemini = GEMINI_PATH.exec(path)
  if (gemini) {
    const model = decodeURIComponent(gemini[1]!)
    const method = gemini[2]!
    if (method === "embedContent" || method === "batchEmbedContents") return { vendor: geminiVendor, kind: "gemini-embeddings", model, method }
    return { vendor: geminiVendor, kind: "gemini", model, method: method as GeminiMethod }
  }
  return undefined
}

const prepare = (route: Route, body: unknown, query: string, memory: Memory): Prepared | Reply => {
  switch (route.kind) {
    case "openai":
      return prepareOpenAI(body, memory)
    case "openai-embeddings":
      return prepareOpenAIEmbeddings(body)
    case "anthropic":
      return route.count ? prepareCountTokens(body) : prepareMessages(body, memory)
    case "gemini": {
      const sse = query.length > 0 && new URLSearchParams(query).get("alt") === "sse"
      return prepareGemini(body, route.model, route.method, sse, memory)
    }
    case "gemini-embeddings":
      return prepareGeminiEmbeddings(body, route.model, route.method)
  }
}

const notFound = (method: string | undefined, path: string) =>
  json(404, { error: { message: `No route for ${method ?? "?"} ${path}`, type: "invalid_request_error", code: "unknown_url" } })

/** Waits `ms`, or less when the client goes away first. */
const pause = (res: Http.ServerResponse, ms: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    res.once("close", () => {
      clearTimeout(timer)
      resolve()
    })
  })

export const startSimulator = async (options: SimulatorOptions = {}): Promise<Simulator> => {
  const faults = new FaultBook()
  const log = new RequestLog(1000)
  const memory: Memory = { implicit: new PrefixMemory(), explicit: new BreakpointCache() }
  /** responses held open by the `timeout` fault */
  const held = new Set<Http.ServerResponse>()

  const control = async (req: Http.IncomingMessage, res: Http.ServerResponse, path: string): Promise<void> => {
    const method = req.method ?? "GET"
    const raw = method === "POST" ? await readBody(req) : ""
    if (method !== "POST") req.resume()
    const route = `${method} ${path}`
    switch (route) {
      case "GET /__control/health":
        return writeJson(res, json(200, { status: "ok" }))
      case "POST /__control/faults": {
        let added: Fault[]
        try {
          const body: unknown = JSON.parse(raw)
          added = (Array.isArray(body) ? body : [body]).map(parseFault)
        } catch (e) {
          return writeJson(res, json(400, { error: e instanceof Error ? e.message : String(e) }))
        }
        for (const fault of added) faults.add(fault)
        return writeJson(res, json(200, { faults: faults.list() }))
      }
      case "GET /__control/faults":
        return writeJson(res, json(200, { faults: faults.list() }))
      case "DELETE /__control/faults":
        return writeJson(res, json(200, { cleared: faults.clear() }))
      case "GET /__control/requests":
        return writeJson(res, json(200, log.list()))
      case "DELETE /__control/requests":
        return writeJson(res, json(200, { cleared: log.clear() }))
      case "DELETE /__control/held": {
        // Cuts the connections `timeout` and `stall` are holding open, as a vendor's load balancer finally would.
        const cleared = held.size
        for (const open of held) open.destroy()
        held.clear()
        return writeJson(res, json(200, { cleared }))
      }
      case "DELETE /__control/cache":
        memory.implicit.clear()
        memory.explicit.clear()
        return writeJson(res, json(200, { cleared: true }))
      default:
        return writeJson(res, notFound(method, path))
    }
  }

  const applyFault = async (res: Http.ServerResponse, vendor: Vendor, prepared: Prepared, fault: Fault): Promise<void> => {
    switch (fault.fault) {
      case "error500":
        return writeJson(res, vendor.error("server"))
      case "error400":
        return writeJson(res, vendor.error("invalid", "simulated refusal: this request is invalid for the model"))
      case "rate_limited":
        return writeJson(res, vendor.error("rate", undefined, fault.retryAfterSeconds))
      case "timeout":
        held.add(res)
        res.once("close", () => held.delete(res))
        return
      case "drop":
        if (prepared.stream) return writeThenDrop(res, prepared.run(), fault.afterChunks)
        res.socket?.destroy()
        return
      case "slow_first_byte":
        await pause(res, fault.delayMs)
        return writeReply(res, prepared.run())
      case "stall":
        // Held like `timeout` (so close() ends it); a stream first gets its first `afterChunks` chunks.
        held.add(res)
        res.once("close", () => held.delete(res))
        if (prepared.stream) writeThenStall(res, prepared.run(), fault.afterChunks)
        return
      case "slow_stream":
        return writePaced(res, prepared.run(), fault.delayMs)
      case "malformed":
        return writeMalformed(res, prepared.run(), fault.afterChunks)
      case "trickle":
        return writeTrickle(res, prepared.run(), fault.delayMs)
    }
  }

  const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> => {
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const path = q < 0 ? url : url.slice(0, q)
    if (path.startsWith("/__control/")) return control(req, res, path)
    const route = routeOf(req.method, path)
    if (!route) {
      req.resume()
      return writeJson(res, notFound(req.method, path))
    }
    const vendor = route.vendor
    let raw: string
    try {
      raw = await readBody(req)
    } catch {
      return writeJson(res, vendor.error("invalid", "Request body is too large or could not be read."))
    }
    let body: unknown
    let malformed = false
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined
    } catch {
      malformed = true
      body = raw
    }
    log.record(req.method ?? "POST", url, req.headers, body)
    const query = q < 0 ? "" : url.slice(q + 1)
    if (!vendor.authorized(req.headers, query)) return writeJson(res, vendor.error("auth"))
    if (malformed || body === undefined) {
      return writeJson(res, vendor.error("invalid", "We could not parse the JSON body of your request."))
    }
    const prepared = prepare(route, body, query, memory)
    if ("kind" in prepared) return writeReply(res, prepared)
    const fault = prepared.generation ? faults.take(prepared.model) : undefined
    if (fault) return applyFault(res, vendor, prepared, fault)
    writeReply(res, prepared.run())
  }

  const server = Http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy()
      else writeJson(res, json(500, { error: { message: `simulator failure: ${String(error)}`, type: "server_error" } }))
    })
  })
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  server.requestTimeout = 0

  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === "object" && address ? address.port : (options.port ?? 0)
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host

  return {
    url: `http://${urlHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const res of held) res.destroy()
        held.clear()
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      })
  }
}
