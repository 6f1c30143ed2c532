/**
 * The upstream providers the exchange routes to, read once at start (DESIGN.md section 10): PROVIDERS_FILE plus the
 * vendors' key variables, one key pool per provider (RPM/TPM admission and cooldowns, domain/exchange/keyPool.ts), and
 * the per-vendor token ratios of the input estimate, and the per-model traits the translators and the planner read. A file that cannot be read stops the start with a sentence
 * naming it; no provider at all is a warning: the oracle serves, the exchange routes nothing and says what to set.
 */
import { Clock, Effect, Either, Option } from "effect"
import * as Fs from "node:fs"
import { DEFAULT_TOKEN_RATIO, parseTokenRatios, ratioFor } from "../../domain/exchange/estimate.ts"
import { KeyPool } from "../../domain/exchange/keyPool.ts"
import { KEY_SHORTCUTS, parseProvidersFile, type ProviderConfig, shortcutProviders } from "../../domain/exchange/providers.ts"
import { AppConfig, readVariables } from "../platform/AppConfig.ts"
import { SimulatedVendors } from "./SimulatedVendors.ts"
import { loadModelTraits } from "./traitsData.ts"
import { StartupFailure } from "../platform/Startup.ts"

const tokenRatiosFile = new URL("../../data/exchange/token-ratios.yaml", import.meta.url).pathname
const simulatorProvidersFile = new URL("../../simulator/providers.yaml", import.meta.url).pathname

export class Providers extends Effect.Service<Providers>()("Providers", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const simulated = (yield* SimulatedVendors).url
    // Simulated vendors stand in through the simulator's own providers file, pointed at the running simulator.
    const providersFile = Option.isSome(simulated) ? Option.some(simulatorProvidersFile) : config.exchange.providersFile
    const fromFile = yield* Option.match(providersFile, {
      onNone: () => Effect.succeed<ReadonlyArray<ProviderConfig>>([]),
      onSome: (path) =>
        Effect.gen(function* () {
          const text = yield* Effect.try({
            try: () => Fs.readFileSync(path, "utf8"),
            catch: (e) => new StartupFailure({ message: `PROVIDERS_FILE ${path} cannot be read: ${(e as Error).message}` })
          })
          const names = new Set([...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)|env:\s*([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => (m[1] ?? m[2])!))
          const env = Option.isSome(simulated) ? { SIMULATOR_URL: simulated.value } : yield* readVariables(names)
          return yield* Either.mapLeft(parseProvidersFile(text, env, path), (problem) =>
            new StartupFailure({ message: `PROVIDERS_FILE ${path}: ${problem}` })
          )
        })
    })
    const shortcutEnv = Option.isSome(simulated) ? {} : yield* readVariables(KEY_SHORTCUTS.flatMap((s) => s.variables))
    const providers = [...fromFile, ...shortcutProviders(shortcutEnv, new Set(fromFile.map((p) => p.name)))]
    const ratios = yield* Effect.try({
      try: () => Fs.readFileSync(tokenRatiosFile, "utf8"),
      catch: (e) => new StartupFailure({ message: `${tokenRatiosFile} cannot be read: ${(e as Error).message}` })
    }).pipe(
      Effect.flatMap((text) => Either.mapLeft(parseTokenRatios(text), (problem) => new StartupFailure({ message: `${tokenRatiosFile}: ${problem}` })))
    )
    const traits = yield* loadModelTraits()
    const now = yield* Clock.currentTimeMillis
    const pools = new Map(providers.map((p) => [p.name, new KeyPool(p.keys, now)]))
    const largestBudgets = new Map(providers.map((p) => [p.name, p.keys.reduce((max, key) => Math.max(max, key.tpm ?? Number.POSITIVE_INFINITY), 0)]))
    if (providers.length === 0) {
      yield* Effect.logWarning(
        "the exchange has no upstream provider: set PROVIDERS_FILE or a vendor key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) to route inference"
      )
    } else {
      yield* Effect.logInfo("exchange providers").pipe(
        Effect.annotateLogs({
          providers: providers.map((p) => `${p.name} (${p.format}, ${p.keys.length} key${p.keys.length === 1 ? "" : "s"}, ${p.source})`).join("; ")
        })
      )
    }
    return {
      providers,
      /** Every vendor is the simulator: answers are synthetic and say so (X-Upstream-Simulated). */
      simulated: Option.isSome(simulated),
      /** Per-model traits (data/exchange/model-traits.yaml): reasoning shape, sampling rules, native features. */
      traits,
      /** The key pool of a configured provider. */
      pool: (name: string): KeyPool | undefined => pools.get(name),
      /** The most tokens one request may count against a key of the provider in a minute (its largest TPM). */
      largestKeyBudget: (name: string): number => largestBudgets.get(name) ?? 0,
      /** Whether some key of the provider would admit a request of `tokens` estimated tokens at `now` (epoch ms). */
      hasCapacity: (name: string, tokens: number, now: number): boolean => pools.get(name)?.status(tokens, now).canAdmit === true,
      /** The o200k-to-vendor ratio of the local input estimate. */
      tokenRatio: (vendor: string): number => (ratios.size === 0 ? DEFAULT_TOKEN_RATIO : ratioFor(ratios, vendor))
    } as const
  }),
  dependencies: [SimulatedVendors.Default]
}) {}
