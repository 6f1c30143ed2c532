/**
 * Log format and level from configuration: JSON lines for machines, pretty for a terminal.
 */
import { Effect, Layer, Logger } from "effect"
import { AppConfig } from "../services/platform/AppConfig.ts"

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json" ? Logger.json : Logger.pretty,
      Logger.minimumLogLevel(config.logLevel)
    )
  )
).pipe(Layer.provide(AppConfig.Default))
