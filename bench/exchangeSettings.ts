/** `npm run bench:exchange`: its settings (environment) and constants. */
import { randomBytes } from "node:crypto"
import { flag, positiveNumber } from "./common.ts"

// ---------------------------------------------------------------------------------------------- settings

export const settings = {
  latencyRequests: Math.round(positiveNumber("BENCH_LATENCY_REQUESTS", 400)),
  latencyWarmup: Math.round(positiveNumber("BENCH_LATENCY_WARMUP", 50)),
  streamRequests: Math.round(positiveNumber("BENCH_STREAM_REQUESTS", 400)),
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
  cpuProfDir: process.env["BENCH_CPU_PROF_DIR"]?.trim() || undefined
}

export const TARGET_ADDED_P50_MS = 1
export const TARGET_VS_PORTKEY = 2
export const TARGET_VS_BARE = 0.5

export const EXCHANGE_MODEL = "openai/gpt-4.1"
export const UPSTREAM_MODEL = "gpt-4.1"
export const SIMULATOR_KEY = "sim-bench-key"
export const MAINTAINER_TOKEN = `bench-maintainer-${randomBytes(8).toString("hex")}`
export const CLIENT_IP = "203.0.113.77"
/** Credits granted to the bench account: far more than any run spends (a request costs well under a cent). */
export const GRANT_WEI = 10n ** 6n * 10n ** 18n

export const requestBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [{ role: "user", content: "Say hello to the benchmark in one short sentence." }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {})
  })

export const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "\n")
