import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { type ChatEvent, type ChatRequest, foldEvents, mergeUsage, type Usage } from "../domain/exchange/canonical.ts"
import {
  buildGeminiCountTokensRequest,
  buildGeminiRequest,
  makeGeminiStreamParser,
  parseGeminiCountTokens,
  parseGeminiResponse,
  stopReasonOfGemini,
  THOUGHT_SIGNATURE_PLACEHOLDER,
  thinkingLevelOf,
  usageOfGemini
} from "../domain/exchange/translate/geminiUpstream.ts"

const base: ChatRequest = { messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }], stop: [], tools: [] }

const weatherTool = {
  name: "get_weather",
  description: "Weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }
}

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) throw new Error(`expected Right, got ${JSON.stringify(either.left)}`)
  return either.right
}
const left = <A, E>(either: Either.Either<A, E>): E => {
  if (Either.isRight(either)) throw new Error(`expected Left, got ${JSON.stringify(either.right)}`)
  return either.left
}

describe("buildGeminiRequest", () => {
  const chat: ChatRequest = {
    messages: [
      { role: "system", parts: [{ type: "text", text: "You are terse.", cache: { ttl: "5m" } }, { type: "text", text: "Answer in English." }] },
      { role: "system", parts: [{ type: "text", text: "Never guess." }] },
      { role: "user", parts: [{ type: "text", text: "Weather in Paris and Rome?", cache: { ttl: "1h" } }] },
      {
        role: "assistant",
        parts: [{ type: "text", text: "Checking." }],
        toolCalls: [
          { id: "call_a", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
          { id: "call_b", name: "get_weather", arguments: "{\"city\":\"Rome\"}" }
        ],
        reasoning: "The user wants two cities."
      },
      { role: "tool", toolCallId: "call_a", parts: [{ type: "text", text: "18C" }, { type: "text", text: ", sunny" }] },
      { role: "tool", toolCallId: "call_b", parts: [{ type: "text", text: "timeout" }], isError: true },
      { role: "user", parts: [{ type: "text", text: "And now?" }] }
    ],
    maxOutputTokens: 2000,
    temperature: 0.2,
    topP: 0.9,
    topK: 40,
    stop: ["END"],
    frequencyPenalty: 0.1,
    presencePenalty: 0.3,
    seed: 7,
    logitBias: { "50256": -100 },
    logprobs: true,
    topLogprobs: 3,
    tools: [{ ...weatherTool, cache: { ttl: "5m" } }],
    toolChoice: { type: "tool", name: "get_weather" },
    parallelToolCalls: false,
    responseFormat: { type: "json_schema", name: "answer", schema: { type: "object", properties: { t: { type: "string" } } } },
    reasoning: { effort: "medium", budgetTokens: 1024, exclude: false },
    userFingerprint: "fp-123"
  }

  it("maps every canonical field to the REST request, dropping what Gemini has no field for", () => {
    const { path, body } = buildGeminiRequest(chat, { upstreamModel: "gemini-2.5-pro", stream: false })
    expect(path).toBe("/v1beta/models/gemini-2.5-pro:generateContent")
    expect(body).toStrictEqual({
      // Parts of one message joined with "\n" (as on the OpenAI-shaped format), system messages with a blank line.
      systemInstruction: { parts: [{ text: "You are terse.\nAnswer in English.\n\nNever guess." }] },
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
        {
          role: "model",
          parts: [
            { text: "Checking." },
            { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: THOUGHT_SIGNATURE_PLACEHOLDER },
            { functionCall: { name: "get_weather", args: { city: "Rome" } } }
          ]
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { content: "18C\n, sunny" } } },
            { functionResponse: { name: "get_weather", response: { content: "timeout", isError: true } } }
          ]
        },
        { role: "user", parts: [{ text: "And now?" }] }
      ],
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather of a city", parametersJsonSchema: weatherTool.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
      generationConfig: {
        maxOutputTokens: 2000,
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        stopSequences: ["END"],
        seed: 7,
        presencePenalty: 0.3,
        frequencyPenalty: 0.1,
        responseMimeType: "application/json",
        responseJsonSchema: { type: "object", properties: { t: { type: "string" } } },
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true }
      }
    })
    const json = JSON.stringify(body)
    for (const dropped of ["cache", "ttl", "logit", "logprob", "fp-123", "parallel", "two cities"]) expect(json).not.toContain(dropped)
  })

  it("streams over SSE and maps the remaining controls", () => {
    const { path, body } = buildGeminiRequest(
      { ...base, reasoning: null, responseFormat: { type: "json_object" }, tools: [weatherTool], toolChoice: { type: "required" } },
      { upstreamModel: "gemini-2.5-flash", stream: true }
    )
    expect(path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    expect(body.generationConfig).toStrictEqual({ responseMimeType: "application/json", thinkingConfig: { thinkingBudget: 0 } })
    expect(body.toolConfig).toStrictEqual({ functionCallingConfig: { mode: "ANY" } })
    expect(body.systemInstruction).toBeUndefined()

    const mode = (toolChoice: ChatRequest["toolChoice"]) =>
      buildGeminiRequest({ ...base, tools: [weatherTool], toolChoice }, { upstreamModel: "m", stream: false }).body.toolConfig
    expect(mode({ type: "auto" })).toStrictEqual({ functionCallingConfig: { mode: "AUTO" } })
    expect(mode({ type: "none" })).toStrictEqual({ functionCallingConfig: { mode: "NONE" } })
    expect(mode(undefined)).toBeUndefined()
  })

  it("sends no optional section the request did not ask for", () => {
    const { body } = buildGeminiRequest(
      { ...base, responseFormat: { type: "text" }, reasoning: { effort: "high", budgetTokens: 3000, exclude: true } },
      { upstreamModel: "gemini-2.5-flash", stream: false }
    )
    expect(body).toStrictEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
      generationConfig: { thinkingConfig: { thinkingBudget: 3000, includeThoughts: false } }
    })
    expect(buildGeminiRequest(base, { upstreamModel: "m", stream: false }).body).toStrictEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }]
    })
    // A tool choice without tools is dropped by policy, here too.
    expect(buildGeminiRequest({ ...base, toolChoice: { type: "required" } }, { upstreamModel: "m", stream: false }).body.toolConfig)
      .toBeUndefined()
  })

  it("keeps unparsable replayed arguments, and names a result of an unknown call by its id", () => {
    const { body } = buildGeminiRequest(
      {
        ...base,
        messages: [
          { role: "assistant", parts: [], toolCalls: [{ id: "x1", name: "f", arguments: "not json" }, { id: "x2", name: "g", arguments: "" }] },
          { role: "tool", toolCallId: "x2", parts: [{ type: "text", text: "ok" }] },
          { role: "tool", toolCallId: "ghost", parts: [{ type: "text", text: "?" }] }
        ]
      },
      { upstreamModel: "m", stream: false }
    )
    expect(body.contents).toStrictEqual([
      {
        role: "model",
        parts: [
          { functionCall: { name: "f", args: { arguments: "not json" } }, thoughtSignature: THOUGHT_SIGNATURE_PLACEHOLDER },
          { functionCall: { name: "g", args: {} } }
        ]
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "g", response: { content: "ok" } } },
          { functionResponse: { name: "ghost", response: { content: "?" } } }
        ]
      }
    ])
  })

  it("resolves a reused call id to the latest call that had it", () => {
    const { body } = buildGeminiRequest(
      {
        ...base,
        messages: [
          { role: "assistant", parts: [], toolCalls: [{ id: "call_0", name: "first", arguments: "{}" }] },
          { role: "tool", toolCallId: "call_0", parts: [{ type: "text", text: "1" }] },
          { role: "assistant", parts: [], toolCalls: [{ id: "call_0", name: "second", arguments: "{}" }] },
          { role: "tool", toolCallId: "call_0", parts: [{ type: "text", text: "2" }] }
        ]
      },
      { upstreamModel: "m", stream: false }
    )
    const names = body.contents.flatMap((c) => (c.parts ?? []).flatMap((p) => (p.functionResponse ? [p.functionResponse.name] : [])))
    expect(names).toStrictEqual(["first", "second"])
  })
})

describe("countTokens", () => {
  it("wraps the whole prompt so system instruction and tools are counted", () => {
    const chat: ChatRequest = {
      ...base,
      messages: [{ role: "system", parts: [{ type: "text", text: "Be brief." }] }, ...base.messages],
      tools: [weatherTool],
      toolChoice: { type: "auto" },
      maxOutputTokens: 100
    }
    expect(buildGeminiCountTokensRequest(chat, { upstreamModel: "gemini-2.5-pro" })).toStrictEqual({
      path: "/v1beta/models/gemini-2.5-pro:countTokens",
      body: {
        generateContentRequest: {
          model: "models/gemini-2.5-pro",
          contents: [{ role: "user", parts: [{ text: "Hi" }] }],
          systemInstruction: { parts: [{ text: "Be brief." }] },
          tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather of a city", parametersJsonSchema: weatherTool.parameters }] }],
          toolConfig: { functionCallingConfig: { mode: "AUTO" } }
        }
      }
    })
  })

  it("parses the count, a zero the vendor omitted, and refuses errors and garbage", () => {
    expect(right(parseGeminiCountTokens({ totalTokens: 31, promptTokensDetails: [{ modality: "TEXT", tokenCount: 31 }] }))).toBe(31)
    expect(right(parseGeminiCountTokens({}))).toBe(0)
    const error = left(parseGeminiCountTokens({ error: { code: 400, message: "bad model", status: "INVALID_ARGUMENT" } }))
    expect(error._tag).toBe("UpstreamProtocolError")
    expect(error.status).toBe(400)
    expect(error.message).toContain("bad model")
    expect(left(parseGeminiCountTokens({ totalTokens: "many" }))._tag).toBe("UpstreamProtocolError")
    expect(left(parseGeminiCountTokens(null))._tag).toBe("UpstreamProtocolError")
  })
})

describe("usage mapping", () => {
  it("takes cached tokens out of the prompt count and thoughts into output", () => {
    expect(
      usageOfGemini({ promptTokenCount: 12000, cachedContentTokenCount: 8000, candidatesTokenCount: 300, thoughtsTokenCount: 700, totalTokenCount: 13000 })
    ).toStrictEqual({ freshInput: 4000, cacheRead: 8000, output: 1000, reasoning: 700 })
  })

  it("leaves unreported counts undefined", () => {
    expect(usageOfGemini({ promptTokenCount: 9, totalTokenCount: 9 })).toStrictEqual({
      freshInput: 9,
      cacheRead: undefined,
      output: undefined,
      reasoning: undefined
    })
    expect(usageOfGemini({ candidatesTokenCount: 5 })).toStrictEqual({ freshInput: undefined, cacheRead: undefined, output: 5, reasoning: undefined })
  })

  it("bills built-in tool prompt tokens as fresh input", () => {
    expect(usageOfGemini({ promptTokenCount: 100, toolUsePromptTokenCount: 50, candidatesTokenCount: 1 }).freshInput).toBe(150)
  })
})

describe("parseGeminiResponse", () => {
  it("reads a thinking reply: thought summary, text, usage, stop; the thought signature is not surfaced", () => {
    const events = right(
      parseGeminiResponse({
        candidates: [
          {
            content: {
              parts: [
                { text: "**Weighing options** I compare both.", thought: true },
                { text: "Paris is the capital.", thoughtSignature: "c2lnLTE=" }
              ],
              role: "model"
            },
            finishReason: "STOP",
            index: 0,
            safetyRatings: [{ category: "HARM_CATEGORY_HATE_SPEECH", probability: "NEGLIGIBLE" }]
          }
        ],
        usageMetadata: {
          promptTokenCount: 2100,
          candidatesTokenCount: 6,
          totalTokenCount: 2150,
          cachedContentTokenCount: 2048,
          promptTokensDetails: [{ modality: "TEXT", tokenCount: 2100 }],
          cacheTokensDetails: [{ modality: "TEXT", tokenCount: 2048 }],
          thoughtsTokenCount: 44
        },
        modelVersion: "gemini-2.5-flash",
        responseId: "resp-1"
      })
    )
    expect(events).toStrictEqual<ReadonlyArray<ChatEvent>>([
      { type: "start", upstreamId: "resp-1" },
      { type: "reasoning_delta", text: "**Weighing options** I compare both." },
      // Gemini's thoughtSignature is not a signature the exchange passes on (SPEC: Anthropic's only).
      { type: "text_delta", text: "Paris is the capital." },
      { type: "usage", usage: { freshInput: 52, cacheRead: 2048, output: 50, reasoning: 44 } },
      { type: "stop", reason: "stop" }
    ])
  })

  it("reads function calls: one index each, vendor id or a synthesized one, whole args, tool_calls", () => {
    const events = right(
      parseGeminiResponse({
        candidates: [
          {
            content: {
              parts: [
                { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "sig" },
                { functionCall: { id: "v-9", name: "get_weather", args: { city: "Rome" } } }
              ],
              role: "model"
            },
            finishReason: "STOP"
          }
        ],
        usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 20, totalTokenCount: 70 }
      })
    )
    const result = foldEvents(events)
    expect(result.toolCalls).toStrictEqual([
      { id: "call_0", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
      { id: "v-9", name: "get_weather", arguments: "{\"city\":\"Rome\"}" }
    ])
    expect(result.stopReason).toBe("tool_calls")
    expect(result.usage).toEqual({ freshInput: 50, output: 20 })
    expect(events[0]).toStrictEqual({ type: "start", upstreamId: undefined })
  })

  it("maps finish reasons", () => {
    const stopOf = (body: unknown) => foldEvents(right(parseGeminiResponse(body))).stopReason
    const reply = (finishReason: string) => ({ candidates: [{ content: { parts: [{ text: "x" }], role: "model" }, finishReason }] })
    expect(stopOf(reply("MAX_TOKENS"))).toBe("length")
    for (const reason of ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "OTHER", "SOMETHING_NEW"]) {
      expect(stopOf(reply(reason))).toBe("content_filter")
    }
    // A candidate cut by SAFETY before any token has no content at all.
    expect(stopOf({ candidates: [{ finishReason: "SAFETY", index: 0 }] })).toBe("content_filter")
    // A blocked prompt has no candidate.
    expect(stopOf({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } })).toBe("content_filter")
    expect(stopReasonOfGemini("MAX_TOKENS", true)).toBe("length")
    // No finishReason on a whole reply: it still ends, once.
    const events = right(parseGeminiResponse({ candidates: [{ content: { parts: [{ text: "x" }] } }] }))
    expect(events.filter((e) => e.type === "stop")).toStrictEqual([{ type: "stop", reason: "stop" }])
  })

  it("refuses an error body and a body of the wrong shape", () => {
    const error = left(parseGeminiResponse({ error: { code: 429, message: "Resource has been exhausted", status: "RESOURCE_EXHAUSTED" } }))
    expect(error._tag).toBe("UpstreamProtocolError")
    expect(error.status).toBe(429)
    expect(error.message).toBe("RESOURCE_EXHAUSTED: Resource has been exhausted")
    expect(left(parseGeminiResponse({ candidates: "nope" }))._tag).toBe("UpstreamProtocolError")
    expect(left(parseGeminiResponse({ candidates: [{ content: { parts: [{ text: 5 }] } }] }))._tag).toBe("UpstreamProtocolError")
    expect(left(parseGeminiResponse({ usageMetadata: { promptTokenCount: -1 } }))._tag).toBe("UpstreamProtocolError")
  })
})

describe("makeGeminiStreamParser", () => {
  const run = (chunks: ReadonlyArray<string>) => {
    const parse = makeGeminiStreamParser()
    return chunks.flatMap((chunk) => right(parse(chunk)))
  }

  it("turns a thinking stream into events, with usage as running reports (later wins, never summed)", () => {
    const chunks = [
      { candidates: [{ content: { parts: [{ text: "Thinking about it", thought: true }], role: "model" }, index: 0 }], usageMetadata: { promptTokenCount: 1200, totalTokenCount: 1200, cachedContentTokenCount: 1024 }, modelVersion: "gemini-2.5-pro", responseId: "r-7" },
      { candidates: [{ content: { parts: [{ text: "Hello", thoughtSignature: "AbCd" }], role: "model" }, index: 0 }], usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 1, totalTokenCount: 1300, cachedContentTokenCount: 1024, thoughtsTokenCount: 99 }, modelVersion: "gemini-2.5-pro", responseId: "r-7" },
      { candidates: [{ content: { parts: [{ text: " world" }], role: "model" }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 3, totalTokenCount: 1302, cachedContentTokenCount: 1024, thoughtsTokenCount: 99 }, modelVersion: "gemini-2.5-pro", responseId: "r-7" }
    ].map((chunk) => JSON.stringify(chunk))
    const events = run(chunks)
    expect(events.filter((e) => e.type === "start")).toStrictEqual([{ type: "start", upstreamId: "r-7" }])
    expect(events.map((e) => e.type)).toStrictEqual([
      "start", "reasoning_delta", "usage", "text_delta", "usage", "text_delta", "usage", "stop"
    ])
    const usages = events.flatMap((e) => (e.type === "usage" ? [e.usage] : []))
    expect(usages[0]).toStrictEqual({ freshInput: 176, cacheRead: 1024, output: undefined, reasoning: undefined })
    const merged = usages.reduce<Usage>((acc, u) => mergeUsage(acc, u), {})
    expect(merged).toStrictEqual({ freshInput: 176, cacheRead: 1024, output: 102, reasoning: 99, cacheWrite5m: undefined, cacheWrite1h: undefined })
    const result = foldEvents(events)
    expect(result).toMatchObject({ text: "Hello world", reasoning: "Thinking about it", reasoningSignature: null, stopReason: "stop" })
  })

  it("numbers calls across chunks and ends in tool_calls; a trailing usage-only chunk adds no second stop", () => {
    const events = run([
      JSON.stringify({ candidates: [{ content: { parts: [{ text: "Let me check." }], role: "model" } }] }),
      JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: "a", args: { x: 1 } } }], role: "model" } }] }),
      JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: "b" } }], role: "model" }, finishReason: "STOP" }] }),
      JSON.stringify({ usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 8, totalTokenCount: 18 } }),
      "",
      "[DONE]"
    ])
    expect(events.filter((e) => e.type === "tool_call_delta")).toStrictEqual([
      { type: "tool_call_delta", index: 0, id: "call_0", name: "a", argumentsDelta: "{\"x\":1}" },
      { type: "tool_call_delta", index: 1, id: "call_1", name: "b", argumentsDelta: "{}" }
    ])
    expect(events.filter((e) => e.type === "stop")).toStrictEqual([{ type: "stop", reason: "tool_calls" }])
    expect(events[events.length - 1]).toStrictEqual({ type: "usage", usage: { freshInput: 10, cacheRead: undefined, output: 8, reasoning: undefined } })
  })

  it("keeps separate state per stream", () => {
    const chunk = JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: "a", args: {} } }] } }] })
    const first = makeGeminiStreamParser()
    right(first(chunk))
    const second = makeGeminiStreamParser()
    expect(right(second(chunk))).toContainEqual({ type: "tool_call_delta", index: 0, id: "call_0", name: "a", argumentsDelta: "{}" })
  })

  it("fails on an error chunk (stream error) and on an unreadable chunk (protocol error)", () => {
    const parse = makeGeminiStreamParser()
    right(parse(JSON.stringify({ candidates: [{ content: { parts: [{ text: "Hel" }] } }] })))
    const broken = left(parse(JSON.stringify({ error: { code: 500, message: "An internal error has occurred.", status: "INTERNAL" } })))
    expect(broken._tag).toBe("UpstreamStreamError")
    expect(broken.status).toBe(500)
    expect(broken.message).toContain("internal error")
    expect(left(parse("{not json"))._tag).toBe("UpstreamProtocolError")
    expect(left(parse(JSON.stringify({ candidates: [{ finishReason: 3 }] })))._tag).toBe("UpstreamProtocolError")
  })
})

describe("prompt caching on Gemini (SPEC: text parts joined into one string, marker dropped without error)", () => {
  it("joins a message's text parts into one part, as the OpenAI-shaped format does, and drops the markers", () => {
    const { body } = buildGeminiRequest(
      {
        ...base,
        messages: [
          { role: "system", parts: [{ type: "text", text: "Long document", cache: { ttl: "1h" } }, { type: "text", text: "Rules" }] },
          {
            role: "user",
            parts: [
              { type: "text", text: "Context", cache: { ttl: "5m" } },
              { type: "text", text: "" },
              { type: "text", text: "Question?" }
            ]
          },
          { role: "assistant", parts: [{ type: "text", text: "Part one", cache: { ttl: "5m" } }, { type: "text", text: "part two" }], toolCalls: [] },
          { role: "user", parts: [{ type: "text", text: "", cache: { ttl: "5m" } }] }
        ]
      },
      { upstreamModel: "gemini-2.5-flash", stream: false }
    )
    expect(body.systemInstruction).toStrictEqual({ parts: [{ text: "Long document\nRules" }] })
    expect(body.contents).toStrictEqual([
      { role: "user", parts: [{ text: "Context\nQuestion?" }] },
      { role: "model", parts: [{ text: "Part one\npart two" }] }
    ])
    expect(JSON.stringify(body)).not.toContain("ttl")
  })
})

describe("reasoning by the model's traits", () => {
  const config = (chat: ChatRequest, target: Partial<Parameters<typeof buildGeminiRequest>[1]> = {}) =>
    buildGeminiRequest(chat, { upstreamModel: "m", stream: false, ...target }).body.generationConfig?.thinkingConfig
  const asking = (effort: "low" | "medium" | "high", exclude = false): ChatRequest => ({
    ...base,
    reasoning: { effort, budgetTokens: 2048, exclude }
  })

  it("asks Gemini 2.5 by budget (the default) and Gemini 3 by level", () => {
    expect(config(asking("medium"))).toStrictEqual({ thinkingBudget: 2048, includeThoughts: true })
    expect(config(asking("medium"), { thinkingStyle: "budget" })).toStrictEqual({ thinkingBudget: 2048, includeThoughts: true })
    expect(config(asking("medium"), { thinkingStyle: "level" })).toStrictEqual({ thinkingLevel: "medium", includeThoughts: true })
    expect(config(asking("low", true), { thinkingStyle: "level", thinkingLevels: ["minimal", "low", "medium", "high"] })).toStrictEqual({
      thinkingLevel: "low",
      includeThoughts: false
    })
  })

  it("sends the closest level the model accepts (Gemini 3 Pro has only low and high)", () => {
    expect(config(asking("medium"), { thinkingStyle: "level", thinkingLevels: ["low", "high"] })).toStrictEqual({
      thinkingLevel: "high",
      includeThoughts: true
    })
    expect(thinkingLevelOf("low", ["medium", "high"])).toBe("medium")
    expect(thinkingLevelOf("low", ["minimal", "high"])).toBe("high")
    expect(thinkingLevelOf("high", ["minimal"])).toBe("minimal")
  })

  it("switches thinking off as the model allows, and never sends thinkingBudget 0 to a model that cannot stop", () => {
    const off: ChatRequest = { ...base, reasoning: null }
    expect(config(off)).toStrictEqual({ thinkingBudget: 0 })
    expect(config(off, { thinkingStyle: "budget", reasoningOff: "budget0" })).toStrictEqual({ thinkingBudget: 0 })
    expect(config(off, { thinkingStyle: "level", reasoningOff: "minimal" })).toStrictEqual({ thinkingLevel: "minimal" })
    // Gemini 2.5 Pro and the Pro 3.x models: nothing is sent (the planner refuses reasoning off there).
    expect(config(off, { thinkingStyle: "budget", reasoningOff: "refuse" })).toBeUndefined()
    expect(config(off, { thinkingStyle: "level", reasoningOff: "refuse" })).toBeUndefined()
    // A level model with no known switch: nothing rather than a budget it does not take.
    expect(config(off, { thinkingStyle: "level" })).toBeUndefined()
    // No reasoning asked for: the vendor's default.
    expect(config(base, { thinkingStyle: "level", reasoningOff: "minimal" })).toBeUndefined()
  })
})

describe("usage buckets sum to the vendor's whole input", () => {
  const sum = (u: Usage) => (u.freshInput ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite5m ?? 0) + (u.cacheWrite1h ?? 0)
  it.each([
    [{ promptTokenCount: 12000, cachedContentTokenCount: 8000, candidatesTokenCount: 5 }, 12000],
    [{ promptTokenCount: 900, candidatesTokenCount: 5 }, 900],
    [{ promptTokenCount: 1024, cachedContentTokenCount: 1024 }, 1024],
    [{ promptTokenCount: 100, cachedContentTokenCount: 40, toolUsePromptTokenCount: 50 }, 150]
  ] as const)("promptTokenCount (+ toolUsePromptTokenCount) for %j", (metadata, total) => {
    const usage = usageOfGemini(metadata)
    expect(sum(usage)).toBe(total)
    expect(usage.cacheRead).toBe("cachedContentTokenCount" in metadata ? metadata.cachedContentTokenCount : undefined)
  })
})
