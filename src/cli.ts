/**
 * Operator commands: `npm run migrate`, `npm run oracle -- <command>` and `npm run accounts -- <command>`. Each prints
 * what it is doing and exits non-zero when it fails. A command opens the database and chain it needs itself, unless
 * the service is running on the same DATA_DIR (it then holds the embedded database and chain): the command is then
 * sent to the service, which runs the same code (src/operator/commands.ts) and streams back what it prints.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Config, Console, Effect, Option, Schema } from "effect"
import { LoggingLive } from "../layers/Logging.ts"
import { findRunningService, type RunningService } from "../services/platform/OperatorCredential.ts"
import { type OperatorCommand, parseCommandLine, usage } from "./operator/commandLine.ts"
import { CommandFailure, OperatorCommandEvent } from "./operator/protocol.ts"

/** The command run here, on the database and chain it opens itself: that code loads only when it is needed. */
const runHere = (command: OperatorCommand) =>
  Effect.flatMap(
    Effect.promise(() => import("./operator/local.ts")),
    (local) => local.runHere(command)
  )

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
        new CommandFailure(
          `the service recorded in DATA_DIR/operator.json (process ${service.pid}) does not answer at ${service.url}: ${(error as Error).message}`
        )
    })
    if (!response.ok || response.body === null) {
      const text = yield* Effect.promise(() => response.text())
      return yield* Effect.fail(new CommandFailure(`the service refused the command (${response.status}): ${text}`))
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
    if (Option.isNone(ended)) return yield* Effect.fail(new CommandFailure("the service stopped before the command ended; see its log"))
    if (ended.value.exit !== 0) return yield* Effect.fail(new CommandFailure(ended.value.error ?? "the command failed"))
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
