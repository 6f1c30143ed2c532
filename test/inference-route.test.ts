/**
 * The inference route ahead of the HttpApi router (src/http/inferenceRoute.ts) against the stack it stands in for:
 * two replicas on one database, account and simulator, one with INFERENCE_FAST_PATH on (the default) and one with it
 * off, must answer the same requests with the same status, headers and bodies (but what names the request or moves
 * with the balance). The requests sent are ones the route takes (its head rule says so); the ones it leaves to the
 * stack are listed by the same rule.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { takenByRoute } from "../src/http/inferenceRoute.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import type { TestServer } from "./support/server.ts"

let fx: ExchangeFixture
let stack: TestServer
let secret: string

beforeAll(async () => {
  fx = await startExchangeFixture()
  stack = await fx.startReplica({ INFERENCE_FAST_PATH: "false" })
  secret = (await fx.issueKey({ label: "route parity" })).secret
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

/**
 * Headers that name the request or the moment, or move with the balance, masked; the rest compared as they are. The
 * length moves with the balance's digits in the body: it is checked against each body instead.
 */
const VOLATILE = new Set(["date", "x-request-id", "x-compute-remaining", "content-length"])
const headersOf = (response: Response) =>
  Object.fromEntries(
    [...response.headers.entries()].map(([name, value]) => [name, VOLATILE.has(name) ? "<volatile>" : value] as const).sort(([a], [b]) => (a < b ? -1 : 1))
  )

/** The body with its request id, its instant and the balance left masked (a bill's charge is compared exactly). */
const masked = (text: string) =>
  text
    .replace(/gen_[0-9a-f]{24}/g, "gen_<id>")
    .replace(/\b(resp|msg|rs|fc|ctc)_([0-9a-f]{24})/g, "$1_<id>")
    .replace(/"created_at":\d+/g, '"created_at":0')
    .replace(/"created":\d+/g, '"created":0')
    .replace(/"x_credits_remaining":[0-9.e+-]+/g, '"x_credits_remaining":0')
    .replace(/"credits_remaining":[0-9.e+-]+/g, '"credits_remaining":0')

interface Sent {
  readonly path: string
  readonly body: string
  readonly headers: Record<string, string>
}

const send = async (baseUrl: string, request: Sent) => {
  const response = await fetch(`${baseUrl}${request.path}`, { method: "POST", headers: request.headers, body: request.body })
  const text = await response.text()
  const length = response.headers.get("content-length")
  if (length !== null) expect(Number(length)).toBe(Buffer.byteLength(text))
  return { status: response.status, headers: headersOf(response), body: masked(text) }
}

const chat = (body: unknown, token = secret, scheme = "Bearer "): Sent => ({
  path: "/v1/chat/completions",
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers: { "content-type": "application/json", authorization: `${scheme}${token}` }
})

const messages = (body: unknown): Sent => ({
  path: "/v1/messages",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json", "x-api-key": secret, "anthropic-version": "2023-06-01" }
})

const responses = (body: unknown): Sent => ({
  path: "/v1/responses",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }
})

const user = [{ role: "user", content: "Name three colours of the sea." }]

/** What the route takes, its format by name. */
const taken = (...args: Parameters<typeof takenByRoute>) => {
  const route = takenByRoute(...args)
  return route === undefined ? undefined : { format: route.format.name, token: route.token }
}

describe("INFERENCE_FAST_PATH", () => {
  const cases: ReadonlyArray<readonly [string, () => Sent]> = [
    ["a chat completion", () => chat({ model: "openai/gpt-4.1", messages: user, max_tokens: 24 })],
    ["a streamed chat completion", () => chat({ model: "openai/gpt-4.1", messages: user, max_tokens: 24, stream: true })],
    ["a message by x-api-key", () => messages({ model: "anthropic/claude-sonnet-4.5", messages: user, max_tokens: 24 })],
    ["a streamed message", () => messages({ model: "anthropic/claude-sonnet-4.5", messages: user, max_tokens: 24, stream: true })],
    ["a response", () => responses({ model: "openai/gpt-4.1", input: "Name three colours of the sea.", max_output_tokens: 24 })],
    ["a streamed response, not stored", () => responses({ model: "openai/gpt-4.1", input: user, max_output_tokens: 24, stream: true, store: false })],
    ["a response continuing one that does not exist", () => responses({ model: "openai/gpt-4.1", input: "Go on.", previous_response_id: "resp_000000000000000000000000" })],
    ["a response with a built-in tool", () => responses({ model: "openai/gpt-4.1", input: "Hi", tools: [{ type: "web_search" }], store: false })],
    ["a fallback list", () => chat({ models: ["openai/gpt-4.1", "google/gemini-2.5-flash"], messages: user, max_tokens: 8 })],
    ["a body that is not JSON", () => chat("{not json")],
    ["a body that fails validation", () => chat({ model: "openai/gpt-4.1", messages: [], temperature: 9 })],
    ["an unknown model", () => chat({ model: "nobody/nothing", messages: user })],
    ["an unknown key", () => chat({ model: "openai/gpt-4.1", messages: user }, "ct_live_thisisnotakey")],
    ["an app-grant-shaped token that is not one", () => chat({ model: "openai/gpt-4.1", messages: user }, "cfa_live_nothing")],
    // The scheme is case-insensitive (RFC 9110) and may be followed by more than one space, on both ways in.
    ["a lowercase bearer scheme", () => chat({ model: "openai/gpt-4.1", messages: user, max_tokens: 8 }, secret, "bearer ")],
    ["a scheme followed by two spaces", () => chat({ model: "openai/gpt-4.1", messages: user, max_tokens: 8 }, secret, "BEARER  ")],
    ["a message by bearer token", () => ({ ...messages({ model: "anthropic/claude-sonnet-4.5", messages: user, max_tokens: 8 }), headers: { "content-type": "application/json", authorization: `Bearer ${secret}`, "anthropic-version": "2023-06-01" } })]
  ]

  for (const [name, make] of cases) {
    it(`on and off answer ${name} alike`, async () => {
      const request = make()
      // The request is one the route takes, so the server with it on answers through it.
      expect(takenByRoute("POST", request.path, Object.fromEntries(Object.entries({ ...request.headers, "content-length": String(Buffer.byteLength(request.body)) }).map(([k, v]) => [k.toLowerCase(), v])))).toBeDefined()
      const viaRoute = await send(fx.baseUrl, request)
      const viaStack = await send(stack.baseUrl, request)
      expect(viaRoute.status).toBe(viaStack.status)
      expect(viaRoute.headers).toEqual(viaStack.headers)
      expect(viaRoute.body).toBe(viaStack.body)
    })
  }

  it("the answers compared are the exchange's own: billed, routed and enveloped", async () => {
    const ok = await send(fx.baseUrl, chat({ model: "openai/gpt-4.1", messages: user, max_tokens: 24 }))
    expect(ok.status).toBe(200)
    expect(ok.headers["x-model-used"]).toBe("openai/gpt-4.1")
    expect(BigInt(ok.headers["x-compute-used"]!)).toBeGreaterThan(0n)
    const refused = await send(fx.baseUrl, chat({ model: "openai/gpt-4.1", messages: user }, "ct_live_thisisnotakey"))
    expect(refused.status).toBe(401)
    expect(JSON.parse(refused.body).error.code).toBe("invalid_api_key")
  })

  it("leaves to the stack what it does not take: other methods and paths, browsers, bodies not JSON or unsized, no token; a query does not count", () => {
    const head = { "content-type": "application/json", "content-length": "10", authorization: "Bearer ct_live_x" }
    expect(taken("POST", "/v1/chat/completions", head)).toEqual({ format: "chat", token: "ct_live_x" })
    expect(taken("POST", "/v1/messages", { ...head, authorization: undefined, "x-api-key": "ct_live_y" })).toEqual({ format: "messages", token: "ct_live_y" })
    expect(taken("GET", "/v1/chat/completions", head)).toBeUndefined()
    // A query string does not change the route (Claude Code posts to /v1/messages?beta=true); the path must match whole.
    expect(taken("POST", "/v1/messages?beta=true", head)).toEqual({ format: "messages", token: "ct_live_x" })
    expect(taken("POST", "/v1/chat/completions/?x=1", head)).toBeUndefined()
    expect(taken("POST", "/v1/messages/count_tokens?beta=true", head)).toBeUndefined()
    expect(taken("POST", "/v1/responses", head)).toEqual({ format: "responses", token: "ct_live_x" })
    expect(taken("POST", "/v1/responses/input_tokens", head)).toBeUndefined()
    expect(taken("POST", "/v1/models", head)).toBeUndefined()
    expect(taken("POST", "/v1/chat/completions", { ...head, origin: "https://example.com" })).toBeUndefined()
    expect(taken("POST", "/v1/chat/completions", { ...head, "content-type": "text/plain" })).toBeUndefined()
    expect(taken("POST", "/v1/chat/completions", { ...head, "content-length": undefined, "transfer-encoding": "chunked" })).toBeUndefined()
    expect(taken("POST", "/v1/chat/completions", { ...head, "content-length": "4194305" })).toBeUndefined()
    expect(taken("POST", "/v1/chat/completions", { ...head, authorization: "Basic abc" })).toBeUndefined()
    expect(taken("POST", "/v1/chat/completions", { ...head, authorization: "bearer ct_live_x" })).toEqual({ format: "chat", token: "ct_live_x" })
    expect(taken("POST", "/v1/chat/completions", { ...head, authorization: "Bearer " })).toBeUndefined()
    // x-api-key is the messages format's; chat completions take a bearer token only.
    expect(taken("POST", "/v1/chat/completions", { ...head, authorization: undefined, "x-api-key": "ct_live_y" })).toBeUndefined()
  })
})
