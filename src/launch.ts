/**
 * Launches a whole service until SIGTERM/SIGINT; a failure to start is logged in the configured format as one line
 * that says why.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, LogLevel } from "effect"
import { loggerLayer } from "../layers/Logging.ts"
import { type LogFormat, LogFormat as LogFormats } from "../services/platform/AppConfig.ts"
import { logStartFailure } from "../services/platform/Startup.ts"

const defaultFormat: LogFormat = process.stdout.isTTY ? "pretty" : "json"

/**
 * LOG_FORMAT and LOG_LEVEL as configured, falling back to their defaults when invalid: the logger that reports a
 * failed start must exist even when the configuration it reports on is what failed.
 */
const StartupLogging = Layer.unwrapEffect(
  Effect.map(
    Effect.all([
      Config.literal(...LogFormats)("LOG_FORMAT").pipe(Config.withDefault(defaultFormat), Config.orElse(() => Config.succeed(defaultFormat))),
      Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info), Config.orElse(() => Config.succeed(LogLevel.Info)))
    ]),
    ([format, level]) => loggerLayer(format, level)
  )
).pipe(Layer.orDie)

/**
 * Runs `service` until SIGTERM/SIGINT. A failed start logs one FATAL line whose message is the cause (the
 * runtime's own report, a bare cause with an empty message in the default format, is switched off) and exits 1.
 */
export const launchService = <ROut, E>(service: Layer.Layer<ROut, E>) =>
  Layer.launch(service).pipe(
    Effect.tapErrorCause(logStartFailure),
    Effect.provide(StartupLogging),
    NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
  )
