/**
 * An operator command run by the command line itself, on the database and chain it opens from DATA_DIR (only the
 * ones the command needs), for when no service holds them.
 */
import { Console, Effect, Layer } from "effect"
import { ChainLive } from "../../layers/Chain.ts"
import { DatabaseLive, SqlLive } from "../../layers/Database.ts"
import { AnchoringLive, OracleLive } from "../../layers/Oracle.ts"
import { Ledger } from "../../services/accounts/Ledger.ts"
import { Mailer } from "../../services/accounts/Mailer.ts"
import { AutoRouter } from "../../services/exchange/AutoRouter.ts"
import { Verify } from "../../services/oracle/Verify.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import type { OperatorCommand } from "./commandLine.ts"
import * as Commands from "./commands.ts"

const toTerminal = Layer.succeed(Commands.CommandOutput, { line: (text: string) => Console.log(text) })

const withDatabase = Layer.provideMerge(DatabaseLive, AppConfig.Default)
const catalog = OracleLive.pipe(Layer.provideMerge(withDatabase))
const anchoring = Verify.Default.pipe(Layer.provideMerge(AnchoringLive), Layer.provideMerge(withDatabase))
const ledger = Ledger.Default.pipe(Layer.provideMerge(withDatabase))
const mail = Mailer.Default.pipe(Layer.provideMerge(withDatabase))
const routingList = AutoRouter.Default.pipe(Layer.provideMerge(withDatabase))

export const runHere = (command: OperatorCommand): Effect.Effect<void, unknown> => {
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
    case "Provenance":
      return Commands.provenance(command.verbose).pipe(Effect.provide(toTerminal), Effect.provide(AppConfig.Default))
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

