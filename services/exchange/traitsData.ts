/**
 * The per-model traits of the exchange (data/exchange/model-traits.yaml; domain/exchange/traits.ts), read and decoded
 * once at start by services/exchange/Providers.ts, which hands them to the routable catalog. A file that cannot be read or decoded stops the start with a sentence naming the
 * file, the model key and the field, like the token ratios (services/exchange/Providers.ts). A model the file does
 * not list gets DEFAULT_TRAITS.
 */
import { Effect, Either } from "effect"
import * as Fs from "node:fs"
import { parseModelTraits, type TraitsTable } from "../../domain/exchange/traits.ts"
import { StartupFailure } from "../platform/Startup.ts"

const modelTraitsFile = new URL("../../data/exchange/model-traits.yaml", import.meta.url).pathname

/** Reads and decodes the traits file (the bundled one unless a path is given). */
export const loadModelTraits = (path: string = modelTraitsFile): Effect.Effect<TraitsTable, StartupFailure> =>
  Effect.try({
    try: () => Fs.readFileSync(path, "utf8"),
    catch: (e) => new StartupFailure({ message: `${path} cannot be read: ${(e as Error).message}` })
  }).pipe(
    Effect.flatMap((text) => Either.mapLeft(parseModelTraits(text), (problem) => new StartupFailure({ message: problem })))
  )
