/**
 * Valid seed requests of the inference endpoints, before any mutation: POST /v1/chat/completions (CHAT_SEEDS) and the
 * plain POST /v1/messages ones (PLAIN_MESSAGES_SEEDS; the whole MESSAGES_SEEDS, with what Anthropic's own clients
 * send, and the count_tokens seeds are in fuzzAgentDialect.ts), and the two tools they and the mutations offer.
 */
import { deepFreeze, type Obj } from "./fuzzCore.ts"

// ---------------------------------------------------------------------------------------------------------
// Valid seed requests

export const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] }
  }
}

export const CHAT_SEEDS: ReadonlyArray<Obj> = deepFreeze([
  { model: "openai/gpt-4.1", max_tokens: 16, messages: [{ role: "user", content: "Hello there, say something" }] },
  { model: "gpt-4.1", max_completion_tokens: 24, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 20,
    messages: [
      { role: "developer", content: "Answer in English." },
      { role: "user", content: "What is an exchange?" },
      { role: "assistant", content: "A market." },
      { role: "user", content: [{ type: "text", text: "Say more" }, { type: "text", text: "please" }] }
    ]
  },
  {
    model: "openai/gpt-4.1",
    max_tokens: 32,
    tools: [weatherTool],
    tool_choice: "auto",
    parallel_tool_calls: true,
    messages: [
      { role: "user", content: "What is the weather in Paris? Use a tool." },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "18 degrees" }
    ]
  },
  {
    model: "gpt-4.1",
    max_tokens: 32,
    tools: [weatherTool],
    tool_choice: { type: "function", function: { name: "get_weather" } },
    messages: [{ role: "user", content: "Weather in Rome" }]
  },
  { model: "deepseek/deepseek-reasoner", stream: true, max_tokens: 24, messages: [{ role: "user", content: "Stream a short reply" }] },
  {
    model: "openai/gpt-4.1",
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 16,
    messages: [{ role: "system", content: "Stream." }, { role: "user", content: "Go" }]
  },
  { model: "openai/gpt-5", reasoning_effort: "low", max_completion_tokens: 1300, messages: [{ role: "user", content: "Think briefly" }] },
  { model: "deepseek-reasoner", reasoning: { effort: "low" }, max_tokens: 1100, messages: [{ role: "user", content: "Reason" }] },
  {
    model: "anthropic/claude-sonnet-4.5",
    reasoning: { max_tokens: 1024, exclude: true },
    max_tokens: 1100,
    messages: [{ role: "user", content: "Think, but do not show it" }]
  },
  {
    model: "claude-sonnet-4.5",
    max_tokens: 16,
    messages: [
      { role: "system", content: [{ type: "text", text: "You are a careful assistant.", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: [{ type: "text", text: "Cached question", cache_control: { type: "ephemeral", ttl: "1h" } }] }
    ]
  },
  {
    model: "gpt-4.1",
    models: ["google/gemini-2.5-flash", "deepseek-reasoner"],
    max_tokens: 16,
    messages: [{ role: "user", content: "Fall back if you must" }]
  },
  { model: "auto", max_tokens: 8, messages: [{ role: "user", content: "Anything" }] },
  { max_tokens: 8, routing_bias: "cheaper", messages: [{ role: "user", content: "Cheap" }] },
  {
    model: "openai/gpt-4.1",
    max_tokens: 32,
    response_format: {
      type: "json_schema",
      json_schema: { name: "answer", schema: { type: "object", properties: { text: { type: "string" } } }, strict: true }
    },
    messages: [{ role: "user", content: "Answer in JSON" }]
  },
  { model: "gpt-4.1", max_tokens: 16, response_format: { type: "json_object" }, messages: [{ role: "user", content: "JSON please" }] },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 24,
    stop: ["\n\n", "END"],
    temperature: 0.3,
    top_p: 0.9,
    frequency_penalty: 0.1,
    presence_penalty: -0.1,
    seed: 7,
    user: "end-user-1",
    metadata: { purpose: "fuzz" },
    messages: [{ role: "user", content: "Stop early" }]
  },
  {
    model: "openai/gpt-4.1",
    max_tokens: 16,
    logprobs: true,
    top_logprobs: 2,
    logit_bias: { "1234": -5 },
    n: 1,
    store: false,
    conversation_id: "conv-fuzz-1",
    messages: [{ role: "user", content: "With logprobs" }]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    stream: true,
    max_tokens: 16,
    temperature: 1,
    messages: [{ role: "user", content: [{ type: "text", text: "Stream from Claude", cache_control: { type: "ephemeral" } }] }]
  }
])

export const anthropicTool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}

export const PLAIN_MESSAGES_SEEDS: ReadonlyArray<Obj> = [
  { model: "anthropic/claude-sonnet-4.5", max_tokens: 32, messages: [{ role: "user", content: "Hello there" }] },
  { model: "claude-sonnet-4.5", max_tokens: 24, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] },
  {
    model: "openai/gpt-4.1",
    max_tokens: 24,
    system: [{ type: "text", text: "You are terse." }, { type: "text", text: "Answer in English." }],
    messages: [
      { role: "user", content: "What is an exchange?" },
      { role: "assistant", content: [{ type: "text", text: "A market." }] },
      { role: "user", content: [{ type: "text", text: "Say more" }] }
    ]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    max_tokens: 48,
    tools: [anthropicTool],
    tool_choice: { type: "auto", disable_parallel_tool_use: true },
    messages: [
      { role: "user", content: "Weather in Paris? Use a tool." },
      { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18 degrees" }], is_error: false },
          { type: "text", text: "Thanks" }
        ]
      }
    ]
  },
  { model: "google/gemini-2.5-flash", max_tokens: 32, tools: [anthropicTool], tool_choice: { type: "tool", name: "get_weather" }, messages: [{ role: "user", content: "Rome" }] },
  { model: "claude-sonnet-4.5", stream: true, max_tokens: 24, messages: [{ role: "user", content: "Stream a short reply" }] },
  { model: "deepseek/deepseek-reasoner", stream: true, max_tokens: 24, messages: [{ role: "user", content: "Stream from DeepSeek" }] },
  {
    model: "anthropic/claude-sonnet-4.5",
    max_tokens: 1100,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages: [{ role: "user", content: "Think and answer" }]
  },
  { model: "openai/gpt-5", max_tokens: 1300, thinking: { type: "adaptive", display: "omitted" }, messages: [{ role: "user", content: "Think adaptively" }] },
  {
    model: "claude-sonnet-4.5",
    max_tokens: 16,
    system: [{ type: "text", text: "You are a careful assistant.", cache_control: { type: "ephemeral" } }],
    tools: [{ ...anthropicTool, cache_control: { type: "ephemeral", ttl: "1h" } }],
    messages: [{ role: "user", content: [{ type: "text", text: "Cached question", cache_control: { type: "ephemeral", ttl: "5m" } }] }]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    models: ["openai/gpt-4.1", "google/gemini-2.5-flash"],
    max_tokens: 16,
    messages: [{ role: "user", content: "Fall back if you must" }]
  },
  { model: "auto", max_tokens: 8, messages: [{ role: "user", content: "Anything" }] },
  { max_tokens: 8, routing_bias: "better", messages: [{ role: "user", content: "Better" }] },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 24,
    stop_sequences: ["\n\n", "END"],
    temperature: 0.4,
    top_p: 0.9,
    top_k: 20,
    metadata: { user_id: "end-user-1" },
    messages: [{ role: "user", content: "Stop early" }]
  },
  {
    model: "claude-sonnet-4.5",
    max_tokens: 16,
    temperature: 1,
    top_p: 0.99,
    metadata: { user_id: null },
    service_tier: "auto",
    conversation_id: "conv-fuzz-2",
    messages: [{ role: "user", content: "Claude at its only temperature" }]
  },
  { model: "deepseek-reasoner", max_tokens: 1100, thinking: { type: "disabled" }, messages: [{ role: "user", content: "No thinking" }] }
]
