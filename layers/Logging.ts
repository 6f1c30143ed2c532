/**
 * Log format and level from configuration: JSON lines for machines, pretty for a terminal.
 */
import { Effect, Layer, Logger, type LogLevel } from "effect"
import { AppConfig, type LogFormat } from "../services/platform/AppConfig.ts"

export const loggerLayer = (format: LogFormat, level: LogLevel.LogLevel) =>
  Layer.merge(format === "json" ? Logger.json : Logger.pretty, Logger.minimumLogLevel(level))

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => loggerLayer(config.logFormat, config.logLevel))
).pipe(Layer.provide(AppConfig.Default))
