/**
 * The Gemini API's REST shapes (v1beta, camelCase JSON), upstream only: what we send to `:generateContent`,
 * `:streamGenerateContent?alt=sse` and `:countTokens`, and what comes back. Field names follow the official types
 * (@google/genai GenerateContentParameters / Content / Part / GenerationConfig / UsageMetadata / CountTokensResponse).
 *
 * Only the fields the exchange uses are declared. Decoding ignores the rest (safety ratings, citations, grounding,
 * model version ...) so a vendor adding fields never breaks a reply; enum-like strings (finishReason, blockReason)
 * are plain strings for the same reason: an unknown value is mapped, not refused.
 */
import { Schema } from "effect"

// ---------------------------------------------------------------------------------------------------------
// Parts and contents (shared by request and response)

const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

export const GeminiFunctionCall = Schema.Struct({
  /** Present on newer models; we synthesize `call_<n>` when absent. */
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  /** The arguments as a JSON object (not text, unlike the OpenAI format). */
  args: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type GeminiFunctionCall = typeof GeminiFunctionCall.Type

export const GeminiFunctionResponse = Schema.Struct({
  id: Schema.optional(Schema.String),
  name: Schema.String,
  response: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type GeminiFunctionResponse = typeof GeminiFunctionResponse.Type

export const GeminiPart = Schema.Struct({
  text: Schema.optional(Schema.String),
  /** True on a thought summary part (only returned when `includeThoughts` was asked for). */
  thought: Schema.optional(Schema.Boolean),
  /** Opaque; Gemini 3 requires it back on the first function call of a model turn. */
  thoughtSignature: Schema.optional(Schema.String),
  functionCall: Schema.optional(GeminiFunctionCall),
  functionResponse: Schema.optional(GeminiFunctionResponse)
})
export type GeminiPart = typeof GeminiPart.Type

export const GeminiContent = Schema.Struct({
  /** "user" or "model"; absent on systemInstruction. */
  role: Schema.optional(Schema.String),
  /** Absent on a candidate that produced nothing (e.g. stopped by SAFETY before any token). */
  parts: Schema.optional(Schema.Array(GeminiPart))
})
export type GeminiContent = typeof GeminiContent.Type

// ---------------------------------------------------------------------------------------------------------
// Request

export const GeminiFunctionDeclaration = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  /** Plain JSON Schema (the OpenAPI-subset `parameters` refuses common keywords such as additionalProperties). */
  parametersJsonSchema: Schema.optional(Schema.Unknown)
})

export const GeminiTool = Schema.Struct({
  functionDeclarations: Schema.Array(GeminiFunctionDeclaration)
})

export const GeminiFunctionCallingMode = Schema.Literal("AUTO", "ANY", "NONE")

export const GeminiToolConfig = Schema.Struct({
  functionCallingConfig: Schema.Struct({
    mode: GeminiFunctionCallingMode,
    allowedFunctionNames: Schema.optional(Schema.Array(Schema.String))
  })
})

export const GeminiThinkingConfig = Schema.Struct({
  /** Gemini 2.5: the thinking budget in tokens; 0 switches thinking off (where the model allows it). */
  thinkingBudget: Schema.optional(Schema.Number),
  /** Gemini 3 and later (never with thinkingBudget): the depth; `minimal` is the lowest, where the model has it. */
  thinkingLevel: Schema.optional(Schema.Literal("minimal", "low", "medium", "high")),
  includeThoughts: Schema.optional(Schema.Boolean)
})
export type GeminiThinkingConfig = typeof GeminiThinkingConfig.Type

export const GeminiGenerationConfig = Schema.Struct({
  maxOutputTokens: Schema.optional(Schema.Number),
  temperature: Schema.optional(Schema.Number),
  topP: Schema.optional(Schema.Number),
  topK: Schema.optional(Schema.Number),
  stopSequences: Schema.optional(Schema.Array(Schema.String)),
  seed: Schema.optional(Schema.Number),
  presencePenalty: Schema.optional(Schema.Number),
  frequencyPenalty: Schema.optional(Schema.Number),
  responseMimeType: Schema.optional(Schema.String),
  /** JSON Schema of the reply (preferred over the OpenAPI-subset `responseSchema`, per the API's own advice). */
  responseJsonSchema: Schema.optional(Schema.Unknown),
  thinkingConfig: Schema.optional(GeminiThinkingConfig)
})
export type GeminiGenerationConfig = typeof GeminiGenerationConfig.Type

/** The body of `models/<model>:generateContent` and `:streamGenerateContent` (the model is in the path). */
export const GeminiRequest = Schema.Struct({
  contents: Schema.Array(GeminiContent),
  systemInstruction: Schema.optional(GeminiContent),
  tools: Schema.optional(Schema.Array(GeminiTool)),
  toolConfig: Schema.optional(GeminiToolConfig),
  generationConfig: Schema.optional(GeminiGenerationConfig)
})
export type GeminiRequest = typeof GeminiRequest.Type

/**
 * The body of `models/<model>:countTokens`. Top-level `contents` alone cannot carry the system instruction or
 * the tools, so the whole request is wrapped in `generateContentRequest` (its `model` is `models/<id>`).
 */
export const GeminiCountTokensRequest = Schema.Struct({
  generateContentRequest: Schema.Struct({
    model: Schema.String,
    contents: Schema.Array(GeminiContent),
    systemInstruction: Schema.optional(GeminiContent),
    tools: Schema.optional(Schema.Array(GeminiTool)),
    toolConfig: Schema.optional(GeminiToolConfig)
  })
})
export type GeminiCountTokensRequest = typeof GeminiCountTokensRequest.Type

// ---------------------------------------------------------------------------------------------------------
// Response

/**
 * Token counts. `promptTokenCount` INCLUDES `cachedContentTokenCount`; `thoughtsTokenCount` is NOT inside
 * `candidatesTokenCount`. Zero counts are omitted by the vendor's JSON encoding, so every field is optional.
 */
export const GeminiUsageMetadata = Schema.Struct({
  promptTokenCount: Schema.optional(Count),
  cachedContentTokenCount: Schema.optional(Count),
  candidatesTokenCount: Schema.optional(Count),
  thoughtsTokenCount: Schema.optional(Count),
  /** Prompt tokens added by built-in tools (search, code execution results): billed as input. */
  toolUsePromptTokenCount: Schema.optional(Count),
  totalTokenCount: Schema.optional(Count)
})
export type GeminiUsageMetadata = typeof GeminiUsageMetadata.Type

export const GeminiCandidate = Schema.Struct({
  content: Schema.optional(GeminiContent),
  /** STOP, MAX_TOKENS, SAFETY, RECITATION, ...; absent on the chunks before the last of a stream. */
  finishReason: Schema.optional(Schema.String),
  index: Schema.optional(Schema.Number)
})
export type GeminiCandidate = typeof GeminiCandidate.Type

/** The error object of a failed call, also sent as a stream chunk when a stream breaks. */
export const GeminiError = Schema.Struct({
  code: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String)
})
export type GeminiError = typeof GeminiError.Type

/** A whole reply, or one SSE chunk of a streamed one (same shape; a chunk's usage is the running total). */
export const GeminiResponse = Schema.Struct({
  candidates: Schema.optional(Schema.Array(GeminiCandidate)),
  /** Set (with no candidates) when the prompt itself was blocked. */
  promptFeedback: Schema.optional(Schema.Struct({ blockReason: Schema.optional(Schema.String) })),
  usageMetadata: Schema.optional(GeminiUsageMetadata),
  responseId: Schema.optional(Schema.String),
  modelVersion: Schema.optional(Schema.String),
  error: Schema.optional(GeminiError)
})
export type GeminiResponse = typeof GeminiResponse.Type

export const GeminiCountTokensResponse = Schema.Struct({
  /** Omitted by the vendor's encoding when 0. */
  totalTokens: Schema.optional(Count),
  cachedContentTokenCount: Schema.optional(Count),
  error: Schema.optional(GeminiError)
})
export type GeminiCountTokensResponse = typeof GeminiCountTokensResponse.Type
