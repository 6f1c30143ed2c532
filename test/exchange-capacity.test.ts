/**
 * Capacity (issue 11 item 6): the per-key inference request rate with its X-RateLimit-* headers and
 * `x_ratelimit_requests_remaining`, refused with 429 before anything is reserved; with REDIS_URL one budget across
 * replicas, for that rate and for the upstream keys' RPM and TPM. Redis runs beside PostgreSQL on the project's machine (127.0.0.1:6379).
 */
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
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

describe("upstream key pools across replicas (REDIS_URL)", () => {
  let pools: ExchangeFixture
  let providersDir: string
  const prefix = `cx:test:${randomBytes(6).toString("hex")}:`

  beforeAll(async () => {
    providersDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-pools-"))
    const file = Path.join(providersDir, "providers.yaml")
    // One OpenAI key at 2 requests a minute; one Anthropic key with room for any one request's estimate.
    Fs.writeFileSync(
      file,
      [
        "providers:",
        "  - name: openai",
        "    format: openai-chat",
        "    baseUrl: ${SIMULATOR_URL}/v1",
        "    keys:",
        "      - { secret: sim-pool-openai, rpm: 2, tpm: 1000000 }",
        "  - name: anthropic",
        "    format: anthropic-messages",
        "    baseUrl: ${SIMULATOR_URL}",
        "    keys:",
        "      - { secret: sim-pool-anthropic, rpm: 1000, tpm: 100000 }",
        ""
      ].join("\n")
    )
    pools = await startExchangeFixture({ PROVIDERS_FILE: file, REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix })
    await pools.grant(10n * ONE_CREDIT)
  }, 120_000)

  afterAll(async () => {
    await pools?.close()
    if (providersDir !== undefined) Fs.rmSync(providersDir, { recursive: true, force: true })
  })

  const send = async (base: string, secret: string, model: string) => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "share the pool" }], max_tokens: 50 })
    })
    return { status: response.status, body: (await response.json()) as any }
  }

  it("admits a key's RPM once across both replicas: the third request in the minute finds no key", async () => {
    const replica = await pools.startReplica()
    const key = await pools.issueKey({ label: "pools" })
    expect((await send(pools.baseUrl, key.secret, "openai/gpt-4.1")).status).toBe(200)
    expect((await send(replica.baseUrl, key.secret, "openai/gpt-4.1")).status).toBe(200)
    const third = await send(pools.baseUrl, key.secret, "openai/gpt-4.1")
    expect(third.status).toBe(502)
    expect(third.body.error.code).toBe("all_keys_exhausted")
    expect((await send(replica.baseUrl, key.secret, "openai/gpt-4.1")).status).toBe(502)
  }, 120_000)

  it("reserves the estimate at admission and reconciles it to the vendor's count, in the shared bucket", async () => {
    const replica = await pools.startReplica()
    const key = await pools.issueKey({ label: "tpm" })
    const redis = new Redis(REDIS_URL)
    try {
      const bucketTokens = async () => {
        const keys = await redis.keys(`${prefix}pool:anthropic:anthropic#1:*`)
        const buckets = keys.filter((k) => /:\d+$/.test(k))
        let sum = 0
        for (const bucket of buckets) sum += Number((await redis.hget(bucket, "t")) ?? 0)
        return sum
      }
      const first = await send(pools.baseUrl, key.secret, "anthropic/claude-sonnet-4.5")
      const second = await send(replica.baseUrl, key.secret, "anthropic/claude-sonnet-4.5")
      expect([first.status, second.status]).toEqual([200, 200])
      const reported = [first, second].reduce((sum, answer) => sum + answer.body.usage.prompt_tokens + answer.body.usage.completion_tokens, 0)
      // Each admission counted its estimate (input estimate + max_tokens 50) and was corrected to the vendor's count.
      const deadline = Date.now() + 5_000
      while ((await bucketTokens()) !== reported && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(await bucketTokens()).toBe(reported)
      expect(reported).toBeLessThan(100)
    } finally {
      redis.disconnect()
    }
  }, 120_000)
})
