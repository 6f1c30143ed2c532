/**
 * Capacity (issue 11 item 6): the per-key inference request rate with its X-RateLimit-* headers and
 * `x_ratelimit_requests_remaining`, refused with 429 before anything is reserved; with REDIS_URL one budget across
 * replicas. Redis runs beside PostgreSQL on the project's machine (127.0.0.1:6379).
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"

const REDIS_URL = process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379"

let fx: ExchangeFixture

beforeAll(async () => {
  fx = await startExchangeFixture({
    RATE_LIMIT_ENABLED: "true",
    INFERENCE_RATE_LIMIT_PER_MINUTE: "3",
    REDIS_URL,
    RATE_LIMIT_KEY_PREFIX: `cx:test:${randomBytes(6).toString("hex")}:`
  })
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const chat = async (base: string, secret: string, stream = false) => {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "x-forwarded-for": "198.51.100.7" },
    body: JSON.stringify({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "count me" }], max_tokens: 8, stream })
  })
  const text = await response.text()
  const header = (name: string) => response.headers.get(name)
  return {
    status: response.status,
    text,
    json: stream ? undefined : (JSON.parse(text) as any),
    limit: header("x-ratelimit-limit"),
    remaining: header("x-ratelimit-remaining"),
    reset: header("x-ratelimit-reset"),
    retryAfter: header("retry-after")
  }
}

const account = async () =>
  (await makeClient(fx.baseUrl).call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body as { balanceWei: string; reservedWei: string }

describe("the inference request rate per API key", () => {
  it("counts each key's requests, says what is left, and refuses the one over with 429 before reserving anything", async () => {
    const key = await fx.issueKey({ label: "rate limited" })
    const seen: Array<string | null> = []
    for (let i = 0; i < 3; i++) {
      const answer = await chat(fx.baseUrl, key.secret, i === 2)
      expect(answer.status, answer.text).toBe(200)
      expect(answer.limit).toBe("3")
      expect(Number(answer.reset)).toBeGreaterThan(Date.now() / 1000)
      seen.push(answer.remaining)
      if (answer.json !== undefined) expect(answer.json.x_ratelimit_requests_remaining).toBe(Number(answer.remaining))
      else {
        // The stream's final chunk carries the same figure.
        const final = answer.text.split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6))).at(-1)
        expect(final.x_ratelimit_requests_remaining).toBe(Number(answer.remaining))
      }
    }
    expect(seen).toEqual(["2", "1", "0"])
    const before = await account()
    const holdsBefore = await fx.query("SELECT count(*)::int AS n FROM holds")
    const refused = await chat(fx.baseUrl, key.secret)
    expect(refused.status).toBe(429)
    expect(refused.json.error).toMatchObject({ code: "rate_limited", type: "rate_limit_error" })
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)
    expect([refused.limit, refused.remaining]).toEqual(["3", "0"])
    expect(refused.json.error.details.retryAfterSeconds).toBe(Number(refused.retryAfter))
    // Nothing was reserved or charged for it.
    expect(await account()).toEqual(before)
    expect(await fx.query("SELECT count(*)::int AS n FROM holds")).toEqual(holdsBefore)
    // Another key of the same account has its own budget.
    const other = await fx.issueKey({ label: "another" })
    const otherAnswer = await chat(fx.baseUrl, other.secret)
    expect([otherAnswer.status, otherAnswer.remaining]).toEqual([200, "2"])
  })

  it("is one budget across replicas sharing Redis", async () => {
    const replica = await fx.startReplica()
    const key = await fx.issueKey({ label: "two replicas" })
    const first = await chat(fx.baseUrl, key.secret)
    const second = await chat(replica.baseUrl, key.secret)
    const third = await chat(fx.baseUrl, key.secret)
    expect([first.remaining, second.remaining, third.remaining]).toEqual(["2", "1", "0"])
    const refused = await chat(replica.baseUrl, key.secret)
    expect(refused.status).toBe(429)
  }, 120_000)
})
