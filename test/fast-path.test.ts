/**
 * The oracle's fast path (issue 8) against the request stack it stands in for: two servers over the same data and the
 * same instant, one with ORACLE_FAST_PATH on and one with it off, must answer every entry of the hot-read table with
 * the same bytes and headers (but the date); and requests served by the fast path and by the stack draw on one
 * rate-limit budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HOT_READS } from "../src/http/hotReads.ts"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"
import { freePort, startTestServer, type TestServer } from "./support/server.ts"

let fast: FixtureServer
let stack: TestServer

type Json = Record<string, any>

const get = (server: TestServer, target: string, clientIp: string, requestId = "parity-1") =>
  fetch(`${server.baseUrl}${target}`, { headers: { "x-forwarded-for": clientIp, "x-request-id": requestId } })

/** Every header but the date, which differs by the second the answer was written. */
const headersOf = (response: Response) =>
  Object.fromEntries([...response.headers.entries()].filter(([name]) => name !== "date").sort(([a], [b]) => (a < b ? -1 : 1)))

// Both servers read the clock at this instant, so snapshot times (generatedAt, the default `to`) and rate-limit
// resets agree to the byte.
const frozenAt = new Date()

beforeAll(async () => {
  const chainPort = await freePort()
  // The first server replays the fixture history on its embedded chain and serves with the fast path.
  fast = await startFixtureServer({ TRUST_PROXY: "true", EMBEDDED_CHAIN_PORT: String(chainPort) }, { frozenAt })
  const registry = ((await (await get(fast, "/v1/oracle/contract-metadata", "192.0.2.200")).json()) as Json).address
  expect(registry).toMatch(/^0x[0-9a-f]{40}$/)
  // The second reads the same database and chain, publishes nothing, and answers everything through the stack.
  stack = await startTestServer(
    {
      DATABASE_URL: fast.database.url,
      PRICE_DATA_DIR: fast.priceDir,
      TRUST_PROXY: "true",
      ORACLE_FAST_PATH: "false",
      RPC_URL: `http://127.0.0.1:${chainPort}`,
      REGISTRY_ADDRESS: registry
    },
    { frozenAt }
  )
}, 90_000)

afterAll(async () => {
  await stack?.close()
  await fast?.close()
})

describe("ORACLE_FAST_PATH", () => {
  it("on and off answer every hot read with the same bytes and headers", async () => {
    expect(HOT_READS.length).toBeGreaterThanOrEqual(12)
    // A first read of each server builds its snapshot (the fast path serves only a current one).
    await (await get(fast, "/v1/oracle/scu", "192.0.2.201")).arrayBuffer()
    await (await get(stack, "/v1/oracle/scu", "192.0.2.201")).arrayBuffer()
    for (const [n, read] of HOT_READS.entries()) {
      // A fresh client on each: the same budget state, so the same X-RateLimit-* headers.
      const clientIp = `198.51.100.${n + 1}`
      const a = await get(fast, read.target, clientIp)
      const b = await get(stack, read.target, clientIp)
      expect(a.status, read.target).toBe(200)
      expect(b.status, read.target).toBe(200)
      expect(headersOf(a), read.target).toEqual(headersOf(b))
      expect(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await b.arrayBuffer())), read.target).toBe(true)
      expect(a.headers.get("x-ratelimit-remaining"), read.target).toBe("4")
    }
  })

  it("the fast path and the stack draw on one budget, on every hot path", async () => {
    for (const [n, read] of HOT_READS.entries()) {
      const clientIp = `198.51.100.${100 + n}`
      // Hot reads (fast path) alternate with reads only the stack answers (same route with CSV, or another route).
      const sequence = [read.target, "/v1/oracle/health", read.target, "/v1/oracle/activity", read.target]
      for (const [i, target] of sequence.entries()) {
        const response = await get(fast, target, clientIp, `budget-${n}-${i}`)
        expect(response.status, `${read.target} #${i + 1} ${target}`).toBe(200)
        expect(response.headers.get("x-ratelimit-remaining"), `${read.target} #${i + 1} ${target}`).toBe(String(4 - i))
        await response.arrayBuffer()
      }
      for (const target of [read.target, "/v1/oracle/health"]) {
        const refused = await get(fast, target, clientIp)
        expect(refused.status, `${read.target} then ${target}`).toBe(429)
        await refused.arrayBuffer()
      }
    }
  })
})
