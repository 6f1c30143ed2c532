/**
 * What the command line and the running service say to each other, and how a command fails: kept apart from the
 * commands themselves so a command sent to the service loads none of the database, chain or oracle code.
 */
import { Schema } from "effect"

/** A command that cannot do what it was asked, in one sentence (exit 1). */
export class CommandFailure extends Error {}

/** One line of the answer to a command (newline-delimited JSON): a line it printed, then how it ended. */
export const OperatorCommandEvent = Schema.Union(
  Schema.Struct({ line: Schema.String }),
  Schema.Struct({ exit: Schema.Literal(0, 1), error: Schema.optional(Schema.String) })
).annotations({ identifier: "OperatorCommandEvent" })
