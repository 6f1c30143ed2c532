/** `npm run bench:exchange`: its settings (environment) and constants. */
import { randomBytes } from "node:crypto"
import { flag, positiveNumber } from "./common.ts"

// ---------------------------------------------------------------------------------------------- settings

export const settings = {
  latencyRequests: Math.round(positiveNumber("BENCH_LATENCY_REQUESTS", 400)),
  latencyWarmup: Math.round(positiveNumber("BENCH_LATENCY_WARMUP", 50)),
  streamRequests: Math.round(positiveNumber("BENCH_STREAM_REQUESTS", 400)),
  /** Requests of the mix (reasoning, tools, a cached prefix, plain; rotating) per target, non-streaming and streaming each. */
  mixRequests: Math.round(positiveNumber("BENCH_MIX_REQUESTS", 200)),
  durationSeconds: positiveNumber("BENCH_DURATION_SECONDS", 5),
  rounds: Math.round(positiveNumber("BENCH_ROUNDS", 3)),
  warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 2),
  connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 32)),
  logLevel: process.env["BENCH_LOG_LEVEL"]?.trim() || "WARN",
  startTimeoutMs: positiveNumber("BENCH_START_TIMEOUT_SECONDS", 240) * 1000,
  postgresUrl: process.env["BENCH_POSTGRES_URL"]?.trim() || "postgres://postgres@127.0.0.1:5432/postgres",
  /** BENCH_SYNCHRONOUS_COMMIT=off: the bench database commits without waiting for fsync (to separate disk from code). */
  syncCommitOff: process.env["BENCH_SYNCHRONOUS_COMMIT"]?.trim() === "off",
  portkey: flag("BENCH_PORTKEY", true),
  /** BENCH_TRACING=false: no second exchange with traces on (bench/exchangeTracing.ts). */
  tracing: flag("BENCH_TRACING", true),
  cpuProfDir: process.env["BENCH_CPU_PROF_DIR"]?.trim() || undefined,
  /** BENCH_TIER_COMPILED=false: the exchange tier runs through tsx like the service, instead of `npm run build`'s dist/. */
  tierCompiled: flag("BENCH_TIER_COMPILED", true)
}

// Issue 39's targets (the long-run aim stays 2x Portkey's throughput).
export const TARGET_ADDED_P50_MS = 2
/** Throughput at 32 connections, one account and over 32 accounts, at least this multiple of Portkey's. */
export const TARGET_VS_PORTKEY = 1.5
/** Information, not a verdict: the exchange's throughput as a share of the bare proxy's. */
export const TARGET_VS_BARE = 0.5
/** CPU time per request at most this share of Portkey's. */
export const TARGET_CPU_VS_PORTKEY = 1
/** RSS of an exchange-only replica at most this multiple of Portkey's. */
export const TARGET_RSS_VS_PORTKEY = 1.5

export const EXCHANGE_MODEL = "openai/gpt-4.1"
export const UPSTREAM_MODEL = "gpt-4.1"
export const SIMULATOR_KEY = "sim-bench-key"
export const MAINTAINER_TOKEN = `bench-maintainer-${randomBytes(8).toString("hex")}`
export const CLIENT_IP = "203.0.113.77"
/** Credits granted to the bench account: far more than any run spends (a request costs well under a cent). */
export const GRANT_WEI = 10n ** 6n * 10n ** 18n

/** The one request shape's prompt and output cap: chat's `messages[0].content` and `max_tokens`, Responses' `input` and `max_output_tokens`. */
export const PROMPT = "Say hello to the benchmark in one short sentence."
export const MAX_TOKENS = 16

export const requestBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [{ role: "user", content: PROMPT }],
    max_tokens: MAX_TOKENS,
    ...(stream ? { stream: true } : {})
  })

/**
 * Each simulated vendor key's limits in the providers file the exchange runs on (bench/exchangeTargets.ts): far
 * above what the bench sends (DESIGN.md section 10: a round is a measurement only when every answer is 2xx), where
 * simulator/providers.yaml's 6000 RPM per key runs dry within a minute of load (502 all_keys_exhausted). The key
 * pool still counts every request against them, as it does in production.
 */
export const BENCH_KEY_RPM = 100_000_000
export const BENCH_KEY_TPM = 1_000_000_000_000

/** About 2000 tokens of fixed system prompt: a prefix the vendor caches implicitly after its first use. */
const CACHED_PREFIX = Array.from({ length: 160 }, (_, i) => `Rule ${i + 1}: answer briefly, cite nothing, and keep the benchmark's tone neutral.`).join(" ")

/**
 * The mix (issue 11): a reasoning request, a request offering a tool it is asked to use, one behind a long cached
 * prefix, and the plain one, in turn. `model(id)` names an OpenAI model the way the target expects it.
 */
export const mixBodies = (model: (id: string) => string, stream: boolean): Array<string> => {
  const streamed = stream ? { stream: true } : {}
  return [
    { model: model("gpt-5"), messages: [{ role: "user", content: "Think briefly, then say hello to the benchmark." }], reasoning_effort: "low", max_tokens: 2048 },
    {
      model: model("gpt-4.1"),
      messages: [{ role: "user", content: "Use the get_weather tool for Paris." }],
      tools: [{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
      max_tokens: 64
    },
    { model: model("gpt-4.1"), messages: [{ role: "system", content: CACHED_PREFIX }, { role: "user", content: "Say hello to the benchmark." }], max_tokens: 16 },
    { model: model("gpt-4.1"), messages: [{ role: "user", content: "Say hello to the benchmark in one short sentence." }], max_tokens: 16 }
  ].map((body) => JSON.stringify({ ...body, ...streamed }))
}

export const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "\n")
