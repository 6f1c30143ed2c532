/**
 * Where price cards come from: the bundled files under data/cards/ and any HTTP(S) URLs configured. Each
 * source is read, parsed and checked on its own; one that cannot be read or fails its check is reported
 * and contributes nothing, so it can never wipe prices.
 */
import { Effect, Either } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { parse as parseYaml, YAMLParseError } from "yaml"
import { CardProblem, checkCard, type PriceCard } from "../../domain/catalog/card.ts"
import { checkDecisions, type FamilyDecision } from "../../domain/catalog/decisions.ts"
import { AppConfig } from "../platform/AppConfig.ts"

export type SourceOutcome =
  | { readonly _tag: "Read"; readonly source: string; readonly card: PriceCard }
  | { readonly _tag: "Unreachable"; readonly source: string; readonly reason: string }
  | { readonly _tag: "Invalid"; readonly source: string; readonly problems: ReadonlyArray<string> }

export type DecisionsOutcome =
  | { readonly _tag: "Read"; readonly source: string; readonly decisions: ReadonlyArray<FamilyDecision> }
  | { readonly _tag: "Missing"; readonly source: string }
  | { readonly _tag: "Invalid"; readonly source: string; readonly problems: ReadonlyArray<string> }

/** YAML with the failsafe schema: every scalar stays text, so no price ever passes through a float. */
const readYaml = (source: string, text: string): Either.Either<unknown, string> => {
  try {
    return Either.right(parseYaml(text, { schema: "failsafe", uniqueKeys: true }))
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` (line ${error.linePos[0].line})` : ""
    return Either.left(`${source}: not valid YAML${where}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
  }
}

export const parseCard = (source: string, text: string): SourceOutcome =>
  Either.match(readYaml(source, text), {
    onLeft: (problem) => ({ _tag: "Invalid", source, problems: [problem] }),
    onRight: (raw) =>
      Either.match(checkCard(source, raw), {
        onLeft: (problems) => ({ _tag: "Invalid", source, problems: problems.map((p: CardProblem) => p.message) }),
        onRight: (card) => ({ _tag: "Read", source, card })
      })
  })

export class CardSources extends Effect.Service<CardSources>()("CardSources", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const dataDir = Path.resolve(config.oracle.priceDataDir)
    const cardsDir = Path.join(dataDir, "cards")
    const display = (file: string) => Path.relative(process.cwd(), file) || file

    const readFile = (file: string): Effect.Effect<SourceOutcome> =>
      Effect.tryPromise(() => Fs.readFile(file, "utf8")).pipe(
        Effect.map((text) => parseCard(display(file), text)),
        Effect.catchAll((error) =>
          Effect.succeed<SourceOutcome>({ _tag: "Unreachable", source: display(file), reason: String(error.error) })
        )
      )

    const readUrl = (url: string): Effect.Effect<SourceOutcome> =>
      Effect.tryPromise(async (signal) => {
        const response = await fetch(url, {
          signal: AbortSignal.any([signal, AbortSignal.timeout(config.oracle.sourceTimeoutMs)]),
          headers: { accept: "application/yaml, text/yaml, text/plain, */*" }
        })
        if (!response.ok) throw new Error(`HTTP ${response.status}`)
        return response.text()
      }).pipe(
        Effect.map((text) => parseCard(url, text)),
        Effect.catchAll((error) => {
          const cause = error.error
          const reason = cause instanceof Error ? (cause.name === "TimeoutError" ? "timed out" : cause.message) : String(cause)
          return Effect.succeed<SourceOutcome>({ _tag: "Unreachable", source: url, reason })
        })
      )

    /** Every source in a fixed order: bundled files by name, then the configured URLs. */
    const readAll = Effect.gen(function* () {
      const files = yield* Effect.tryPromise(() => Fs.readdir(cardsDir)).pipe(
        Effect.map((names) => names.filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => Path.join(cardsDir, name))),
        Effect.catchAll(() => Effect.succeed<Array<string>>([]))
      )
      const fromFiles = yield* Effect.forEach(files, readFile, { concurrency: 4 })
      const fromUrls = yield* Effect.forEach(config.oracle.priceCardUrls, readUrl, { concurrency: 4 })
      return [...fromFiles, ...fromUrls]
    })

    const decisionsFile = Path.join(dataDir, "decisions.yaml")
    const readDecisions: Effect.Effect<DecisionsOutcome> = Effect.tryPromise(() => Fs.readFile(decisionsFile, "utf8")).pipe(
      Effect.map((text): DecisionsOutcome => {
        const source = display(decisionsFile)
        return Either.match(readYaml(source, text), {
          onLeft: (problem) => ({ _tag: "Invalid", source, problems: [problem] }),
          onRight: (raw) =>
            Either.match(checkDecisions(source, raw), {
              onLeft: (problems) => ({ _tag: "Invalid", source, problems }),
              onRight: (decisions) => ({ _tag: "Read", source, decisions })
            })
        })
      }),
      Effect.catchAll(() => Effect.succeed<DecisionsOutcome>({ _tag: "Missing", source: display(decisionsFile) }))
    )

    return { readAll, readDecisions, cardsDir } as const
  }),
  dependencies: [AppConfig.Default]
}) {}
