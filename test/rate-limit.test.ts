/**
 * SPEC "Limits", oracle request rate, over a real socket: per client address, 5 per second, 20 per 10 seconds
 * and 120 per minute at once; 429 `rate_limited` with Retry-After beyond any of them; X-RateLimit-* on every
 * oracle response; nothing on other paths; one budget across replicas through Redis, and requests let
 * through when Redis is down.
 *
 * No oracle endpoint is relied on: a path under /v1/oracle/ that matches nothing (404) counts like any other.
 * Each test speaks for its own client through X-Forwarded-For (TRUST_PROXY=true), so budgets never mix.
 */
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { redisOptionsFromUrl } from "../services/platform/redisOptions.ts"
import { tightest } from "../services/platform/RateLimits.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { waitFor } from "./support/polling.ts"
import { cleanEnv, logRecords, startService } from "./support/process.ts"
import { freePort, startTestServer, type TestServer } from "./support/server.ts"

const ORACLE_PATH = "/v1/oracle/no-such-endpoint"
const REDIS_URL = "redis://127.0.0.1:6379"

const get = (server: TestServer, ip: string | undefined, path = ORACLE_PATH) =>
  fetch(`${server.baseUrl}${path}`, { headers: ip === undefined ? {} : { "x-forwarded-for": ip } })

interface LimitHeaders {
  readonly limit: number
  readonly remaining: number
  readonly reset: number
}

const limitHeaders = (response: Response): LimitHeaders => {
  const read = (name: string) => {
    const value = response.headers.get(name)
    expect(value, name).toMatch(/^[0-9]+$/)
    return Number(value)
  }
  return { limit: read("x-ratelimit-limit"), remaining: read("x-ratelimit-remaining"), reset: read("x-ratelimit-reset") }
}

const expectNoLimitHeaders = (response: Response) => {
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
    expect(response.headers.get(name), name).toBeNull()
  }
}

const nowSeconds = () => Date.now() / 1000

/** A 404 that went through routing (the limiter let it pass). */
const expectPassed = async (response: Response) => {
  expect(response.status).toBe(404)
  const body = (await response.json()) as { error: { code: string } }
  expect(body.error.code).toBe("not_found")
}

/** The 429 of SPEC: the envelope alone, Retry-After agreeing with details, and no trace of the route. */
const expectRefused = async (response: Response) => {
  expect(response.status).toBe(429)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  expect(response.headers.get("cache-control")).toBe("no-store")
  // Emitted before the oracle's own headers are added (SPEC "Versioning").
  expect(response.headers.get("x-methodology-version")).toBeNull()
  expect(response.headers.get("link")).toBe('</v1/openapi.yaml>; rel="service-desc"; type="text/yaml"')
  const retryAfter = response.headers.get("retry-after")
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/)
  const text = await response.text()
  const body = JSON.parse(text) as { error: Record<string, unknown> }
  expect(Object.keys(body)).toEqual(["error"])
  expect(Object.keys(body.error).sort()).toEqual(["code", "details", "message", "type"])
  expect(body.error.code).toBe("rate_limited")
  expect(body.error.type).toBe("rate_limit_error")
  expect(body.error.details).toEqual({ retryAfterSeconds: Number(retryAfter) })
  // Nothing of what the route would have said (the 404) or of where the request was going.
  expect(text).not.toContain("not_found")
  expect(text).not.toContain("no-such-endpoint")
  return Number(retryAfter)
}

const redisReachable = (): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = Net.connect({ host: "127.0.0.1", port: 6379 })
    socket.setTimeout(1_000)
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
    socket.once("timeout", () => {
      socket.destroy()
      resolve(false)
    })
  })

const deleteRedisKeys = async (prefix: string) => {
  const redis = new Redis(REDIS_URL)
  try {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  } finally {
    await redis.quit()
  }
}

let database: TestDatabase
const started: Array<TestServer> = []

const start = async (env: Record<string, string>) => {
  const server = await startTestServer({ DATABASE_URL: database.url, TRUST_PROXY: "true", ...env })
  started.push(server)
  // A first request warms the process up, so the timing-sensitive sequences below are not slowed by it.
  await (await get(server, "192.0.2.250")).arrayBuffer()
  return server
}

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  for (const server of started) await server.close()
  await database?.close()
})

describe("the tightest budget", () => {
  const state = (remaining: number, resetAfterMs: number) => ({ remaining, resetAfterMs })

  it("is the one with the fewest requests left; on a tie the one resetting last", () => {
    expect(tightest([state(119, 60_000), state(4, 200), state(19, 500)])).toEqual(state(4, 200))
    expect(tightest([state(0, 60_000), state(0, 800), state(5, 500)])).toEqual(state(0, 60_000))
    expect(tightest([state(3, 100), state(3, 9_000), state(3, 500)])).toEqual(state(3, 9_000))
    expect(tightest([])).toBeUndefined()
  })
})

describe("REDIS_URL", () => {
  it("becomes ioredis options, credentials and database included", () => {
    expect(redisOptionsFromUrl("redis://127.0.0.1:6380")).toMatchObject({ host: "127.0.0.1", port: 6380 })
    expect(redisOptionsFromUrl("redis://cache")).toMatchObject({ host: "cache", port: 6379 })
    expect(redisOptionsFromUrl("rediss://user:p%40ss@[::1]:7000/2")).toMatchObject({
      host: "::1",
      port: 7000,
      username: "user",
      password: "p@ss",
      db: 2,
      tls: {}
    })
    expect(() => redisOptionsFromUrl("http://127.0.0.1:6379")).toThrow(/redis:\/\//)
    expect(() => redisOptionsFromUrl("redis://127.0.0.1:6379/x")).toThrow(/database number/)
  })
})

describe("with the default limits (5/s, 20/10 s, 120/min)", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await start({})
  })

  it("puts X-RateLimit-* on every oracle response, counting down the tightest budget (per second)", async () => {
    const ip = "203.0.113.1"
    const before = Math.floor(nowSeconds())
    for (const expected of [4, 3, 2, 1, 0]) {
      const response = await get(server, ip, expected % 2 === 0 ? ORACLE_PATH : `${ORACLE_PATH}?q=${expected}`)
      const headers = limitHeaders(response)
      await expectPassed(response)
      expect(headers.limit).toBe(5)
      expect(headers.remaining).toBe(expected)
      // Epoch seconds, within the second's window.
      expect(headers.reset).toBeGreaterThanOrEqual(before)
      expect(headers.reset).toBeLessThanOrEqual(Math.ceil(nowSeconds()) + 1)
    }
  })

  // When the window ends the client is let in again: test/time-rate-limits.test.ts moves the clock for that.
  it("refuses the sixth request within a second with 429 rate_limited and Retry-After", async () => {
    const ip = "203.0.113.2"
    for (let i = 0; i < 5; i++) await expectPassed(await get(server, ip))
    const refused = await get(server, ip)
    const headers = limitHeaders(refused)
    const retryAfter = await expectRefused(refused)
    expect(retryAfter).toBe(1)
    expect(headers).toMatchObject({ limit: 5, remaining: 0 })
    expect(headers.reset).toBeLessThanOrEqual(Math.ceil(nowSeconds()) + 1)
  })

  it("keeps separate budgets for separate client addresses", async () => {
    const spent = "203.0.113.3"
    for (let i = 0; i < 5; i++) await expectPassed(await get(server, spent))
    await expectRefused(await get(server, spent))

    for (const other of ["203.0.113.4", "2001:db8::4"]) {
      const response = await get(server, other)
      expect(limitHeaders(response)).toMatchObject({ limit: 5, remaining: 4 })
      await expectPassed(response)
    }
    // The spent client is still refused: the others took nothing from it, nor it from them.
    await expectRefused(await get(server, spent))
  })

  it("does not limit or label paths outside /v1/oracle/", async () => {
    const ip = "203.0.113.5"
    for (let i = 0; i < 8; i++) {
      for (const path of ["/v1/status", "/v1/no-such-thing", "/v1/oracle"]) {
        const response = await get(server, ip, path)
        expect(response.status, path).not.toBe(429)
        expectNoLimitHeaders(response)
        await response.arrayBuffer()
      }
    }
    // Nor did they take anything from the client's oracle budget.
    const oracle = await get(server, ip)
    expect(limitHeaders(oracle)).toMatchObject({ limit: 5, remaining: 4 })
    await expectPassed(oracle)
  })
})

describe("the 10-second budget (per-second limit raised out of the way)", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await start({ RATE_LIMIT_PER_SECOND: "1000" })
  })

  it("allows 20, refuses the 21st until the window ends, and is the budget the headers describe", async () => {
    const ip = "198.51.100.1"
    for (let expected = 19; expected >= 0; expected--) {
      const response = await get(server, ip)
      expect(limitHeaders(response)).toMatchObject({ limit: 20, remaining: expected })
      await expectPassed(response)
    }
    const refused = await get(server, ip)
    const headers = limitHeaders(refused)
    const retryAfter = await expectRefused(refused)
    expect(headers).toMatchObject({ limit: 20, remaining: 0 })
    // The 10-second window has just begun: most of it is left.
    expect(retryAfter).toBeGreaterThanOrEqual(8)
    expect(retryAfter).toBeLessThanOrEqual(10)
    expect(headers.reset).toBeGreaterThanOrEqual(Math.floor(nowSeconds()) + 8)
    expect(headers.reset).toBeLessThanOrEqual(Math.ceil(nowSeconds()) + 10)
  })
})

describe("RATE_LIMIT_ENABLED=false", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await start({ RATE_LIMIT_ENABLED: "false" })
  })

  it("lets every oracle request through, without X-RateLimit headers", async () => {
    for (let i = 0; i < 12; i++) {
      const response = await get(server, "203.0.113.9")
      expectNoLimitHeaders(response)
      await expectPassed(response)
    }
  })
})

// A budget of 5 that a slow machine cannot cross a window boundary of mid-sequence: the 1-minute token bucket refills
// one unit per 12 s, where the 1-second fixed window would start afresh whenever a sequence straddled a second.
const minuteBudgetOfFive = { RATE_LIMIT_PER_MINUTE: "5", RATE_LIMIT_PER_SECOND: "100", RATE_LIMIT_PER_10_SECONDS: "100" }

describe.skipIf(!(await redisReachable()))("REDIS_URL (a Redis server on 127.0.0.1:6379)", () => {
  const prefix = `cx-test:${randomUUID()}:`
  let first: TestServer
  let second: TestServer

  beforeAll(async () => {
    const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix, ...minuteBudgetOfFive }
    first = await start(env)
    second = await start(env)
  })

  // Token-bucket keys carry no expiry: leave nothing of this run behind.
  afterAll(() => deleteRedisKeys(prefix))

  it("gives two replicas one budget per client", async () => {
    const ip = "203.0.113.20"
    const order = [first, second, first, second, first]
    for (const [index, server] of order.entries()) {
      const response = await get(server, ip)
      expect(limitHeaders(response)).toMatchObject({ limit: 5, remaining: 4 - index })
      await expectPassed(response)
    }
    await expectRefused(await get(second, ip))
    await expectRefused(await get(first, ip))

    const redis = new Redis(REDIS_URL)
    try {
      expect((await redis.keys(`${prefix}oracle:${ip}:*`)).length).toBeGreaterThanOrEqual(3)
    } finally {
      await redis.quit()
    }
  })
})

describe.skipIf(!(await redisReachable()))("REDIS_URL and the oracle's hot reads", () => {
  const prefix = `cx-test:${randomUUID()}:`
  let server: TestServer

  beforeAll(async () => {
    server = await start({ REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix, ...minuteBudgetOfFive })
  })

  afterAll(() => deleteRedisKeys(prefix))

  // The fast path may only take a decision the memory store makes synchronously; with Redis it must leave the store
  // alone, or a hot read costs two units (one consumed by an abandoned round trip, one by the stack).
  it("counts each hot read once", async () => {
    for (const [n, path] of ["/v1/oracle/models", "/v1/oracle/catalog", "/v1/oracle/stats", "/v1/oracle/methodology"].entries()) {
      const ip = `203.0.113.${40 + n}`
      for (let i = 0; i < 5; i++) {
        const response = await get(server, ip, path)
        expect(response.status, `${path} #${i + 1}`).toBe(200)
        expect(limitHeaders(response), `${path} #${i + 1}`).toMatchObject({ limit: 5, remaining: 4 - i })
        await response.arrayBuffer()
      }
      await expectRefused(await get(server, ip, path))
    }
  })
})

describe("REDIS_URL pointing at nothing", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await start({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` })
  })

  it("fails open: requests go through (no 429, no 500), still labelled as a fresh budget", async () => {
    for (let i = 0; i < 10; i++) {
      const response = await get(server, "203.0.113.30")
      expect(limitHeaders(response)).toMatchObject({ limit: 5, remaining: 4 })
      await expectPassed(response)
    }
  })
})

// ioredis prints "[ioredis] Unhandled error event" on stderr for every failed reconnection of a client that has no
// 'error' listener; the service's own process is the only place to see what it prints.
describe("REDIS_URL pointing at nothing, in the service's own process", () => {
  it("answers oracle requests as a fresh budget, logs the outage once at WARN (each retry at DEBUG), and prints nothing of ioredis' own", async () => {
    const port = await freePort()
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-redis-down-"))
    const service = startService(
      cleanEnv({
        DATABASE_URL: database.url,
        PORT: String(port),
        DATA_DIR: dataDir,
        EMBEDDED_CHAIN_PORT: String(await freePort()),
        PRICE_SCAN_INTERVAL_HOURS: "0",
        CHAIN_SYNC_INTERVAL_SECONDS: "0",
        TRUST_PROXY: "true",
        LOG_LEVEL: "DEBUG",
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`
      })
    )
    try {
      await service.waitForLog(/"ready at http:/, 240_000)
      const server = { baseUrl: `http://127.0.0.1:${port}` } as TestServer
      for (let i = 0; i < 10; i++) {
        const response = await get(server, "203.0.113.31")
        expect(limitHeaders(response)).toMatchObject({ limit: 5, remaining: 4 })
        await expectPassed(response)
      }
      // By now the client has tried to connect for the start's probe and since.
      expect(service.output()).not.toContain("Unhandled error event")
      const retries = () =>
        logRecords(service.output()).filter((r) => r.logLevel === "DEBUG" && String(r.message).includes("rate-limit Redis") && String(r.message).includes("still unavailable"))
      // Several reconnection attempts failed by now (ioredis retries with a growing back-off).
      await waitFor("three failed reconnections of the rate-limit client", async () => retries().length >= 3, 30_000, 100)
      const warnings = logRecords(service.output()).filter((r) => r.logLevel === "WARN" && /rate-limit Redis at .* is unavailable/.test(String(r.message)))
      expect(warnings, service.output().slice(-4_000)).toHaveLength(1)
      expect(warnings[0]!.annotations.cause).toMatch(/ECONNREFUSED/)
      expect(service.output()).not.toContain("Unhandled error event")
    } finally {
      await service.stop("SIGTERM")
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
    expect(service.output()).not.toContain("Unhandled error event")
  }, 300_000)
})
