/**
 * The metrics' Prometheus listener (DESIGN.md section 15): when `METRICS_PORT` is set, every `cx_*` metric of
 * services/platform/metrics.ts (and Effect's own fiber metrics) is served as Prometheus text at
 * `http://METRICS_HOST:METRICS_PORT/metrics`, a listener of its own (loopback unless METRICS_HOST says otherwise), so
 * the public port never exposes it. Unset: no listener, nothing read.
 */
import { Metrics, Resource } from "@effect/opentelemetry"
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "./AppConfig.ts"

export const MetricsExporterLive = Layer.unwrapEffect(
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
