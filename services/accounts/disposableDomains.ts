/**
 * The disposable e-mail domains refused at sign-up (domain/accounts/disposableEmail.ts), read once at start from
 * DISPOSABLE_EMAIL_DOMAINS_FILE (default: the bundled data/accounts/disposable-domains.txt). A file that cannot be read
 * or parsed stops the start with a sentence naming the variable and the path, like PROVIDERS_FILE; the variable set to
 * an empty value turns the rule off (an empty list).
 */
import { Effect, Either, Option } from "effect"
import * as Fs from "node:fs"
import { type DisposableDomains, parseDisposableDomains } from "../../domain/accounts/disposableEmail.ts"
import { StartupFailure } from "../platform/Startup.ts"

/** Reads and parses the list; no path (the rule switched off): an empty list. */
export const loadDisposableDomains = (path: Option.Option<string>): Effect.Effect<DisposableDomains, StartupFailure> =>
  Option.match(path, {
    onNone: () => Effect.succeed<DisposableDomains>(new Set()),
    onSome: (file) =>
      Effect.try({
        try: () => Fs.readFileSync(file, "utf8"),
        catch: (e) =>
          new StartupFailure({ message: `DISPOSABLE_EMAIL_DOMAINS_FILE ${file} cannot be read: ${(e as Error).message}` })
      }).pipe(
        Effect.flatMap((text) =>
          Either.mapLeft(parseDisposableDomains(text), (problem) =>
            new StartupFailure({ message: `DISPOSABLE_EMAIL_DOMAINS_FILE ${file}: ${problem}` })
          )
        )
      )
  })
