/**
 * Upstream provider configuration (DESIGN.md section 10): `PROVIDERS_FILE` (YAML) plus the vendors' usual key
 * variables as shortcuts. Pure: the caller passes the file's text and the environment; secrets stay Redacted.
 */
import { Either, ParseResult, Redacted, Schema } from "effect"
import { parse as parseYaml } from "yaml"

export const UpstreamFormat = Schema.Literal("openai-chat", "anthropic-messages", "gemini")
export type UpstreamFormat = typeof UpstreamFormat.Type

export interface UpstreamKey {
  /** Stable within the process: `<provider>#<n>` (1-based), what logs and attempts name instead of the secret. */
  readonly id: string
  readonly secret: Redacted.Redacted<string>
  /** Requests per minute this key may take; null: no ceiling of ours. */
  readonly rpm: number | null
  /** Tokens per minute (estimated input + output at admission); null: no ceiling. */
  readonly tpm: number | null
}

export interface ProviderConfig {
  /** The catalog vendor it serves (first segment of model ids). */
  readonly name: string
  readonly format: UpstreamFormat
  /** Without a trailing slash. */
  readonly baseUrl: string
  readonly keys: ReadonlyArray<UpstreamKey>
  /** Catalog keys served; null: every catalog model of the vendor. */
  readonly models: ReadonlySet<string> | null
  /** Where it came from: the file, or the shortcut variable. */
  readonly source: string
}

const Secret = Schema.Union(
  Schema.NonEmptyTrimmedString,
  Schema.Struct({ env: Schema.NonEmptyTrimmedString })
)
const Limit = Schema.optional(Schema.Int.pipe(Schema.positive()))
const ProvidersFile = Schema.Struct({
  providers: Schema.Array(
    Schema.Struct({
      name: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{0,31}$/)),
      format: UpstreamFormat,
      baseUrl: Schema.String.pipe(Schema.pattern(/^https?:\/\/\S+$/)),
      keys: Schema.Array(Schema.Struct({ secret: Secret, rpm: Limit, tpm: Limit })).pipe(Schema.minItems(1)),
      models: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString))
    })
  )
}).annotations({ parseOptions: { errors: "all", onExcessProperty: "error" } })

/** The shortcuts: each enables its vendor at the public base URL with one key. */
export const KEY_SHORTCUTS: ReadonlyArray<{ readonly variables: ReadonlyArray<string>; readonly name: string; readonly format: UpstreamFormat; readonly baseUrl: string }> = [
  { variables: ["OPENAI_API_KEY"], name: "openai", format: "openai-chat", baseUrl: "https://api.openai.com/v1" },
  { variables: ["ANTHROPIC_API_KEY"], name: "anthropic", format: "anthropic-messages", baseUrl: "https://api.anthropic.com" },
  { variables: ["GEMINI_API_KEY", "GOOGLE_API_KEY"], name: "google", format: "gemini", baseUrl: "https://generativelanguage.googleapis.com" },
  { variables: ["XAI_API_KEY"], name: "xai", format: "openai-chat", baseUrl: "https://api.x.ai/v1" },
  { variables: ["DEEPSEEK_API_KEY"], name: "deepseek", format: "openai-chat", baseUrl: "https://api.deepseek.com" },
  { variables: ["MISTRAL_API_KEY"], name: "mistral", format: "openai-chat", baseUrl: "https://api.mistral.ai/v1" },
  { variables: ["DASHSCOPE_API_KEY"], name: "alibaba", format: "openai-chat", baseUrl: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1" },
  { variables: ["MOONSHOT_API_KEY"], name: "moonshot", format: "openai-chat", baseUrl: "https://api.moonshot.ai/v1" },
  { variables: ["ZAI_API_KEY", "ZHIPU_API_KEY"], name: "zhipu", format: "openai-chat", baseUrl: "https://api.z.ai/api/paas/v4" },
  { variables: ["MINIMAX_API_KEY"], name: "minimax", format: "openai-chat", baseUrl: "https://api.minimax.io/v1" },
  { variables: ["COHERE_API_KEY"], name: "cohere", format: "openai-chat", baseUrl: "https://api.cohere.ai/compatibility/v1" }
]

/** `${NAME}` and `${NAME:-default}` in the file, from the environment; an unset name without default is an error. */
export const interpolate = (text: string, env: Readonly<Record<string, string | undefined>>): Either.Either<string, string> => {
  const missing: Array<string> = []
  const out = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
    const value = env[name]
    if (value !== undefined && value !== "") return value
    if (fallback !== undefined) return fallback
    missing.push(name)
    return ""
  })
  return missing.length === 0 ? Either.right(out) : Either.left(`unset variable(s) ${[...new Set(missing)].join(", ")} (write \${NAME:-default} for a default)`)
}

/**
 * Reads PROVIDERS_FILE's text. A provider may appear once; `models` entries are catalog keys (checked by the caller,
 * which knows the catalog). Errors name the file's field.
 */
export const parseProvidersFile = (
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  source: string
): Either.Either<ReadonlyArray<ProviderConfig>, string> =>
  Either.gen(function* () {
    const interpolated = yield* interpolate(text, env)
    const raw = yield* Either.try({ try: () => parseYaml(interpolated) as unknown, catch: (e) => `not YAML: ${(e as Error).message}` })
    const file = yield* Schema.decodeUnknownEither(ProvidersFile)(raw).pipe(
      Either.mapLeft((error) =>
        ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")
      )
    )
    const seen = new Set<string>()
    const providers: Array<ProviderConfig> = []
    for (const [index, p] of file.providers.entries()) {
      if (seen.has(p.name)) return yield* Either.left(`providers.${index}.name: provider "${p.name}" appears twice`)
      seen.add(p.name)
      const keys: Array<UpstreamKey> = []
      for (const [k, key] of p.keys.entries()) {
        const secret = typeof key.secret === "string" ? key.secret : env[key.secret.env]
        if (secret === undefined || secret.trim() === "") {
          return yield* Either.left(`providers.${index}.keys.${k}.secret: variable ${(key.secret as { env: string }).env} is not set`)
        }
        keys.push({ id: `${p.name}#${k + 1}`, secret: Redacted.make(secret.trim()), rpm: key.rpm ?? null, tpm: key.tpm ?? null })
      }
      providers.push({
        name: p.name,
        format: p.format,
        baseUrl: p.baseUrl.replace(/\/+$/, ""),
        keys,
        models: p.models === undefined ? null : new Set(p.models.map((m) => m.toLowerCase())),
        source
      })
    }
    return providers
  })

/** The shortcut variables that are set, as providers; a vendor the file configures is left to the file. */
export const shortcutProviders = (
  env: Readonly<Record<string, string | undefined>>,
  configured: ReadonlySet<string>
): ReadonlyArray<ProviderConfig> =>
  KEY_SHORTCUTS.flatMap((shortcut) => {
    if (configured.has(shortcut.name)) return []
    const variable = shortcut.variables.find((v) => (env[v] ?? "").trim() !== "")
    if (variable === undefined) return []
    return [{
      name: shortcut.name,
      format: shortcut.format,
      baseUrl: shortcut.baseUrl,
      keys: [{ id: `${shortcut.name}#1`, secret: Redacted.make(env[variable]!.trim()), rpm: null, tpm: null }],
      models: null,
      source: variable
    }]
  })

/** What decides whether the vendor simulator stands in for every vendor. */
export interface SimulatorChoice {
  /** EXCHANGE_SIMULATOR: `on` and `off` decide alone; `auto` follows the rule below. */
  readonly setting: "on" | "off" | "auto"
  /** DATABASE_URL is set: the service runs on a real deployment's database. */
  readonly databaseConfigured: boolean
  /** PROVIDERS_FILE is set. */
  readonly providersFileConfigured: boolean
  /** Some vendor key variable (KEY_SHORTCUTS) is set and not empty. */
  readonly vendorKeyConfigured: boolean
}

/**
 * `auto` simulates the vendors only on the all-embedded default (no DATABASE_URL) with no upstream configured: a
 * fresh `npm start` can then answer a paid request, and nothing that names a real database or a real vendor ever
 * answers synthetically unless asked with `on`.
 */
export const simulatesVendors = (choice: SimulatorChoice): boolean =>
  choice.setting === "auto"
    ? !choice.databaseConfigured && !choice.providersFileConfigured && !choice.vendorKeyConfigured
    : choice.setting === "on"

/** Whether any shortcut variable holds a key. */
export const anyVendorKeySet = (env: Readonly<Record<string, string | undefined>>): boolean =>
  KEY_SHORTCUTS.some((shortcut) => shortcut.variables.some((variable) => (env[variable] ?? "").trim() !== ""))
