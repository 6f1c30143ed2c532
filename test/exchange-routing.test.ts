/**
 * `auto` routing end to end (issue 11 item 5; SPEC "Model selection" 1, 4, 5; DESIGN.md section 10 "Routing"): the
 * operator's preference list (admin API and CLI), `list` / `degraded` / `engine` / `pin` as X-Model-Chooser says,
 * routing_bias leaning the engine over price and the quality data, conversation pins released when the bias changes,
 * the control arm, and 503 while the stored list cannot be read. The fixture catalog (test/fixtures/exchange) prices
 * gpt-tiny cheapest (window 60 tokens), then deepseek-reasoner, and data/exchange/quality.yaml scores
 * deepseek-reasoner, gpt-4.1, gpt-5 and claude-sonnet-4.5 above gpt-tiny and gemini-2.5-flash.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, MAINTAINER_TOKEN, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { cleanEnv, startProcess } from "./support/process.ts"

let fx: ExchangeFixture
let key: { id: string; secret: string }

beforeAll(async () => {
  fx = await startExchangeFixture({ ROUTING_LIST_REFRESH_MS: "200" })
  key = await fx.issueKey({ label: "routing tests" })
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const chat = async (body: Record<string, unknown>, base = fx.baseUrl, secret = key.secret) => {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "Pick a model for me" }], max_tokens: 16, ...body })
  })
  const json = (await response.json()) as any
  return {
    status: response.status,
    body: json,
    used: response.headers.get("x-model-used"),
    chooser: response.headers.get("x-model-chooser"),
    strategy: response.headers.get("x-routing-strategy")
  }
}

const admin = (method: string, body?: unknown) =>
  makeClient(fx.baseUrl).call(method, "/v1/admin/routing/auto", body, { headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` } })

const setList = async (models: ReadonlyArray<string>) => {
  const answer = await admin("PUT", { models })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

const status = async () => (await makeClient(fx.baseUrl).call("GET", "/v1/status")).body.exchange.autoRouting

describe("the operator's auto list", () => {
  it("is empty at first, then replaced whole by PUT with catalog keys in order; bad entries are 422 naming them", async () => {
    expect((await admin("GET")).body).toEqual({ models: [], updatedAt: null })
    const set = await setList(["OpenAI/GPT-4.1", "gpt-5"])
    expect(set.models).toEqual(["openai/gpt-4.1", "openai/gpt-5"])
    expect(typeof set.updatedAt).toBe("string")
    expect((await admin("GET")).body.models).toEqual(["openai/gpt-4.1", "openai/gpt-5"])
    for (const [models, param] of [[["openai/gpt-4.1", "no-such-model"], "models.1"], [["auto"], "models.0"], [["gpt-5", "openai/gpt-5"], "models.1"]] as const) {
      const refused = await admin("PUT", { models })
      expect(refused.status).toBe(422)
      expect(refused.body.error).toMatchObject({ code: "validation_failed", param })
    }
    // A refused PUT changed nothing.
    expect((await admin("GET")).body.models).toEqual(["openai/gpt-4.1", "openai/gpt-5"])
    const unauthorized = await makeClient(fx.baseUrl).call("PUT", "/v1/admin/routing/auto", { models: [] }, { headers: { authorization: "Bearer wrong" } })
    expect(unauthorized.status).toBe(401)
    expect((await status()).listEntries).toBe(2)
    await setList([])
  })

  it("serves auto from the first list entry with capacity, whatever routing_bias says (X-Model-Chooser: list)", async () => {
    await setList(["anthropic/claude-sonnet-4.5", "google/gemini-2.5-flash"])
    const served = await chat({ model: "auto", routing_bias: "cheaper" })
    expect(served.status, JSON.stringify(served.body)).toBe(200)
    expect([served.used, served.chooser, served.strategy]).toEqual(["anthropic/claude-sonnet-4.5", "list", "failover"])
    const quote = await makeClient(fx.baseUrl).call("GET", "/v1/inference/estimate?model=auto&promptTokens=20&completionTokens=16")
    expect(quote.status).toBe(200)
    expect(quote.body.resolvedModel).toBe("anthropic/claude-sonnet-4.5")
    expect(quote.headers.get("x-model-chooser")).toBe("list")
    // The first entry's keys all fail (and cool down): the next entry on the list serves.
    await fx.fault({ model: "claude-sonnet-4-5", fault: "error500", count: 10 })
    const next = await chat({})
    await fx.clearFaults()
    expect([next.status, next.used, next.chooser]).toEqual([200, "google/gemini-2.5-flash", "list"])
    await setList([])
  })

  it("falls to the cheapest model that can serve when nothing on the list can (degraded), and says so in /v1/status", async () => {
    expect((await status()).lastUnservableAt).toBeNull()
    // gpt-4.1 prices no reasoning: it cannot serve a request that asks for it.
    await setList(["openai/gpt-4.1"])
    const served = await chat({ reasoning_effort: "low", max_tokens: 2048 })
    expect(served.status, JSON.stringify(served.body)).toBe(200)
    expect([served.used, served.chooser]).toEqual(["deepseek/deepseek-reasoner", "degraded"])
    const health = await status()
    expect(health.listEntries).toBe(1)
    expect(health.listReadable).toBe(true)
    expect(Date.parse(health.lastUnservableAt)).toBeGreaterThan(Date.now() - 60_000)
    await setList([])
  })
})

describe("the routing engine (empty list)", () => {
  it("takes the cheapest without a bias or with cheaper, and leans to quality with better and balanced", async () => {
    const plain = await chat({ model: "auto" })
    expect([plain.status, plain.used, plain.chooser]).toEqual([200, "openai/gpt-tiny", "engine"])
    expect((await chat({ routing_bias: "cheaper" })).used).toBe("openai/gpt-tiny")
    // Among the best-scored models, the cheapest: deepseek-reasoner. Balanced weighs its small price against its
    // higher score and lands there too; gpt-tiny (cheapest, low score) loses under both.
    const better = await chat({ routing_bias: "better" })
    expect([better.used, better.chooser]).toEqual(["deepseek/deepseek-reasoner", "engine"])
    expect((await chat({ routing_bias: "balanced" })).used).toBe("deepseek/deepseek-reasoner")
    // The estimate leans the same way and names the chooser.
    const quote = await makeClient(fx.baseUrl).call("GET", "/v1/inference/estimate?model=auto&promptTokens=20&completionTokens=16&routing_bias=better")
    expect(quote.body.resolvedModel).toBe("deepseek/deepseek-reasoner")
    expect(quote.headers.get("x-model-chooser")).toBe("engine")
  })
})

describe("conversation pins", () => {
  it("keep a conversation on its model and upstream key, and a changed routing_bias releases the pin", async () => {
    const conversation = `conv-${Date.now()}`
    const first = await chat({ conversation_id: conversation })
    expect([first.used, first.chooser]).toEqual(["openai/gpt-tiny", "engine"])
    // The operator now prefers gpt-4.1, but the pinned conversation stays where it began.
    await setList(["openai/gpt-4.1"])
    const second = await chat({ conversation_id: conversation })
    expect([second.used, second.chooser, second.strategy]).toEqual(["openai/gpt-tiny", "pin", "sticky"])
    const pins = await fx.query("SELECT model_key, upstream_key, routing_bias FROM conversation_pins WHERE conversation_id = $1", [conversation])
    expect(pins).toEqual([{ model_key: "openai/gpt-tiny", upstream_key: expect.stringMatching(/^openai#\d+$/), routing_bias: null }])
    // Same upstream key both times (the simulator saw both requests on one key).
    const keyUsed = pins[0].upstream_key
    const third = await chat({ conversation_id: conversation })
    expect(third.used).toBe("openai/gpt-tiny")
    expect((await fx.query("SELECT upstream_key FROM conversation_pins WHERE conversation_id = $1", [conversation]))[0].upstream_key).toBe(keyUsed)
    // Another bias: the pin is released and the choice made anew (the list serves).
    const rebiased = await chat({ conversation_id: conversation, routing_bias: "better" })
    expect([rebiased.used, rebiased.chooser]).toEqual(["openai/gpt-4.1", "list"])
    const repinned = await chat({ conversation_id: conversation, routing_bias: "better" })
    expect([repinned.used, repinned.chooser]).toEqual(["openai/gpt-4.1", "pin"])
    // A pin whose model cannot take the request is passed over: reasoning asked, gpt-4.1 cannot.
    const reasoning = await chat({ conversation_id: conversation, routing_bias: "better", reasoning_effort: "low", max_tokens: 2048 })
    expect([reasoning.status, reasoning.chooser]).toEqual([200, "degraded"])
    // Another conversation is not pinned.
    expect((await chat({ conversation_id: `${conversation}-other` })).chooser).toBe("list")
    await setList([])
  })

})

describe("an unreadable list", () => {
  it("makes auto answer 503 on send and estimate until the list can be read again; named models still serve", async () => {
    await fx.query("ALTER TABLE routing_auto_list RENAME TO routing_auto_list_hidden")
    try {
      const deadline = Date.now() + 10_000
      while ((await status()).listReadable && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
      expect((await status()).listReadable).toBe(false)
      const send = await chat({ model: "auto" })
      expect(send.status).toBe(503)
      expect(send.body.error.code).toBe("service_unavailable")
      const quote = await makeClient(fx.baseUrl).call("GET", "/v1/inference/estimate?model=auto&promptTokens=20&completionTokens=16")
      expect(quote.status).toBe(503)
      expect((await chat({ model: "openai/gpt-4.1" })).status).toBe(200)
    } finally {
      await fx.query("ALTER TABLE routing_auto_list_hidden RENAME TO routing_auto_list")
    }
    const deadline = Date.now() + 10_000
    while (!(await status()).listReadable && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await chat({ model: "auto" })).status).toBe(200)
  })
})

describe("the CLI", () => {
  it("sets, shows and clears the list in the database the service reads", async () => {
    const run = async (args: ReadonlyArray<string>) => {
      const cli = startProcess(process.execPath, ["--import", "tsx", "src/cli.ts", "accounts", "routing", ...args], cleanEnv({ DATABASE_URL: fx.database.url, LOG_LEVEL: "WARN" }))
      const code = await cli.exited
      return { code, output: cli.output() }
    }
    const set = await run(["set", "gpt-5", "anthropic/claude-sonnet-4.5"])
    expect(set.code, set.output).toBe(0)
    expect(set.output).toContain("1. openai/gpt-5")
    expect(set.output).toContain("2. anthropic/claude-sonnet-4.5")
    const bad = await run(["set", "nonsense-model"])
    expect(bad.code).toBe(1)
    expect(bad.output).toContain("not a catalog model")
    // The service picks the change up within its refresh interval.
    const deadline = Date.now() + 10_000
    while ((await status()).listEntries !== 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await chat({})).used).toBe("openai/gpt-5")
    const shown = await run(["show"])
    expect(shown.output).toContain("1. openai/gpt-5")
    expect((await run(["clear"])).output).toContain("the auto list is empty")
    // Four cold starts of the CLI through tsx, about 6 s of CPU each: on a loaded 2-core machine they took over 60 s.
  }, 180_000)
})

describe("the control arm", () => {
  it("holds auto traffic on the operator's order: no pin, no bias (AUTO_CONTROL_ARM_PERCENT=100)", async () => {
    const control = await startExchangeFixture({ AUTO_CONTROL_ARM_PERCENT: "100" })
    try {
      const controlKey = await control.issueKey({ label: "control arm" })
      await control.grant(10n * ONE_CREDIT)
      const conversation = `conv-control-${Date.now()}`
      const first = await chat({ conversation_id: conversation, routing_bias: "better" }, control.baseUrl, controlKey.secret)
      // The bias is ignored: the cheapest, not the best-scored.
      expect([first.status, first.used, first.chooser]).toEqual([200, "openai/gpt-tiny", "engine"])
      const listed = await makeClient(control.baseUrl).call("PUT", "/v1/admin/routing/auto", { models: ["openai/gpt-5"] }, { headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` } })
      expect(listed.status).toBe(200)
      // The conversation's pin is ignored too: the list serves.
      const second = await chat({ conversation_id: conversation, routing_bias: "better" }, control.baseUrl, controlKey.secret)
      expect([second.used, second.chooser]).toEqual(["openai/gpt-5", "list"])
    } finally {
      await control.close()
    }
  }, 120_000)
})

describe("parameter policy by the model's traits (data/exchange/model-traits.yaml)", () => {
  const lastUpstreamBody = async (model: string) => {
    const log = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<{ body: any }>
    return log.filter((entry) => entry.body?.model === model).at(-1)?.body
  }

  it("switches reasoning off with the model's lowest documented setting (gpt-5: reasoning_effort minimal)", async () => {
    const answer = await chat({ model: "openai/gpt-5", reasoning: { enabled: false } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect((await lastUpstreamBody("gpt-5")).reasoning_effort).toBe("minimal")
  })

  it("refuses top_k (a messages-format field) on an OpenAI-shaped model with 422 naming it, before any credit moves", async () => {
    const messages = async (body: Record<string, unknown>) => {
      const response = await fetch(`${fx.baseUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key.secret, "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ max_tokens: 16, messages: [{ role: "user", content: "hello" }], top_k: 5, ...body })
      })
      return { status: response.status, body: (await response.json()) as any, used: response.headers.get("x-model-used") }
    }
    const holds = await fx.query("SELECT count(*)::int AS n FROM holds")
    const refused = await messages({ model: "openai/gpt-4.1" })
    expect(refused.status).toBe(422)
    expect(refused.body.error).toMatchObject({ code: "validation_failed", param: "top_k" })
    // A parameter an entry rejects aborts a models[] list too (SPEC Model selection 6).
    const listed = await messages({ model: "anthropic/claude-sonnet-4.5", models: ["openai/gpt-4.1"] })
    expect([listed.status, listed.body.error?.param]).toEqual([422, "top_k"])
    expect(await fx.query("SELECT count(*)::int AS n FROM holds")).toEqual(holds)
    // auto passes over the models that refuse it: an Anthropic or Google model serves.
    const auto = await messages({ model: "auto" })
    expect(auto.status, JSON.stringify(auto.body)).toBe(200)
    expect(auto.used).toMatch(/^(anthropic|google)\//)
  })
})

describe("a request no upstream key could ever take", () => {
  it("is 422 naming max_tokens before anything is reserved, for a named model, auto and the estimate", async () => {
    // simulator/providers.yaml gives every key 10,000,000 tokens a minute.
    const holds = await fx.query("SELECT count(*)::int AS n FROM holds")
    for (const model of ["openai/gpt-4.1", "auto"]) {
      const refused = await chat({ model, max_tokens: 20_000_000 })
      expect(refused.status, JSON.stringify(refused.body)).toBe(422)
      expect(refused.body.error).toMatchObject({ code: "validation_failed", param: "max_tokens" })
    }
    expect(await fx.query("SELECT count(*)::int AS n FROM holds")).toEqual(holds)
    const quote = await makeClient(fx.baseUrl).call("GET", "/v1/inference/estimate?model=openai/gpt-4.1&promptTokens=20&completionTokens=20000000")
    expect([quote.status, quote.body.error?.param]).toEqual([422, "completionTokens"])
  })
})
