/**
 * Every metric the service reports (DESIGN.md section 15), defined once with Effect's `Metric` and named `cx_*` in
 * Prometheus conventions (`_total` counters, `_seconds` durations, base units). Labels are bounded sets (a route's
 * template, a status, a model key, a provider, a job): never an account, a key's secret, an e-mail or a prompt. A
 * vendor key appears by its operator-given label only.
 *
 * Recording is synchronous (`unsafeUpdate` on the global registry), so the paths outside the Effect stack (the
 * oracle's fast path, the inference route) record the same way as the stack does, and a metric costs a map update.
 * With `METRICS_PORT` unset nothing reads them.
 */
import { Metric, MetricBoundaries, MetricLabel } from "effect"

/** Seconds: 1 ms to ~65 s, doubling. */
const SECONDS = MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 17 })

export const httpRequests = Metric.counter("cx_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})
export const httpDuration = Metric.histogram("cx_http_request_duration_seconds", SECONDS, "Time from the request's arrival to its answer, by method, route and status")

export const inferenceRequests = Metric.counter("cx_inference_requests_total", {
  description: "Inference requests settled, by format, served model, provider and outcome (completed, interrupted)",
  incremental: true
})
export const inferenceDuration = Metric.histogram("cx_inference_duration_seconds", SECONDS, "Inference requests' whole duration, by format and provider")
export const inferenceFirstEvent = Metric.histogram(
  "cx_inference_first_event_seconds",
  SECONDS,
  "Streams: from the exchange taking the request to its first event from the vendor (what the client's first byte waits on), by format and provider"
)
export const inferenceTokens = Metric.counter("cx_inference_tokens_total", {
  description: "Tokens billed, by provider and bucket (input, cached_input, cache_write_5m, cache_write_1h, output, reasoning_output)",
  incremental: true
})
export const inferenceChargedWei = Metric.counter("cx_inference_charged_wei_total", {
  description: "Credits charged for inference, in wei (a float: exact to 2^53 wei per series; the ledger is the exact record)",
  incremental: true
})

export const upstreamAttempts = Metric.counter("cx_upstream_attempts_total", {
  description: "Calls to a vendor, by provider, key label and outcome (served, status, timeout, network, protocol, stream)",
  incremental: true
})
export const upstreamFirstEvent = Metric.histogram(
  "cx_upstream_first_event_seconds",
  SECONDS,
  "Time from sending an upstream call to its first event (a stream) or its whole reply, by provider, for calls that answered"
)

export const upstreamKeyCooldowns = Metric.counter("cx_upstream_key_cooldowns_total", {
  description: "Vendor keys rested after a failed call, by provider, key label and reason (rateLimited, serverError, timeout)",
  incremental: true
})

export const rateLimitRefusals = Metric.counter("cx_rate_limit_refusals_total", {
  description: "Requests refused by a rate limit (429), by scope",
  incremental: true
})

export const holdsExpiredReleased = Metric.counter("cx_ledger_holds_expired_released_total", {
  description: "Holds released by the sweeper because they expired unsettled (a request that crashed or hung)",
  incremental: true
})

export const holdsLive = Metric.gauge("cx_ledger_holds_live", { description: "Holds open (reserved, neither settled nor released), as last read" })
export const holdsReservedWei = Metric.gauge("cx_ledger_holds_reserved_wei", {
  description: "Credits the open holds reserve, in wei (a float), as last read"
})
export const settleBatchSize = Metric.histogram(
  "cx_ledger_settle_batch_size",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 9 }),
  "Settlements applied by one group-committed statement"
)

export const dbPoolConnections = Metric.gauge("cx_db_pool_connections", {
  description: "This replica's database pool, by state: total (open), idle, waiting (callers queued for a connection)"
})

export const jobRuns = Metric.counter("cx_job_runs_total", { description: "Background job runs on this replica, by job and outcome", incremental: true })
export const jobLastSuccess = Metric.gauge("cx_job_last_success_timestamp_seconds", {
  description: "When each job last succeeded on this replica (Unix seconds)"
})

export const latestRevision = Metric.gauge("cx_index_latest_revision", { description: "The latest confirmed revision of the index" })
export const latestRevisionPublished = Metric.gauge("cx_index_latest_revision_published_timestamp_seconds", {
  description: "When the latest confirmed revision was published (Unix seconds)"
})
export const chainLastSync = Metric.gauge("cx_chain_last_sync_timestamp_seconds", {
  description: "When the chain sync last read the registry successfully (Unix seconds)"
})

const labels = (pairs: Record<string, string>) => Object.entries(pairs).map(([key, value]) => MetricLabel.make(key, value))

/** One answered HTTP request: `route` is its template (`/v1/oracle/models/:key`), or `unmatched`. */
export const recordHttpRequest = (method: string, route: string, status: number, seconds: number): void => {
  const tags = labels({ method, route, status: String(status) })
  httpRequests.unsafeUpdate(1, tags)
  httpDuration.unsafeUpdate(seconds, tags)
}

/** The billed token buckets, named for Prometheus. */
const BUCKETS: Record<string, string> = {
  input: "input",
  cachedInput: "cached_input",
  cacheWrite5m: "cache_write_5m",
  cacheWrite1h: "cache_write_1h",
  output: "output",
  reasoningOutput: "reasoning_output"
}

/** One settled inference request: what it was, how it ended, what it used and cost. */
export const recordInference = (request: {
  readonly format: string
  readonly model: string
  readonly provider: string
  readonly completed: boolean
  readonly seconds: number
  readonly legs: ReadonlyArray<{ readonly kind: string; readonly tokens: number }>
  readonly chargeWei: bigint
}): void => {
  const outcome = request.completed ? "completed" : "interrupted"
  inferenceRequests.unsafeUpdate(1, labels({ format: request.format, model: request.model, provider: request.provider, outcome }))
  inferenceDuration.unsafeUpdate(request.seconds, labels({ format: request.format, provider: request.provider }))
  for (const leg of request.legs) inferenceTokens.unsafeUpdate(leg.tokens, labels({ provider: request.provider, bucket: BUCKETS[leg.kind] ?? leg.kind }))
  inferenceChargedWei.unsafeUpdate(Number(request.chargeWei), labels({ provider: request.provider }))
}

/** One call to a vendor: `key` is the key's label (`openai#0`), never its secret. */
export const recordUpstreamAttempt = (provider: string, key: string, outcome: string, seconds: number): void => {
  upstreamAttempts.unsafeUpdate(1, labels({ provider, key, outcome }))
  if (outcome === "served") upstreamFirstEvent.unsafeUpdate(seconds, labels({ provider }))
}

/** A key rested: `key` is its label (`openai#1`), `reason` the failure kind that rested it. */
export const recordKeyCooldown = (provider: string, key: string, reason: string): void =>
  upstreamKeyCooldowns.unsafeUpdate(1, labels({ provider, key, reason }))

/** A stream's first event is in hand, `seconds` after the exchange took the request. */
export const recordInferenceFirstEvent = (format: string, provider: string, seconds: number): void =>
  inferenceFirstEvent.unsafeUpdate(seconds, labels({ format, provider }))

export const recordRateLimitRefusal = (scope: string): void => rateLimitRefusals.unsafeUpdate(1, labels({ scope }))

export const recordHoldsExpiredReleased = (released: number): void => holdsExpiredReleased.unsafeUpdate(released, [])

/** The open holds as one read found them (the whole database's, so every replica reports the same figure). */
export const recordLiveHolds = (count: number, reservedWei: bigint): void => {
  holdsLive.unsafeUpdate(count, [])
  holdsReservedWei.unsafeUpdate(Number(reservedWei), [])
}

export const recordSettleBatch = (size: number): void => settleBatchSize.unsafeUpdate(size, [])

export const recordDbPool = (pool: { readonly totalCount: number; readonly idleCount: number; readonly waitingCount: number }): void => {
  dbPoolConnections.unsafeUpdate(pool.totalCount, labels({ state: "total" }))
  dbPoolConnections.unsafeUpdate(pool.idleCount, labels({ state: "idle" }))
  dbPoolConnections.unsafeUpdate(pool.waitingCount, labels({ state: "waiting" }))
}

export const recordJobRun = (job: string, succeeded: boolean, atMillis: number): void => {
  jobRuns.unsafeUpdate(1, labels({ job, outcome: succeeded ? "succeeded" : "failed" }))
  if (succeeded) jobLastSuccess.unsafeUpdate(atMillis / 1000, labels({ job }))
}

/** The index as the latest snapshot holds it. */
export const recordIndexState = (state: { readonly latestRevision: number | undefined; readonly publishedAt: Date | undefined; readonly lastSyncAt: Date | null }): void => {
  if (state.latestRevision !== undefined) latestRevision.unsafeUpdate(state.latestRevision, [])
  if (state.publishedAt !== undefined) latestRevisionPublished.unsafeUpdate(state.publishedAt.getTime() / 1000, [])
  if (state.lastSyncAt !== null) chainLastSync.unsafeUpdate(state.lastSyncAt.getTime() / 1000, [])
}
