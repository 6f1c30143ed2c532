/**
 * Log format and level from configuration: JSON lines for machines, pretty for a terminal. With traces on, a line
 * written inside a sampled span names its trace and span (services/platform/Tracing.ts).
 */
import { Effect, Layer, Logger, type LogLevel, Option } from "effect"
import { AppConfig, type LogFormat } from "../services/platform/AppConfig.ts"
import { withTraceIds } from "../services/platform/Tracing.ts"

// One value per logger: the start-up logger (src/launch.ts) and the configured one are both installed in turn, and
// the second must take the first's place rather than write every line again beside it. (The pretty logger writes its
// own lines; the JSON one returns them to be written.)
const LOGGERS = {
  json: Logger.withConsoleLog(Logger.jsonLogger),
  jsonTraced: Logger.withConsoleLog(withTraceIds(Logger.jsonLogger)),
  pretty: Logger.prettyLoggerDefault,
  prettyTraced: withTraceIds(Logger.prettyLoggerDefault)
} as const

export const loggerLayer = (format: LogFormat, level: LogLevel.LogLevel, traceIds = false) => {
  const chosen = LOGGERS[format === "json" ? (traceIds ? "jsonTraced" : "json") : traceIds ? "prettyTraced" : "pretty"]
  return Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, chosen),
    ...Object.values(LOGGERS).filter((logger) => logger !== chosen).map((logger) => Logger.remove(logger)),
    Logger.minimumLogLevel(level)
  )
}

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => loggerLayer(config.logFormat, config.logLevel, Option.isSome(config.tracing.url)))
).pipe(Layer.provide(AppConfig.Default))
