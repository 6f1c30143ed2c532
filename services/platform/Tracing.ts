/**
 * Traces (DESIGN.md section 15): when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set, spans go over
 * OTLP/HTTP as JSON to the collector; unset, the tracer is disabled, so every `Effect.fn` and SQL span is a no-op and
 * the request path pays nothing for them.
 *
 * A trace begins only at a request (a `server` span: the stack's, the inference route's, the oracle's fast path) or
 * at a background job (a span carrying `TraceRoot`); the start-up replay and other parentless work are not traced,
 * so a collector sees one trace per request and per job run. A client's sampled `traceparent` is followed; a request
 * without one starts a trace with probability `OTEL_TRACES_SAMPLER_ARG` (the standard
 * `parentbased_traceidratio`); a span of an unsampled trace is never exported, nor are its children.
 */
import { OtlpSerialization, OtlpTracer } from "@effect/opentelemetry"
import { FetchHttpClient, HttpTraceContext } from "@effect/platform"
import { Context, Duration, Effect, Exit, FiberRef, FiberRefs, HashMap, Layer, Logger, Option, Redacted, Tracer } from "effect"
import { AppConfig } from "./AppConfig.ts"
import { TraceRoot } from "./traceRoots.ts"


/** A span that records nothing: a parentless span outside a request or job, or any span of an unsampled trace. */
const unsampledSpan = (
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  context: Context.Context<never>,
  links: ReadonlyArray<Tracer.SpanLink>,
  startTime: bigint,
  kind: Tracer.SpanKind
): Tracer.Span => ({
  _tag: "Span",
  name,
  spanId: "0000000000000000",
  traceId: Option.match(parent, { onNone: () => "00000000000000000000000000000000", onSome: (span) => span.traceId }),
  parent,
  context,
  status: { _tag: "Started", startTime },
  attributes: new Map(),
  links,
  sampled: false,
  kind,
  end: () => undefined,
  attribute: () => undefined,
  event: () => undefined,
  addLinks: () => undefined
})

/** `inner`'s spans for the traces that are sampled; a no-op span for everything else. */
export const sampledTracer = (inner: Tracer.Tracer, ratio: number, random: () => number = Math.random): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      const sampled = Option.match(parent, {
        onSome: (span) => span.sampled,
        onNone: () => (kind === "server" || Context.getOption(context, TraceRoot)._tag === "Some") && random() < ratio
      })
      return sampled ? inner.span(name, parent, context, links, startTime, kind) : unsampledSpan(name, parent, context, links, startTime, kind)
    },
    context: inner.context
  })

/** The tracer from configuration: OTLP/HTTP JSON when an endpoint is set, else disabled. */
export const TracingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.tracing.url, {
      onNone: () => Layer.setTracerEnabled(false),
      onSome: (url) =>
        Layer.unwrapScoped(
          OtlpTracer.make({
            url,
            resource: { serviceName: config.metrics.serviceName },
            headers: Redacted.value(config.tracing.headers),
            exportInterval: Duration.millis(config.tracing.exportIntervalMs)
          }).pipe(Effect.map((inner) => Layer.setTracer(sampledTracer(inner, config.tracing.sampleRatio))))
        ).pipe(
          Layer.provide([OtlpSerialization.layerJson, FetchHttpClient.layer]),
          Layer.tap(() => Effect.logInfo(`traces to ${url}`))
        )
    })
  )
)

/** The parent a request names in its `traceparent` (or B3) header, if any. */
export const parentOfHeaders = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>): Tracer.ExternalSpan | undefined =>
  Option.getOrUndefined(HttpTraceContext.fromHeaders(headers as never))

/**
 * A JSON log line inside a sampled span carries its `trace_id` and `span_id`, so a log search and a trace view find
 * each other.
 */
export const withTraceIds = <M, O>(logger: Logger.Logger<M, O>): Logger.Logger<M, O> =>
  Logger.mapInputOptions(logger, (options) => {
    const span = Context.getOption(FiberRefs.getOrDefault(options.context, FiberRef.currentContext), Tracer.ParentSpan)
    if (span._tag === "None" || !span.value.sampled) return options
    return {
      ...options,
      annotations: HashMap.set(HashMap.set(options.annotations, "trace_id", span.value.traceId as unknown), "span_id", span.value.spanId as unknown)
    }
  })

/** Now, in the nanoseconds since the epoch that Effect's clock gives its spans. */
export const epochNanos = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6))

/**
 * A request answered outside Effect (the oracle's fast path) traced by hand: its `server` span, with the attributes
 * the stack's span carries, from `startTime` to now.
 */
export const traceAnsweredRequest = (
  tracer: Tracer.Tracer,
  request: {
    readonly method: string
    readonly route: string
    readonly path: string
    readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
    readonly status: number
    readonly startTime: bigint
  }
): void => {
  const span = tracer.span(`${request.method} ${request.route}`, Option.fromNullable(parentOfHeaders(request.headers)), Context.empty(), [], request.startTime, "server")
  span.attribute("http.request.method", request.method)
  span.attribute("http.route", request.route)
  span.attribute("url.path", request.path)
  span.attribute("http.response.status_code", request.status)
  span.end(epochNanos(), Exit.void)
}
