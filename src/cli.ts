/**
 * Operator commands: `npm run migrate`, `npm run oracle -- <command>` and `npm run accounts -- <command>`. Each prints
 * what it is doing and exits non-zero when it fails. A command opens the database and chain it needs itself, unless
 * the service is running on the same DATA_DIR (it then holds the embedded database and chain): the command is then
 * sent to the service, which runs the same code (src/operator/commands.ts) and streams back what it prints.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Schema } from "effect"
import { DatabaseLive, SqlLive } from "../layers/Database.ts"
import { LoggingLive } from "../layers/Logging.ts"
import { ChainLive } from "../layers/Chain.ts"
import { AnchoringLive, OracleLive } from "../layers/Oracle.ts"
import { Ledger } from "../services/accounts/Ledger.ts"
import { Mailer } from "../services/accounts/Mailer.ts"
import { AutoRouter } from "../services/exchange/AutoRouter.ts"
import { Verify } from "../services/oracle/Verify.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { findRunningService, type RunningService } from "../services/platform/OperatorCredential.ts"
import { OperatorCommandEvent } from "./api/AdminApi.ts"
import { type OperatorCommand, parseCommandLine, usage } from "./operator/commandLine.ts"
import * as Commands from "./operator/commands.ts"

const toTerminal = Layer.succeed(Commands.CommandOutput, { line: (text: string) => Console.log(text) })

const withDatabase = Layer.provideMerge(DatabaseLive, AppConfig.Default)
const catalog = OracleLive.pipe(Layer.provideMerge(withDatabase))
const anchoring = Verify.Default.pipe(Layer.provideMerge(AnchoringLive), Layer.provideMerge(withDatabase))
const ledger = Ledger.Default.pipe(Layer.provideMerge(withDatabase))
const mail = Mailer.Default.pipe(Layer.provideMerge(withDatabase))
const routingList = AutoRouter.Default.pipe(Layer.provideMerge(withDatabase))

/** The command run here, on the database and chain it opens itself (and only those it needs). */
const runHere = (command: OperatorCommand): Effect.Effect<void, unknown> => {
  switch (command._tag) {
    case "Migrate":
      return Commands.migrate.pipe(Effect.provide(toTerminal), Effect.provide(SqlLive))
    case "Scan":
      return Commands.scan(command.verbose).pipe(Effect.provide(toTerminal), Effect.provide(catalog))
    case "Basket":
      return Commands.basket.pipe(Effect.provide(toTerminal), Effect.provide(catalog))
    case "Status":
      return Commands.status.pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Publish":
      return Commands.publish.pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Approve":
      return Commands.maintain("approve", command.revision).pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Discard":
      return Commands.maintain("discard", command.revision).pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Refork":
      return Commands.refork.pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Sync":
      return Commands.sync.pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Verify":
      return Commands.verify.pipe(Effect.provide(toTerminal), Effect.provide(anchoring))
    case "Grant":
      return Commands.grant(command.who, command.credits).pipe(Effect.provide(toTerminal), Effect.provide(ledger))
    case "Faucet":
      return Commands.faucet(command.to, command.credits).pipe(Effect.provide(toTerminal), Effect.provide(ChainLive))
    case "SignInCode":
      return Commands.signInCode(command.email).pipe(Effect.provide(toTerminal), Effect.provide(mail))
    case "RoutingShow":
      return Commands.routing("show").pipe(Effect.provide(toTerminal), Effect.provide(routingList))
    case "RoutingSet":
      return Commands.routing(command.models).pipe(Effect.provide(toTerminal), Effect.provide(routingList))
    case "RoutingClear":
      return Commands.routing("clear").pipe(Effect.provide(toTerminal), Effect.provide(routingList))
  }
}

const decodeEvent = Schema.decodeUnknownOption(Schema.parseJson(OperatorCommandEvent))

/** The command sent to the service running on DATA_DIR, its lines printed as they come. */
const runInService = (service: RunningService, args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    yield* Console.error(`the service is running on this DATA_DIR (process ${service.pid}): the command runs there`)
    const response = yield* Effect.tryPromise({
      try: () =>
        fetch(`${service.url}/v1/admin/commands`, {
          method: "POST",
          headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
          body: JSON.stringify({ args })
        }),
      catch: (error) =>
        new Commands.CommandFailure(
          `the service recorded in DATA_DIR/operator.json (process ${service.pid}) does not answer at ${service.url}: ${(error as Error).message}`
        )
    })
    if (!response.ok || response.body === null) {
      const text = yield* Effect.promise(() => response.text())
      return yield* Effect.fail(new Commands.CommandFailure(`the service refused the command (${response.status}): ${text}`))
    }
    let pending = ""
    let ended: Option.Option<{ readonly exit: 0 | 1; readonly error?: string | undefined }> = Option.none()
    const decoder = new TextDecoder()
    const reader = response.body.getReader()
    for (;;) {
      const chunk = yield* Effect.promise(() => reader.read())
      pending += chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true })
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        const event = decodeEvent(line)
        if (Option.isNone(event)) continue
        if ("line" in event.value) yield* Console.log(event.value.line)
        else ended = Option.some(event.value)
      }
      if (chunk.done) break
    }
    if (Option.isNone(ended)) return yield* Effect.fail(new Commands.CommandFailure("the service stopped before the command ended; see its log"))
    if (ended.value.exit !== 0) return yield* Effect.fail(new Commands.CommandFailure(ended.value.error ?? "the command failed"))
  })

const dataDir = Config.string("DATA_DIR").pipe(Config.withDefault("./.data"))

/** Here, or in the service that holds DATA_DIR. */
const runCommand = (command: OperatorCommand, args: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.flatMap(dataDir, findRunningService), (running) =>
    Option.match(running, { onNone: () => runHere(command), onSome: (service) => runInService(service, args) })
  )

/** A command that fails says why in one line and exits 1; a defect still prints its whole cause. */
const reportFailure = (error: unknown) =>
  Console.error(`error: ${error instanceof Error || (typeof error === "object" && error !== null && "message" in error) ? (error as { message: string }).message : String(error)}`).pipe(
    Effect.zipRight(Effect.sync(() => void (process.exitCode = 1)))
  )

const args = process.argv.slice(2)
const parsed = parseCommandLine(args)

if (parsed._tag === "Command") {
  runCommand(parsed.command, args).pipe(Effect.catchAll(reportFailure), Effect.provide(LoggingLive), NodeRuntime.runMain({ disablePrettyLogger: true }))
} else if (parsed._tag === "Help") {
  console.log(usage)
} else {
  console.error(`unknown command "${args.join(" ")}"\n\n${usage}`)
  process.exitCode = 2
}
