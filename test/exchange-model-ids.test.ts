/**
 * The vendors' own model ids on the exchange (DESIGN.md 10 "Model ids"; SPEC "Model selection" 1 and 7): a card's
 * sdkId, dated snapshots, undated and `-latest` aliases, the dashed form of a bare name, each case-insensitive and with
 * or without the vendor prefix. First the resolver alone over a made-up catalog (domain/exchange/modelIds.ts), then the
 * real stack with the official SDKs over the fixture catalog (test/fixtures/exchange: anthropic/claude-sonnet-4.5 has
 * sdkId `claude-sonnet-4-5`, openai/gpt-tiny `gpt-4.1-nano`).
 */
import Anthropic from "@anthropic-ai/sdk"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeModelIdIndex, type ModelIdSource, splitDate } from "../domain/exchange/modelIds.ts"
import { makeKeyIndex } from "../domain/oracle/keys.ts"
import { envelopeProblem } from "./support/errorEnvelope.ts"
import { type ExchangeFixture, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"

describe("the model id resolver", () => {
  const model = (key: string, sdkId: string, retired = false): ModelIdSource => ({ key, sdkId, retired })
  const catalog: ReadonlyArray<ModelIdSource> = [
    model("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5-20250929"),
    model("anthropic/claude-opus-4.8", "claude-opus-4-8"),
    model("anthropic/claude-3.5-haiku", "claude-3-5-haiku-20241022", true),
    model("openai/gpt-4.1", "gpt-4.1"),
    model("openai/gpt-tiny", "gpt-4.1-nano"),
    model("openai/gpt-5", "gpt-5"),
    // DeepSeek moved `deepseek-chat` from model to model: the retired ones yield it to the live one.
    model("deepseek/deepseek-v3.1", "deepseek-chat", true),
    model("deepseek/deepseek-v3.2", "deepseek-chat"),
    // Two retired models claiming one id, and two live ones of different vendors: nobody gets it.
    model("deepseek/deepseek-r1", "deepseek-reasoner", true),
    model("deepseek/deepseek-r1-0528", "deepseek-reasoner", true),
    model("google/gemini-shared", "shared-id"),
    model("x-ai/grok-shared", "shared-id"),
    // A bare name that is also another model's dashed form, and an sdkId that is another's undated stem.
    model("qwen/qwen3-5", "qwen3-5"),
    model("qwen/qwen3.5", "qwen3.5"),
    model("mistralai/foo-2", "foo-2"),
    model("mistralai/foo-2-next", "foo-2-20250101"),
    model("mistralai/mistral-large-3", "mistral-large-2512")
  ]
  const vendors = ["anthropic", "openai", "deepseek", "google", "x-ai", "qwen", "mistralai"]
  // As makeRoutableCatalog builds it: no retired model, and openai/gpt-5 is in the catalog but no provider serves it here.
  const routable = catalog.filter((m) => !m.retired && m.key !== "openai/gpt-5").map((m) => m.key)
  const index = makeModelIdIndex(vendors, catalog, routable)
  const found = (name: string) => {
    const resolution = index.resolve(name)
    return resolution._tag === "Found" ? resolution.modelKey : resolution
  }

  it("keeps the catalog's own spellings and refusals as the oracle reads them", () => {
    expect(found("anthropic/claude-sonnet-4.5")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("Claude-Sonnet-4.5")).toBe("anthropic/claude-sonnet-4.5")
    expect(index.resolve("anthropic/gpt-4.1")).toMatchObject({ _tag: "Invalid", message: expect.stringContaining("not a anthropic model") })
    expect(index.resolve("nobody/gpt-4.1")).toMatchObject({ _tag: "Invalid", message: expect.stringContaining(`unknown vendor "nobody"`) })
    expect(index.resolve("")).toMatchObject({ _tag: "Invalid" })
    // The oracle's own index is untouched: vendor ids are the exchange's only.
    expect(makeKeyIndex(vendors, catalog.map((m) => m.key)).resolve("claude-opus-4-8")._tag).toBe("NotFound")
  })

  it("resolves a card's sdkId exactly, case-insensitively, with or without the vendor prefix", () => {
    expect(found("claude-sonnet-4-5-20250929")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("claude-opus-4-8")).toBe("anthropic/claude-opus-4.8")
    expect(found("gpt-4.1-nano")).toBe("openai/gpt-tiny")
    expect(found("CLAUDE-Sonnet-4-5-20250929")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("anthropic/claude-sonnet-4-5-20250929")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("Anthropic/Claude-Opus-4-8")).toBe("anthropic/claude-opus-4.8")
    expect(found("  openai/gpt-4.1-nano ")).toBe("openai/gpt-tiny")
  })

  it("resolves the undated alias of a dated sdkId, and the bare name with dots as dashes", () => {
    expect(found("claude-sonnet-4-5")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("anthropic/claude-sonnet-4-5")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("claude-opus-4-8")).toBe("anthropic/claude-opus-4.8")
    expect(found("gpt-4-1")).toBe("openai/gpt-4.1")
  })

  it("resolves a client's dated snapshot on its undated stem, in either date form", () => {
    expect(splitDate("gpt-4.1-2025-04-14")).toEqual({ stem: "gpt-4.1", date: "20250414" })
    expect(splitDate("claude-opus-4-8-20260101")).toEqual({ stem: "claude-opus-4-8", date: "20260101" })
    expect(splitDate("mistral-large-2512")).toBeUndefined()
    expect(splitDate("command-a-03-2025")).toBeUndefined()
    expect(found("gpt-4.1-2025-04-14")).toBe("openai/gpt-4.1")
    expect(found("gpt-4.1-nano-2025-04-14")).toBe("openai/gpt-tiny")
    expect(found("claude-opus-4-8-20260101")).toBe("anthropic/claude-opus-4.8")
    expect(found("claude-sonnet-4-5-2025-09-29")).toBe("anthropic/claude-sonnet-4.5")
    // The card prices one snapshot; another date is another model, refused rather than replaced.
    expect(index.resolve("claude-sonnet-4-5-20240101")).toMatchObject({
      _tag: "Invalid",
      message: expect.stringContaining("anthropic/claude-sonnet-4.5 is claude-sonnet-4-5-20250929")
    })
  })

  it("takes a -latest alias only where its stem names one model", () => {
    expect(found("claude-sonnet-4-5-latest")).toBe("anthropic/claude-sonnet-4.5")
    expect(found("gpt-4.1-latest")).toBe("openai/gpt-4.1")
    // Family pointers that move across versions name no catalog model.
    expect(index.resolve("mistral-large-latest")._tag).toBe("NotFound")
    expect(index.resolve("chatgpt-4o-latest")._tag).toBe("NotFound")
  })

  it("lets a catalog name win over an alias, and an sdkId over a derived alias", () => {
    expect(found("qwen3-5")).toBe("qwen/qwen3-5")
    expect(found("qwen3.5")).toBe("qwen/qwen3.5")
    expect(found("foo-2")).toBe("mistralai/foo-2")
    expect(found("foo-2-20250101")).toBe("mistralai/foo-2-next")
    expect(index.aliasesOf("qwen/qwen3.5")).toEqual([])
    expect(index.aliasesOf("mistralai/foo-2-next")).toEqual(["foo-2-20250101"])
    expect(index.aliasesOf("anthropic/claude-sonnet-4.5")).toEqual(["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"])
  })

  it("never picks between two models claiming one id: a retired claim yields to a live one, else the refusal names both", () => {
    expect(found("deepseek-chat")).toBe("deepseek/deepseek-v3.2")
    expect(index.resolve("shared-id")).toEqual({
      _tag: "Invalid",
      message: `"shared-id" names more than one catalog model (google/gemini-shared, x-ai/grok-shared); name one of them`
    })
    expect(found("google/shared-id")).toBe("google/gemini-shared")
    expect(found("x-ai/SHARED-ID")).toBe("x-ai/grok-shared")
    expect(index.resolve("deepseek-reasoner")).toMatchObject({
      _tag: "Invalid",
      message: expect.stringContaining("deepseek/deepseek-r1, deepseek/deepseek-r1-0528")
    })
  })

  it("refuses an alias under another vendor's prefix, as it does a catalog name", () => {
    expect(index.resolve("openai/claude-opus-4-8")).toEqual({
      _tag: "Invalid",
      message: `"claude-opus-4-8" is not a openai model; did you mean anthropic/claude-opus-4.8?`
    })
  })

  it("answers NotFound on the routable index for a model this exchange cannot serve, Found on the catalog's", () => {
    expect(index.resolve("gpt-5")._tag).toBe("NotFound")
    expect(index.resolveInCatalog("gpt-5")).toEqual({ _tag: "Found", modelKey: "openai/gpt-5" })
    expect(index.resolve("claude-3-5-haiku-20241022")._tag).toBe("NotFound")
    expect(index.resolveInCatalog("claude-3-5-haiku-latest")).toEqual({ _tag: "Found", modelKey: "anthropic/claude-3.5-haiku" })
  })

  it("suggests at most three routable models by edit distance for an id that names nothing", () => {
    expect(index.resolve("claude-sonet-4-5")._tag).toBe("NotFound")
    expect(index.suggest("claude-sonet-4-5")[0]).toBe("anthropic/claude-sonnet-4.5")
    expect(index.suggest("anthropic/claude-sonnet-4-6-20250929")[0]).toBe("anthropic/claude-sonnet-4.5")
    expect(index.suggest("gpt-4.1-mini").length).toBeLessThanOrEqual(3)
    expect(index.suggest("gpt-4.1-mini")).toContain("openai/gpt-tiny")
    // Never a model this exchange cannot serve, and nothing for an id close to nothing.
    expect(index.suggest("gpt-6")).not.toContain("openai/gpt-5")
    expect(index.suggest("xyzzy-plugh")).toEqual([])
    expect(index.suggest("x".repeat(200))).toEqual([])
    expect(index.resolve("antropic/claude-opus-4-8")).toMatchObject({
      _tag: "Invalid",
      message: expect.stringMatching(/^unknown vendor "antropic"; did you mean anthropic\/claude-opus-4\.8/)
    })
  })
})

describe("vendor model ids over the real stack", () => {
  let fx: ExchangeFixture
  let key: { id: string; secret: string }
  let openai: OpenAI
  let anthropic: Anthropic

  beforeAll(async () => {
    fx = await startExchangeFixture()
    key = await fx.issueKey({ label: "model id tests" })
    await fx.grant(100n * ONE_CREDIT)
    const clients = sdkClients(fx.baseUrl, key.secret)
    openai = clients.openai
    anthropic = clients.anthropic
  }, 120_000)

  afterAll(async () => {
    await fx?.close()
  })

  it("the Anthropic SDK's dated and undated ids reach anthropic/claude-sonnet-4.5", async () => {
    for (const model of ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5-20250929", "Claude-Sonnet-4-5-latest"]) {
      const { data, response } = await anthropic.messages
        .create({ model, max_tokens: 32, messages: [{ role: "user", content: "Which model are you?" }] })
        .withResponse()
      expect(data.type, model).toBe("message")
      expect(response.headers.get("x-model-used"), model).toBe("anthropic/claude-sonnet-4.5")
      expect(response.headers.get("x-model-requested"), model).toBe("anthropic/claude-sonnet-4.5")
    }
  })

  it("the OpenAI SDK's ids reach the catalog model: gpt-4.1-nano is openai/gpt-tiny", async () => {
    const { response } = await openai.chat.completions
      .create({ model: "gpt-4.1-nano", max_tokens: 8, messages: [{ role: "user", content: "Hi" }] })
      .withResponse()
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-tiny")
    const dated = await openai.chat.completions
      .create({ model: "gpt-4.1-2025-04-14", max_tokens: 8, messages: [{ role: "user", content: "Hi" }] })
      .withResponse()
    expect(dated.response.headers.get("x-model-used")).toBe("openai/gpt-4.1")
  })

  it("the estimate resolves a vendor id as a send would", async () => {
    for (const [model, resolved] of [["gpt-4.1-nano", "openai/gpt-tiny"], ["claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"]] as const) {
      const response = await fetch(`${fx.baseUrl}/v1/inference/estimate?model=${encodeURIComponent(model)}&promptTokens=20&completionTokens=16`)
      const body = (await response.json()) as any
      expect(response.status, JSON.stringify(body)).toBe(200)
      expect(body).toMatchObject({ model, resolvedModel: resolved })
    }
  })

  it("an id that names nothing is 422 validation_failed on model, naming the closest catalog ids", async () => {
    const refusals = [
      fetch(`${fx.baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-sonet-4-5", messages: [{ role: "user", content: "x" }] })
      }),
      fetch(`${fx.baseUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": key.secret, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-sonet-4-5", max_tokens: 16, messages: [{ role: "user", content: "x" }] })
      }),
      fetch(`${fx.baseUrl}/v1/inference/estimate?model=claude-sonet-4-5`)
    ]
    for (const response of await Promise.all(refusals)) {
      const body = (await response.json()) as any
      expect(response.status, `${response.url} ${JSON.stringify(body)}`).toBe(422)
      expect(envelopeProblem(response.status, body), response.url).toBeUndefined()
      expect(body.error).toMatchObject({ code: "validation_failed", param: "model" })
      expect(body.error.message).toMatch(/did you mean anthropic\/claude-sonnet-4\.5/i)
    }
  })

  it("the SDKs surface the same refusal as their typed 422", async () => {
    const refused = await openai.chat.completions.create({ model: "gpt-4.1-nanoo", messages: [{ role: "user", content: "x" }] }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(refused).toBeInstanceOf(OpenAI.UnprocessableEntityError)
    expect((refused as InstanceType<typeof OpenAI.UnprocessableEntityError>).message).toContain("openai/gpt-tiny")
  })
})

describe("a catalog model no provider serves here", () => {
  let fx: ExchangeFixture
  let key: { id: string; secret: string }
  let providersDir: string

  beforeAll(async () => {
    providersDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-model-ids-"))
    const file = Path.join(providersDir, "providers.yaml")
    // OpenAI only: the fixture's Anthropic and Google models stay in the catalog with nobody to serve them.
    Fs.writeFileSync(
      file,
      ["providers:", "  - name: openai", "    format: openai-chat", "    baseUrl: ${SIMULATOR_URL}/v1", "    keys:", "      - { secret: sim-openai, rpm: 6000, tpm: 10000000 }", ""].join("\n")
    )
    fx = await startExchangeFixture({ PROVIDERS_FILE: file })
    key = await fx.issueKey({ label: "not routable" })
    await fx.grant(ONE_CREDIT)
  }, 120_000)

  afterAll(async () => {
    await fx?.close()
    if (providersDir !== undefined) Fs.rmSync(providersDir, { recursive: true, force: true })
  })

  const send = async (path: string, body: unknown) => {
    const response = await fetch(`${fx.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as any }
  }

  it("is 503 naming the model as the client asked for it, its name and key, and what to configure", async () => {
    const asked = await send("/v1/chat/completions", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] })
    expect(asked.status).toBe(503)
    expect(envelopeProblem(asked.status, asked.body)).toBeUndefined()
    expect(asked.body.error.message).toBe(
      "claude-sonnet-4-5 (Claude Sonnet 4.5 (fixture), anthropic/claude-sonnet-4.5) is in the catalog but not routable here: " +
        "no configured provider serves it (configure anthropic in PROVIDERS_FILE or set ANTHROPIC_API_KEY)."
    )
    // Asked by its catalog key, the key is what was asked: named once, with the display name.
    const byKey = await send("/v1/chat/completions", { model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: "x" }] })
    expect(byKey.body.error.message).toMatch(/^anthropic\/claude-sonnet-4\.5 \(Claude Sonnet 4\.5 \(fixture\)\) is in the catalog but not routable here/)
    // The embeddings route names it the same way.
    const embedding = await send("/v1/embeddings", { model: "gemini-embedding-001", input: "x" })
    expect(embedding.status).toBe(503)
    expect(embedding.body.error.message).toBe(
      "gemini-embedding-001 (Gemini Embedding (fixture), google/gemini-embedding-001) is in the catalog but not routable here: " +
        "no configured provider serves it (configure google in PROVIDERS_FILE or set GEMINI_API_KEY or GOOGLE_API_KEY)."
    )
  })
})
