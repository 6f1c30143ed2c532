/**
 * Where traces begin and which are kept (services/platform/Tracing.ts): a request's `server` span or a job's
 * `TraceRoot` span starts a trace at OTEL_TRACES_SAMPLER_ARG's ratio, a client's `traceparent` decides for its
 * request, a span follows its parent, and nothing else parentless is traced; the OTEL_* configuration it reads.
 */
import { ConfigProvider, Context, Effect, Either, Option, Redacted, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { appConfig } from "../services/platform/AppConfig.ts"
import { sampledTracer } from "../services/platform/Tracing.ts"
import { TraceRoot } from "../services/platform/traceRoots.ts"

/** A tracer that keeps the names of the spans it made. */
const recording = () => {
  const made: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      made.push(name)
      return {
        _tag: "Span", name, spanId: `span-${made.length}`, traceId: Option.match(parent, { onNone: () => `trace-${made.length}`, onSome: (p) => p.traceId }),
        parent, context, status: { _tag: "Started", startTime }, attributes: new Map(), links, sampled: true, kind,
        end: () => undefined, attribute: () => undefined, event: () => undefined, addLinks: () => undefined
      }
    },
    context: (f) => f()
  })
  return { made, tracer }
}

const span = (tracer: Tracer.Tracer, name: string, options: { parent?: Tracer.AnySpan; kind?: Tracer.SpanKind; root?: boolean } = {}) =>
  tracer.span(name, Option.fromNullable(options.parent), options.root ? Context.make(TraceRoot, true) : Context.empty(), [], 0n, options.kind ?? "internal")

const external = (sampled: boolean): Tracer.ExternalSpan => Tracer.externalSpan({ traceId: "a".repeat(32), spanId: "b".repeat(16), sampled })

describe("the sampler", () => {
  it("starts a trace only at a request or a job, at the configured ratio", () => {
    const { made, tracer } = recording()
    let draw = 0.3
    const sampled = sampledTracer(tracer, 0.5, () => draw)
    expect(span(sampled, "GET /v1/status", { kind: "server" }).sampled).toBe(true)
    expect(span(sampled, "job price-scan", { root: true }).sampled).toBe(true)
    // The start-up replay and any other parentless work: never a trace of its own.
    expect(span(sampled, "sql.execute", { kind: "client" }).sampled).toBe(false)
    expect(span(sampled, "OracleSnapshot.build").sampled).toBe(false)
    draw = 0.7
    expect(span(sampled, "GET /v1/status", { kind: "server" }).sampled).toBe(false)
    expect(span(sampled, "job price-scan", { root: true }).sampled).toBe(false)
    expect(made).toEqual(["GET /v1/status", "job price-scan"])
  })

  it("follows the client's traceparent, and a span its parent", () => {
    const { made, tracer } = recording()
    const sampled = sampledTracer(tracer, 0, () => 0)
    // Ratio 0 starts nothing, but a client's sampled trace is followed, and an unsampled one is not.
    const request = span(sampled, "POST /v1/chat/completions", { kind: "server", parent: external(true) })
    expect([request.sampled, request.traceId]).toEqual([true, "a".repeat(32)])
    expect(span(sampled, "Exchange.serve", { parent: request }).sampled).toBe(true)
    const declined = span(sampled, "POST /v1/messages", { kind: "server", parent: external(false) })
    expect(declined.sampled).toBe(false)
    const child = span(sampled, "Exchange.serve", { parent: declined })
    expect([child.sampled, child.traceId]).toEqual([false, "a".repeat(32)])
    expect(made).toEqual(["POST /v1/chat/completions", "Exchange.serve"])
  })
})

const load = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("the OTEL_* configuration", () => {
  it("is off without an endpoint; the base endpoint gains /v1/traces and /v1/metrics, a signal's own endpoint is taken as given", () => {
    const off = Either.getOrThrow(load({}))
    expect(Option.isNone(off.tracing.url)).toBe(true)
    expect([off.tracing.sampleRatio, off.tracing.exportIntervalMs]).toEqual([1, 5000])
    expect(Either.getOrThrow(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).tracing.url).toEqual(Option.some("http://collector:4318/v1/traces"))
    const both = load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/ingest" })
    expect(Either.getOrThrow(both).tracing.url).toEqual(Option.some("https://traces.example/ingest"))
    // The metrics go to the same collector, or to their own endpoint.
    expect(Either.getOrThrow(both).metrics.otlpUrl).toEqual(Option.some("http://collector:4318/v1/metrics"))
    expect(Option.isNone(off.metrics.otlpUrl)).toBe(true)
    const metricsOnly = Either.getOrThrow(load({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://m:4318/v1/metrics", OTEL_METRIC_EXPORT_INTERVAL: "15000" }))
    expect([metricsOnly.metrics.otlpUrl, metricsOnly.metrics.otlpIntervalMs, metricsOnly.tracing.url]).toEqual([Option.some("http://m:4318/v1/metrics"), 15000, Option.none()])
  })

  it("reads the headers percent-decoded and never prints them; refuses a malformed list, a ratio outside 0..1, a URL that is not http(s)", () => {
    const config = Either.getOrThrow(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20t0ken, x-tenant=cx", OTEL_TRACES_SAMPLER_ARG: "0.25" }))
    expect(Redacted.value(config.tracing.headers)).toEqual({ authorization: "Bearer t0ken", "x-tenant": "cx" })
    expect(String(config.tracing.headers)).not.toContain("t0ken")
    expect(config.tracing.sampleRatio).toBe(0.25)
    for (const [env, named] of [
      [{ OTEL_EXPORTER_OTLP_HEADERS: "no-equals-sign" }, "OTEL_EXPORTER_OTLP_HEADERS"],
      [{ OTEL_EXPORTER_OTLP_HEADERS: "a=%zz" }, "OTEL_EXPORTER_OTLP_HEADERS"],
      [{ OTEL_TRACES_SAMPLER_ARG: "1.5" }, "OTEL_TRACES_SAMPLER_ARG"],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"]
    ] as const) {
      const refused = load(env)
      expect(Either.isLeft(refused), JSON.stringify(env)).toBe(true)
      expect(String(Either.isLeft(refused) ? refused.left : ""), JSON.stringify(env)).toContain(named)
    }
  })
})
