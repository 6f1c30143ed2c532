/**
 * What the service checks and says while it starts: that the ports it will listen on are free before anything is
 * opened, a fatal start reduced to one sentence an operator can act on, and the one `ready` line once the service
 * is listening and its boot work is done.
 */
import { Cause, ConfigError, Data, Effect, Option } from "effect"
import * as Net from "node:net"
import { AppConfig } from "./AppConfig.ts"

/** A start that cannot go on; `message` says why in words that name the variable to change. */
export class StartupFailure extends Data.TaggedError("StartupFailure")<{ readonly message: string }> {}

const hostPort = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`)

/**
 * Binds a throwaway listener on host:port and closes it: undefined when the port could be bound, else the bind
 * error (EADDRINUSE when another process listens there).
 */
export const bindError = (host: string, port: number): Promise<NodeJS.ErrnoException | undefined> =>
  new Promise((resolve) => {
    const probe = Net.createServer()
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)))
  })

export const embeddedChainPortInUse = (port: number) =>
  new StartupFailure({
    message: `EMBEDDED_CHAIN_PORT ${port} is already in use by another process; stop it or set EMBEDDED_CHAIN_PORT to a free port`
  })

const httpPortUnusable = (host: string, port: number, error: NodeJS.ErrnoException) =>
  new StartupFailure({
    message:
      error.code === "EADDRINUSE"
        ? `${hostPort(host, port)} is already in use by another process; stop it or set PORT to a free port`
        : `${hostPort(host, port)} cannot be bound (${error.code ?? error.message}); check HOST and PORT`
  })

/**
 * Fails when HOST:PORT (or, on the embedded chain, EMBEDDED_CHAIN_PORT) cannot be bound, so a busy port is reported
 * before the database and the chain are opened rather than after. PORT=0 always passes.
 */
export const preflightPorts = Effect.gen(function* () {
  const config = yield* AppConfig
  if (config.port !== 0) {
    const error = yield* Effect.promise(() => bindError(config.host, config.port))
    if (error !== undefined) return yield* httpPortUnusable(config.host, config.port, error)
  }
  if (Option.isNone(config.chain.rpcUrl)) {
    const error = yield* Effect.promise(() => bindError("127.0.0.1", config.chain.embeddedPort))
    if (error?.code === "EADDRINUSE") return yield* embeddedChainPortInUse(config.chain.embeddedPort)
  }
})

/** The first non-empty message along an error's `cause` chain (a listen failure wraps the socket's error). */
const messageOf = (error: unknown): string => {
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 5; depth++) {
    if (typeof current === "object" && current !== null && "message" in current) {
      const message = String((current as { message: unknown }).message)
      if (message.trim() !== "") return message
      current = (current as { cause?: unknown }).cause
    } else {
      return String(current)
    }
  }
  return String(error)
}

/** The cause of a failed start as one human sentence; a configuration error keeps the variable it names. */
export const describeStartFailure = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return ConfigError.isConfigError(error) ? `invalid configuration: ${String(error)}` : messageOf(error)
}

/**
 * Logs one FATAL line whose message carries the cause. A defect (a bug, not an operator's setting) also carries
 * its whole cause for the stack; an expected failure's stack would only bury the sentence.
 */
export const logStartFailure = (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause)
    ? Effect.void
    : Effect.logFatal(`cannot start: ${describeStartFailure(cause)}`, ...(Cause.isFailType(cause) ? [] : [cause]))

/**
 * Logs `ready` once `booted` completes: the URL the service answers on, where its documentation is, how many
 * revisions it serves, and the seconds since the process started.
 */
export const announceReady = (options: {
  readonly url: string
  readonly booted: Effect.Effect<void>
  readonly revisionsConfirmed: Effect.Effect<number, unknown>
}) =>
  Effect.gen(function* () {
    yield* options.booted
    const revisionsConfirmed = yield* options.revisionsConfirmed
    yield* Effect.logInfo(`ready at ${options.url}`).pipe(
      Effect.annotateLogs({
        url: options.url,
        docsUrl: `${options.url}/v1/docs`,
        revisionsConfirmed,
        seconds: Math.round(process.uptime() * 10) / 10
      })
    )
  })
