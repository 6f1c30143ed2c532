/**
 * The operator command line (`npm run migrate`, `npm run oracle -- ...`, `npm run accounts -- ...`): its words
 * parsed into one command, the same whether the command then runs here or inside the running service.
 */

export const usage = `usage: npm run migrate
       npm run oracle -- <command> [arguments] [--verbose]
       npm run accounts -- <command> [arguments]

Each command works whether or not the service is running on the same DATA_DIR: while it runs, the command is
sent to it (its operator API, with the credential it keeps in DATA_DIR/operator.json) and runs there.

commands:
  migrate            apply pending database migrations (DATABASE_URL, or the embedded database under DATA_DIR)
  oracle scan        read every price card (data/cards, PRICE_CARD_URLS), record what changed, print the basket
  oracle basket      print the basket the catalog supports now, with the reason for every change
  oracle status      revisions in the database and on the chain, the latest one, the last sync
  oracle publish     publish a revision now if the basket changed (or follow up the one in flight)
  oracle approve N   publish revision N, held for approval (REVISION_APPROVAL=manual)
  oracle discard N   drop pending revision N, never sent; its number is free again
  oracle refork      rebuild the pending revision from the catalog as it is now
  oracle sync        read the registry into the database once
  oracle verify      check every confirmed revision against its manifest and the chain; non-zero on a mismatch
  oracle provenance  per provider, how many numbers of today's prices are verified, inferred, promotional, and which
                     vendor pages were read more than 90 days ago (--verbose: every inferred number and why)
  accounts grant <email|cf_id|wallet|org_id> <credits>
                     credit an account with credits (a decimal, 18 decimals: 25, 0.5) as an operator grant
  accounts faucet <address> <credits>
                     mint test CreditTokens to an address (embedded chain only), to deposit them
  accounts code <email>
                     print the latest sign-in code mailed to an address (local runs without SMTP_URL only)
  accounts routing show
                     print the operator's auto preference list (empty: the routing engine chooses)
  accounts routing set <model> [<model>...]
                     replace the auto preference list with these catalog models, in this order
  accounts routing clear
                     empty the auto preference list
  help               show this text`

export type OperatorCommand =
  | { readonly _tag: "Migrate" }
  | { readonly _tag: "Scan"; readonly verbose: boolean }
  | { readonly _tag: "Basket" }
  | { readonly _tag: "Status" }
  | { readonly _tag: "Publish" }
  | { readonly _tag: "Approve"; readonly revision: number }
  | { readonly _tag: "Discard"; readonly revision: number }
  | { readonly _tag: "Refork" }
  | { readonly _tag: "Sync" }
  | { readonly _tag: "Verify" }
  | { readonly _tag: "Provenance"; readonly verbose: boolean }
  | { readonly _tag: "Grant"; readonly who: string; readonly credits: string }
  | { readonly _tag: "Faucet"; readonly to: string; readonly credits: string }
  | { readonly _tag: "SignInCode"; readonly email: string }
  | { readonly _tag: "RoutingShow" }
  | { readonly _tag: "RoutingSet"; readonly models: ReadonlyArray<string> }
  | { readonly _tag: "RoutingClear" }

export type ParsedCommandLine =
  | { readonly _tag: "Command"; readonly command: OperatorCommand }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Unknown" }

const revisionNumber = (text: string | undefined) => (text !== undefined && /^[1-9][0-9]*$/.test(text) ? Number(text) : undefined)

/** The words after the script name (`npm run oracle -- scan` gives `oracle scan`). */
export const parseCommandLine = (args: ReadonlyArray<string>): ParsedCommandLine => {
  const verbose = args.includes("--verbose")
  const words = args.filter((arg) => !arg.startsWith("--"))
  const [command = "help", subcommand, argument, secondArgument] = words
  const found = (c: OperatorCommand): ParsedCommandLine => ({ _tag: "Command", command: c })
  const unknown: ParsedCommandLine = { _tag: "Unknown" }
  if (command === "help" || args[0] === "--help") return { _tag: "Help" }
  if (command === "migrate") return found({ _tag: "Migrate" })
  if (command === "accounts") {
    if (subcommand === "routing") {
      const models = words.slice(3)
      if (argument === "show" && models.length === 0) return found({ _tag: "RoutingShow" })
      if (argument === "clear" && models.length === 0) return found({ _tag: "RoutingClear" })
      if (argument === "set" && models.length > 0) return found({ _tag: "RoutingSet", models })
      return unknown
    }
    if (subcommand === "code") return argument === undefined || secondArgument !== undefined ? unknown : found({ _tag: "SignInCode", email: argument })
    if (argument === undefined || secondArgument === undefined) return unknown
    if (subcommand === "grant") return found({ _tag: "Grant", who: argument, credits: secondArgument })
    if (subcommand === "faucet") return found({ _tag: "Faucet", to: argument, credits: secondArgument })
    return unknown
  }
  if (command !== "oracle") return unknown
  switch (subcommand) {
    case "scan":
      return found({ _tag: "Scan", verbose })
    case "basket":
      return found({ _tag: "Basket" })
    case "status":
      return found({ _tag: "Status" })
    case "publish":
      return found({ _tag: "Publish" })
    case "approve":
    case "discard": {
      const revision = revisionNumber(argument)
      if (revision === undefined) return unknown
      return found(subcommand === "approve" ? { _tag: "Approve", revision } : { _tag: "Discard", revision })
    }
    case "refork":
      return found({ _tag: "Refork" })
    case "sync":
      return found({ _tag: "Sync" })
    case "verify":
      return found({ _tag: "Verify" })
    case "provenance":
      return found({ _tag: "Provenance", verbose })
    default:
      return unknown
  }
}
