/**
 * The metrics' Prometheus listener (DESIGN.md section 15): when `METRICS_PORT` is set, every `cx_*` metric of
 * services/platform/metrics.ts (and Effect's own fiber metrics) is served as Prometheus text at
 * `http://METRICS_HOST:METRICS_PORT/metrics`, a listener of its own (loopback unless METRICS_HOST says otherwise), so
 * the public port never exposes it. Unset: no listener, nothing read. With an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
 * or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) the same metrics are also pushed there, as the traces are.
 */
import { Metrics, OtlpMetrics, OtlpSerialization, Resource } from "@effect/opentelemetry"
import { FetchHttpClient } from "@effect/platform"
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "./AppConfig.ts"

const PrometheusLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.metrics.port, {
      onNone: () => Layer.empty,
      onSome: (port) =>
        Metrics.layer(() => new PrometheusExporter({ host: config.metrics.host, port })).pipe(
          Layer.provide(Resource.layer({ serviceName: config.metrics.serviceName })),
          Layer.tap(() => Effect.logInfo(`metrics at http://${config.metrics.host}:${port}/metrics`))
        )
    })
  )
)

/** The same registry pushed to a collector every OTEL_METRIC_EXPORT_INTERVAL, when an OTLP endpoint is set. */
const OtlpLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.metrics.otlpUrl, {
      onNone: () => Layer.empty,
      onSome: (url) =>
        OtlpMetrics.layer({
          url,
          resource: { serviceName: config.metrics.serviceName },
          headers: Redacted.value(config.tracing.headers),
          exportInterval: Duration.millis(config.metrics.otlpIntervalMs)
        }).pipe(Layer.provide([OtlpSerialization.layerJson, FetchHttpClient.layer]), Layer.tap(() => Effect.logInfo(`metrics to ${url}`)))
    })
  )
)

export const MetricsExporterLive = Layer.merge(PrometheusLive, OtlpLive)
