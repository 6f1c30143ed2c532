/**
 * Per-model traits (domain/exchange/traits.ts, data/exchange/model-traits.yaml): the bundled file decodes and names
 * only catalog models, the refusals SPEC "Parameter policy" asks for, and what the translators build from the traits.
 */
import { Effect, Either, Exit } from "effect"
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"
import type { ChatRequest } from "../domain/exchange/canonical.ts"
import {
  anthropicOptionsOf,
  DEFAULT_TRAITS,
  geminiOptionsOf,
  type ModelTraits,
  openaiChatOptionsOf,
  parameterRefusal,
  parseModelTraits,
  traitsFor,
  type TraitsTable
} from "../domain/exchange/traits.ts"
import { buildAnthropicRequest } from "../domain/exchange/translate/anthropicUpstream.ts"
import { buildGeminiRequest } from "../domain/exchange/translate/geminiUpstream.ts"
import { buildOpenaiChatRequest } from "../domain/exchange/translate/openaiChatUpstream.ts"
import { loadModelTraits } from "../services/exchange/traitsData.ts"

const bundledText = Fs.readFileSync(new URL("../data/exchange/model-traits.yaml", import.meta.url), "utf8")

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) throw new Error(`expected Right, got ${String(either.left)}`)
  return either.right
}
const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) throw new Error("expected Left")
  return either.left
}

const table: TraitsTable = right(parseModelTraits(bundledText))
const of = (key: string) => traitsFor(table, key)

/** Every model id of a cards directory (the `- id:` lines of each provider card). */
const cardIds = (dir: URL): Set<string> =>
  new Set(
    Fs.readdirSync(dir).flatMap((file) =>
      [...Fs.readFileSync(new URL(file, dir), "utf8").matchAll(/^\s+- id: (\S+)/gm)].map((m) => m[1]!)
    )
  )

describe("data/exchange/model-traits.yaml", () => {
  it("decodes, and every key is a model of the bundled catalog", () => {
    const catalog = cardIds(new URL("../data/cards/", import.meta.url))
    expect(table.size).toBeGreaterThan(50)
    for (const key of table.keys()) expect(catalog.has(key), key).toBe(true)
  })

  it("covers the fixture catalog's real models; the invented ones take the default", () => {
    expect(of("anthropic/claude-sonnet-4.5")).toMatchObject({ thinking: "budget", reasoningOff: "disabled", sampling: "free" })
    expect(of("google/gemini-2.5-flash")).toMatchObject({ thinking: "budget", reasoningOff: "budget0" })
    expect(of("openai/gpt-5")).toMatchObject({ thinking: "effort", reasoningOff: "minimal" })
    expect(of("openai/gpt-4.1").thinking).toBeUndefined()
    expect(of("openai/gpt-tiny")).toBe(DEFAULT_TRAITS)
    expect(of("deepseek/deepseek-reasoner")).toBe(DEFAULT_TRAITS)
  })

  it("has a source on every entry", () => {
    for (const [key, traits] of table) expect(traits.source?.trim(), key).toBeTruthy()
  })

  it("records the newer Claude models: adaptive thinking, sampling locked, reasoning off where they allow it", () => {
    expect(of("anthropic/claude-opus-4.6")).toMatchObject({ thinking: "adaptive", sampling: "free", reasoningOff: "disabled" })
    expect(of("anthropic/claude-opus-4.7")).toMatchObject({ thinking: "adaptive", sampling: "locked", reasoningOff: "omit" })
    expect(of("anthropic/claude-opus-5")).toMatchObject({ thinking: "adaptive", sampling: "locked", reasoningOff: "disabled", thinkingByDefault: true })
    expect(of("anthropic/claude-fable-5")).toMatchObject({ thinking: "adaptive", sampling: "locked", reasoningOff: "refuse" })
    for (const key of ["anthropic/claude-opus-4.5", "anthropic/claude-haiku-4.5", "anthropic/claude-sonnet-4.5"]) {
      expect(of(key)).toMatchObject({ thinking: "budget", sampling: "free" })
    }
  })

  it("records Gemini 2.5 budgets vs Gemini 3 levels, and which models cannot stop thinking", () => {
    expect(of("google/gemini-2.5-pro")).toMatchObject({ thinking: "budget", reasoningOff: "refuse" })
    expect(of("google/gemini-3-pro-preview")).toMatchObject({ thinking: "level", thinkingLevels: ["low", "high"], reasoningOff: "refuse" })
    expect(of("google/gemini-3-flash-preview")).toMatchObject({ thinking: "level", reasoningOff: "minimal" })
  })

  it("looks keys up in any case", () => {
    expect(traitsFor(table, "Anthropic/Claude-Opus-4.7")).toBe(of("anthropic/claude-opus-4.7"))
  })
})

describe("parseModelTraits refusals name the file, the model and the field", () => {
  const problem = (yaml: string) => left(parseModelTraits(yaml))
  it.each([
    ["a key that is no catalog key", "models:\n  Claude Opus:\n    source: x\n", /"Claude Opus" is not a catalog model key/],
    ["a missing source", "models:\n  anthropic/claude-x:\n    tools: true\n", /models\.anthropic\/claude-x\.source/],
    ["an unknown thinking style", "models:\n  anthropic/claude-x:\n    source: x\n    thinking: maybe\n", /models\.anthropic\/claude-x\.thinking/],
    ["levels on a budget model", "models:\n  google/g:\n    source: x\n    thinking: budget\n    thinkingLevels: [low]\n", /thinkingLevels needs thinking: level/],
    ["minimal off without a minimal level", "models:\n  google/g:\n    source: x\n    thinking: level\n    thinkingLevels: [low, high]\n    reasoningOff: minimal\n", /needs minimal among thinkingLevels/],
    ["an unknown field", "models:\n  openai/x:\n    source: x\n    colour: blue\n", /colour/],
    ["text that is not YAML", "models: [\n", /not valid YAML/]
  ])("%s", (_name, yaml, message) => {
    const text = problem(yaml)
    expect(text).toContain("data/exchange/model-traits.yaml")
    expect(text).toMatch(message)
  })

  it("fills what an entry leaves out from the default", () => {
    const parsed = right(parseModelTraits("models:\n  x-ai/grok-9:\n    source: somewhere\n"))
    expect(traitsFor(parsed, "x-ai/grok-9")).toStrictEqual({ ...DEFAULT_TRAITS, source: "somewhere", thinking: undefined, thinkingLevels: undefined, reasoningOff: undefined, topK: undefined, jsonMode: undefined })
  })
})

// ---------------------------------------------------------------------------------------------------------

const chat = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
  stop: [],
  tools: [],
  ...overrides
})
const tool = { name: "f", parameters: { type: "object" } }
const reasoning = { effort: "medium" as const, budgetTokens: 2048, exclude: false }

describe("parameterRefusal (SPEC Parameter policy: 422 naming the field)", () => {
  const opus47 = of("anthropic/claude-opus-4.7")
  const refusal = (traits: ModelTraits, vendor: string, overrides: Partial<ChatRequest>, inbound?: "chat" | "messages") =>
    parameterRefusal(traits, vendor, chat(overrides), { inbound, model: "the-model" })

  it("takes current Claude models' temperature only at 1.0 and top_p only at 0.99 or above, naming the accepted value", () => {
    const temperature = refusal(opus47, "anthropic", { temperature: 0.2 })
    expect(temperature?.param).toBe("temperature")
    expect(temperature?.message).toContain("1.0")
    expect(temperature?.type).toBe("invalid_request_error")
    expect(temperature?._tag).toBe("ValidationFailed")
    const topP = refusal(opus47, "anthropic", { topP: 0.9 })
    expect(topP?.param).toBe("top_p")
    expect(topP?.message).toContain("0.99")
    expect(refusal(opus47, "anthropic", { topK: 5 })?.param).toBe("top_k")
    expect(refusal(opus47, "anthropic", { temperature: 1, topP: 0.99 })).toBeUndefined()
    expect(refusal(opus47, "anthropic", { topP: 1 })).toBeUndefined()
  })

  it("leaves older Claude models' sampling free, within Anthropic's 0-1 temperature range", () => {
    const sonnet45 = of("anthropic/claude-sonnet-4.5")
    expect(refusal(sonnet45, "anthropic", { temperature: 0.2, topP: 0.5, topK: 5 })).toBeUndefined()
    expect(refusal(sonnet45, "anthropic", { temperature: 1.5 })?.param).toBe("temperature")
  })

  it("refuses top_k where the format has no such parameter (OpenAI-shaped vendors), forwards it to Anthropic and Google", () => {
    for (const [key, vendor] of [["openai/gpt-5", "openai"], ["deepseek/deepseek-v4-pro", "deepseek"], ["x-ai/grok-4.7", "x-ai"]] as const) {
      const error = refusal(of(key), vendor, { topK: 40 })
      expect(error?.param).toBe("top_k")
    }
    expect(refusal(of("google/gemini-2.5-flash"), "google", { topK: 40 })).toBeUndefined()
    expect(refusal(DEFAULT_TRAITS, "anthropic", { topK: 40 })).toBeUndefined()
  })

  it("refuses tools and structured output where the model has no native support", () => {
    expect(refusal({ ...DEFAULT_TRAITS, tools: false }, "cohere", { tools: [tool] })?.param).toBe("tools")
    expect(refusal({ ...DEFAULT_TRAITS, tools: false }, "cohere", {})).toBeUndefined()
    const schema = { type: "json_schema" as const, name: "o", schema: { type: "object" } }
    expect(refusal(of("deepseek/deepseek-v4-pro"), "deepseek", { responseFormat: schema })?.param).toBe("response_format")
    expect(refusal(of("deepseek/deepseek-v4-pro"), "deepseek", { responseFormat: { type: "json_object" } })).toBeUndefined()
    expect(refusal(of("anthropic/claude-sonnet-4"), "anthropic", { responseFormat: schema })?.param).toBe("response_format")
    expect(refusal(of("anthropic/claude-sonnet-4.5"), "anthropic", { responseFormat: schema })).toBeUndefined()
    // Anthropic has no JSON mode: json_object is refused, pointing at json_schema.
    const jsonObject = refusal(of("anthropic/claude-sonnet-4.5"), "anthropic", { responseFormat: { type: "json_object" } })
    expect(jsonObject?.param).toBe("response_format")
    expect(jsonObject?.message).toContain("json_schema")
    expect(refusal(of("openai/gpt-5"), "openai", { responseFormat: { type: "json_object" } })).toBeUndefined()
    expect(refusal(of("openai/gpt-5"), "openai", { responseFormat: { type: "text" } })).toBeUndefined()
  })

  it("refuses a forced tool choice on a Claude model that will be reasoning", () => {
    const forced = { tools: [tool], toolChoice: { type: "required" as const } }
    expect(refusal(of("anthropic/claude-sonnet-4.5"), "anthropic", { ...forced, reasoning })?.param).toBe("tool_choice")
    expect(refusal(of("anthropic/claude-sonnet-4.5"), "anthropic", forced)).toBeUndefined()
    expect(refusal(of("anthropic/claude-opus-5"), "anthropic", forced)?.param).toBe("tool_choice")
    expect(refusal(of("anthropic/claude-opus-5"), "anthropic", { ...forced, reasoning: null })).toBeUndefined()
    expect(refusal(of("anthropic/claude-opus-5"), "anthropic", { tools: [tool], toolChoice: { type: "auto" } })).toBeUndefined()
    expect(refusal(of("openai/gpt-5"), "openai", { ...forced, reasoning })).toBeUndefined()
  })

  it("refuses reasoning switched off on a model that cannot stop, naming the inbound format's field", () => {
    expect(refusal(of("google/gemini-2.5-pro"), "google", { reasoning: null })?.param).toBe("reasoning.enabled")
    expect(refusal(of("anthropic/claude-fable-5"), "anthropic", { reasoning: null }, "messages")?.param).toBe("thinking.type")
    expect(refusal(of("openai/o3"), "openai", { reasoning: null }, "chat")?.message).toContain("the-model")
    expect(refusal(of("google/gemini-2.5-pro"), "google", { reasoning })).toBeUndefined()
    expect(refusal(of("google/gemini-2.5-flash"), "google", { reasoning: null })).toBeUndefined()
  })

  it("refuses nothing a vendor might take on a model the file does not list (but top_k where no format has it)", () => {
    const everything = chat({
      temperature: 0.3,
      topP: 0.5,
      tools: [tool],
      toolChoice: { type: "auto" },
      responseFormat: { type: "json_schema", name: "o", schema: {} },
      reasoning: null
    })
    for (const vendor of ["openai", "anthropic", "google", "x-ai"]) expect(parameterRefusal(DEFAULT_TRAITS, vendor, everything)).toBeUndefined()
  })
})

describe("the translators built from the traits", () => {
  it("Anthropic: adaptive thinking with the effort for adaptive models, budget thinking for the others", () => {
    const target = (key: string) => ({ upstreamModel: "m", stream: false, defaultMaxTokens: 4096, ...anthropicOptionsOf(of(key)) })
    expect(buildAnthropicRequest(chat({ reasoning }), target("anthropic/claude-opus-4.7")).body).toMatchObject({
      thinking: { type: "adaptive", display: "summarized" },
      output_config: { effort: "medium" }
    })
    expect(buildAnthropicRequest(chat({ reasoning }), target("anthropic/claude-sonnet-4.5")).body.thinking).toStrictEqual({
      type: "enabled",
      budget_tokens: 2048
    })
    expect(buildAnthropicRequest(chat({ reasoning: null }), target("anthropic/claude-opus-4.7")).body.thinking).toBeUndefined()
    expect(buildAnthropicRequest(chat({ reasoning: null }), target("anthropic/claude-opus-5")).body.thinking).toStrictEqual({ type: "disabled" })
  })

  it("Gemini: thinkingLevel for Gemini 3, thinkingBudget for 2.5, never a zero budget where thinking cannot stop", () => {
    const config = (key: string, c: ChatRequest) =>
      buildGeminiRequest(c, { upstreamModel: "m", stream: false, ...geminiOptionsOf(of(key)) }).body.generationConfig?.thinkingConfig
    expect(config("google/gemini-3-pro-preview", chat({ reasoning }))).toStrictEqual({ thinkingLevel: "high", includeThoughts: true })
    expect(config("google/gemini-3.1-pro-preview", chat({ reasoning }))).toStrictEqual({ thinkingLevel: "medium", includeThoughts: true })
    expect(config("google/gemini-2.5-pro", chat({ reasoning }))).toStrictEqual({ thinkingBudget: 2048, includeThoughts: true })
    expect(config("google/gemini-2.5-pro", chat({ reasoning: null }))).toBeUndefined()
    expect(config("google/gemini-2.5-flash", chat({ reasoning: null }))).toStrictEqual({ thinkingBudget: 0 })
    expect(config("google/gemini-3-flash-preview", chat({ reasoning: null }))).toStrictEqual({ thinkingLevel: "minimal" })
  })

  it("OpenAI-shaped: the model's lowest effort, or the vendor's thinking switch, when reasoning is off", () => {
    const body = (key: string, vendor: string) =>
      buildOpenaiChatRequest(chat({ reasoning: null }), { upstreamModel: "m", vendor, stream: false, ...openaiChatOptionsOf(of(key)) }).body
    expect(body("openai/gpt-5", "openai").reasoning_effort).toBe("minimal")
    expect(body("openai/gpt-5.1", "openai").reasoning_effort).toBe("none")
    expect(body("deepseek/deepseek-v4-pro", "deepseek").thinking).toStrictEqual({ type: "disabled" })
    expect(body("openai/gpt-4.1", "openai").reasoning_effort).toBeUndefined()
  })
})

describe("services/exchange/traitsData.ts", () => {
  it("loads the bundled file and answers by model key", () => {
    const loaded = Effect.runSync(loadModelTraits())
    expect(loaded.size).toBe(table.size)
    expect(traitsFor(loaded, "Anthropic/Claude-Opus-4.7")).toStrictEqual(of("anthropic/claude-opus-4.7"))
  })

  it("fails the start with a sentence naming a file it cannot read", () => {
    const exit = Effect.runSyncExit(loadModelTraits("/nonexistent/model-traits.yaml"))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("/nonexistent/model-traits.yaml cannot be read")
  })
})
