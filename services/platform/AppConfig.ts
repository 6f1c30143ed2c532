/**
 * The one configuration module: every variable the service reads, with its default, through Effect Config.
 * Secrets are Redacted so they never reach a log line. README.md lists the same table for operators.
 */
import { Config, ConfigError, Effect, Either, LogLevel, Option, Redacted } from "effect"
import { parseUsd18Either } from "../../domain/money.ts"
import { parseServiceRoles, rolesConfigurationProblem } from "../../domain/serviceRoles.ts"

/** How far to trust X-Forwarded-For: not at all, the left-most address, or N proxies from the right. */
export type TrustProxy = { readonly _tag: "None" } | { readonly _tag: "All" } | { readonly _tag: "Hops"; readonly hops: number }

const trustProxy: Config.Config<TrustProxy> = Config.string("TRUST_PROXY").pipe(
  Config.withDefault("false"),
  Config.mapOrFail((raw): Either.Either<TrustProxy, ConfigError.ConfigError> => {
    const value = raw.trim().toLowerCase()
    if (value === "" || value === "false" || value === "0") return Either.right({ _tag: "None" })
    if (value === "true") return Either.right({ _tag: "All" })
    if (/^[1-9][0-9]?$/.test(value)) return Either.right({ _tag: "Hops", hops: Number(value) })
    return Either.left(
      ConfigError.InvalidData(["TRUST_PROXY"], `expected true, false or a number of proxy hops (1-99), got "${raw}"`)
    )
  })
)

/** An optional variable where an empty value means unset. */
const optionalString = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))

const optionalSecret = (name: string) =>
  optionalString(name).pipe(Config.map(Option.map((value) => Redacted.make(value))))

const port = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a TCP port (0-65535)`, validation: (n) => n >= 0 && n <= 65535 })
  )

const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

const nonNegativeNumber = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a number >= 0`, validation: (n) => Number.isFinite(n) && n >= 0 })
  )

/** A comma-separated list of https URLs; empty means none. */
const urlList = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.mapOrFail((raw) => {
      const urls = raw.split(",").map((url) => url.trim()).filter((url) => url !== "")
      const bad = urls.find((url) => !/^https?:\/\/\S+$/.test(url))
      return bad === undefined
        ? Either.right(urls)
        : Either.left(ConfigError.InvalidData([name], `"${bad}" is not an http(s) URL`))
    })
  )

/** The project's own data/ directory, wherever the process was started from. */
const bundledDataDir = new URL("../../data", import.meta.url).pathname

/** The bundled list of disposable e-mail domains: a short example that operators replace with their own. */
export const bundledDisposableDomainsFile = new URL("../../data/accounts/disposable-domains.txt", import.meta.url).pathname

export type SimulatorSetting = "on" | "off" | "auto"

export const LogFormat = ["pretty", "json"] as const
export type LogFormat = (typeof LogFormat)[number]

/** OTLP/HTTP's URL for a signal: its own variable as given, else the base endpoint's `/v1/<signal>`. */
const otlpUrl = (signal: "traces" | "metrics") =>
  Config.all({
    own: optionalString(`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`),
    base: optionalString("OTEL_EXPORTER_OTLP_ENDPOINT")
  }).pipe(
    Config.map(({ base, own }) => Option.orElse(own, () => Option.map(base, (url) => `${url.replace(/\/+$/, "")}/v1/${signal}`))),
    Config.validate({
      message: `OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT) must be an http(s) URL`,
      validation: (url) => Option.isNone(url) || /^https?:\/\/\S+$/.test(url.value)
    })
  )

/** `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs separated by commas, values percent-encoded (the OTel spec's form). */
const otlpHeaders = optionalString("OTEL_EXPORTER_OTLP_HEADERS").pipe(
  Config.mapOrFail((value) => {
    const headers: Record<string, string> = {}
    for (const pair of Option.getOrElse(value, () => "").split(",")) {
      if (pair.trim() === "") continue
      const at = pair.indexOf("=")
      const name = at < 0 ? "" : pair.slice(0, at).trim()
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
        return Either.left(ConfigError.InvalidData([], "OTEL_EXPORTER_OTLP_HEADERS must be name=value pairs separated by commas"))
      }
      try {
        headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim())
      } catch {
        return Either.left(ConfigError.InvalidData([], `OTEL_EXPORTER_OTLP_HEADERS: the value of ${name} is not percent-encoded`))
      }
    }
    return Either.right(Redacted.make(headers))
  })
)

/** SERVICE_ROLES (DESIGN.md section 14): the roles this replica runs; unset or empty, all of them. */
const serviceRoles = Config.string("SERVICE_ROLES").pipe(
  Config.withDefault(""),
  Config.mapOrFail((raw) => Either.mapLeft(parseServiceRoles(raw), (message) => ConfigError.InvalidData(["SERVICE_ROLES"], message)))
)

export const appConfig = Config.all({
  /** The roles this replica runs (domain/serviceRoles.ts): a route of another role answers 404 here. */
  roles: serviceRoles,
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: port("PORT", 8080),
  /** Prometheus text on its own listener (DESIGN.md section 15); unset: no listener, nothing exported. */
  metrics: Config.all({
    port: Config.option(Config.integer("METRICS_PORT")).pipe(
      Config.validate({ message: "METRICS_PORT must be a TCP port (1-65535)", validation: (port) => Option.isNone(port) || (port.value >= 1 && port.value <= 65535) })
    ),
    host: Config.string("METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
    /** The standard OpenTelemetry variable: the `service.name` the metrics (and traces) carry. */
    serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("compute-exchange")),
    /** The same metrics pushed over OTLP/HTTP to a collector, when an endpoint is set. */
    otlpUrl: otlpUrl("metrics"),
    otlpIntervalMs: positiveInteger("OTEL_METRIC_EXPORT_INTERVAL", 60_000)
  }),
  /** Traces over OTLP/HTTP JSON (DESIGN.md section 15); no endpoint: no tracer at all (spans cost nothing). */
  tracing: Config.all({
    url: otlpUrl("traces"),
    headers: otlpHeaders,
    /** The share of traces a request starts (a client's sampled `traceparent` is always followed). */
    sampleRatio: Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
      Config.withDefault(1),
      Config.validate({ message: "OTEL_TRACES_SAMPLER_ARG must be a ratio between 0 and 1", validation: (n) => n >= 0 && n <= 1 })
    ),
    /** How often finished spans are sent, as the batch span processor's standard variable says. */
    exportIntervalMs: positiveInteger("OTEL_BSP_SCHEDULE_DELAY", 5_000)
  }),
  publicBaseUrl: optionalString("PUBLIC_BASE_URL"),
  // The public site (SPEC {site_url}): only referral links name it.
  siteUrl: optionalString("SITE_URL").pipe(
    Config.validate({
      message: "SITE_URL must be an http(s) URL",
      validation: (value) => Option.match(value, { onNone: () => true, onSome: (url) => /^https?:\/\/\S+$/.test(url) })
    })
  ),
  trustProxy,
  logLevel: Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  logFormat: Config.literal(...LogFormat)("LOG_FORMAT").pipe(
    Config.withDefault<LogFormat>(process.stdout.isTTY ? "pretty" : "json")
  ),
  shutdownTimeoutMs: positiveInteger("SHUTDOWN_TIMEOUT_MS", 10_000),
  database: Config.all({
    url: optionalSecret("DATABASE_URL"),
    poolSize: positiveInteger("DATABASE_POOL_SIZE", 10),
    connectTimeoutMs: positiveInteger("DATABASE_CONNECT_TIMEOUT_MS", 5_000)
  }),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  oracle: Config.all({
    // Off: every oracle read goes through the Effect request stack (the reference behaviour; parity tests).
    fastPath: Config.boolean("ORACLE_FAST_PATH").pipe(Config.withDefault(true)),
    priceDataDir: Config.string("PRICE_DATA_DIR").pipe(Config.withDefault(bundledDataDir)),
    priceCardUrls: urlList("PRICE_CARD_URLS"),
    scanIntervalHours: nonNegativeNumber("PRICE_SCAN_INTERVAL_HOURS", 24),
    sourceTimeoutMs: positiveInteger("PRICE_SOURCE_TIMEOUT_MS", 10_000),
    rules: Config.all({
      seasoningDays: nonNegativeNumber("INDEX_SEASONING_DAYS", 7),
      livenessScans: positiveInteger("INDEX_LIVENESS_SCANS", 3),
      holdThresholdPercent: nonNegativeNumber("INDEX_HOLD_THRESHOLD_PERCENT", 30),
      holdHours: nonNegativeNumber("INDEX_HOLD_HOURS", 24)
    })
  }),
  chain: Config.all({
    rpcUrl: optionalSecret("RPC_URL"),
    registryAddress: optionalString("REGISTRY_ADDRESS"),
    chainId: positiveInteger("CHAIN_ID", 8453),
    publisherPrivateKey: optionalSecret("PUBLISHER_PRIVATE_KEY"),
    treasuryAddress: optionalString("TREASURY_ADDRESS"),
    creditTokenAddress: optionalString("CREDIT_TOKEN_ADDRESS"),
    // Where the deposit watcher's first scan starts on a configured network; unset: at the confirmed head.
    treasuryDeployedBlock: Config.option(
      Config.integer("TREASURY_DEPLOYED_BLOCK").pipe(
        Config.validate({ message: "TREASURY_DEPLOYED_BLOCK must be a block number (an integer >= 0)", validation: (n) => n >= 0 })
      )
    ),
    relayerPrivateKey: optionalSecret("RELAYER_PRIVATE_KEY"),
    embeddedPort: port("EMBEDDED_CHAIN_PORT", 8545),
    confirmations: positiveInteger("CHAIN_CONFIRMATIONS", 3),
    confirmationTimeoutMs: positiveInteger("CHAIN_CONFIRMATION_TIMEOUT_MS", 120_000),
    syncIntervalSeconds: nonNegativeNumber("CHAIN_SYNC_INTERVAL_SECONDS", 60),
    staleAfterSeconds: positiveInteger("CHAIN_STALE_AFTER_SECONDS", 600)
  }),
  rateLimit: Config.all({
    enabled: Config.boolean("RATE_LIMIT_ENABLED").pipe(Config.withDefault(true)),
    perMinute: positiveInteger("RATE_LIMIT_PER_MINUTE", 120),
    perSecond: positiveInteger("RATE_LIMIT_PER_SECOND", 5),
    perTenSeconds: positiveInteger("RATE_LIMIT_PER_10_SECONDS", 20),
    // Inference requests per API key per minute (a token bucket: bursts up to the limit), across replicas with Redis.
    inferencePerMinute: positiveInteger("INFERENCE_RATE_LIMIT_PER_MINUTE", 600),
    redisUrl: optionalSecret("REDIS_URL"),
    keyPrefix: Config.string("RATE_LIMIT_KEY_PREFIX").pipe(Config.withDefault("cx:ratelimit:"))
  }),
  identity: Config.all({
    // Both or neither: mail goes out through SMTP only when it has a sender.
    mail: Config.all({ smtpUrl: optionalSecret("SMTP_URL"), from: optionalString("MAIL_FROM") }).pipe(
      Config.mapOrFail((mail) =>
        Option.isSome(mail.smtpUrl) && Option.isNone(mail.from)
          ? Either.left(ConfigError.InvalidData(["MAIL_FROM"], "MAIL_FROM is required when SMTP_URL is set"))
          : Either.right(mail)
      )
    ),
    // The HMAC key of e-mail codes; unset: a random key per process (codes do not survive a restart).
    codePepper: optionalSecret("AUTH_CODE_PEPPER"),
    // Domains refused for a new CF ID's e-mail (one per line); unset: the bundled list; empty: the rule is off.
    disposableEmailDomainsFile: Config.string("DISPOSABLE_EMAIL_DOMAINS_FILE").pipe(
      Config.withDefault(bundledDisposableDomainsFile),
      Config.map((path) => Option.liftPredicate(path.trim(), (trimmed) => trimmed !== ""))
    )
  }),
  revisions: Config.all({
    approval: Config.literal("auto", "manual")("REVISION_APPROVAL").pipe(Config.withDefault<"auto" | "manual">("auto")),
    maintainerToken: optionalSecret("MAINTAINER_TOKEN")
  }),
  exchange: Config.all({
    // USD per credit token: the peg every bill divides by (DESIGN.md section 10), shown as `pegUsd` by /pricing.
    creditPegUsd: Config.string("CREDIT_PEG_USD").pipe(
      Config.withDefault("1"),
      Config.map((text) => text.trim()),
      Config.mapOrFail((text) =>
        Either.match(parseUsd18Either(text), {
          onLeft: (problem) => Either.left(ConfigError.InvalidData(["CREDIT_PEG_USD"], `CREDIT_PEG_USD must be a positive USD amount like 1 or 0.5: ${problem}`)),
          onRight: (peg) =>
            peg > 0n ? Either.right(text) : Either.left(ConfigError.InvalidData(["CREDIT_PEG_USD"], "CREDIT_PEG_USD must be above zero"))
        })
      )
    ),
    // YAML upstream providers (DESIGN.md section 10); the vendors' key variables are read as shortcuts besides it.
    providersFile: optionalString("PROVIDERS_FILE"),
    // The vendor simulator as every vendor's upstream, run beside the service: `auto` does so only on the
    // all-embedded default with no upstream configured (domain/exchange/providers.ts says when exactly).
    simulator: Config.literal("on", "off", "auto")("EXCHANGE_SIMULATOR").pipe(
      Config.withDefault<SimulatorSetting>("auto")
    ),
    // The inference endpoints answered ahead of the HttpApi router (src/http/inferenceRoute.ts); false: every
    // request through the stack, the reference the route is compared with.
    fastPath: Config.boolean("INFERENCE_FAST_PATH").pipe(Config.withDefault(true)),
    // How long an upstream may take to start answering before the next key or candidate is tried.
    firstByteTimeoutMs: positiveInteger("UPSTREAM_FIRST_BYTE_TIMEOUT_MS", 60_000),
    // Once an answer has started, how long a stream may send nothing (then stream_interrupted) and a whole answer's
    // body may take after its head (then the next key). Above every vendor's keep-alive interval (their streams send
    // pings or reasoning while they think), below the time a client would wait on a silent connection.
    idleTimeoutMs: positiveInteger("UPSTREAM_IDLE_TIMEOUT_MS", 120_000),
    // After a client disconnects, how long the upstream is still read for its final usage before it is cut.
    drainTimeoutMs: positiveInteger("STREAM_DRAIN_TIMEOUT_MS", 120_000),
    // HMAC key for `user` / `metadata.user_id` fingerprints; unset: those fields are dropped.
    userFingerprintKey: optionalSecret("USER_FINGERPRINT_KEY"),
    // The key that seals a Responses reasoning item's `encrypted_content`; unset: a random key per process (sealed
    // items then open only on the replica that sealed them, until it restarts).
    reasoningSealKey: optionalSecret("REASONING_SEAL_KEY"),
    // The share of `auto` traffic held on the operator's order (no pin, no bias): the routing engine's control arm.
    autoControlArmPercent: Config.number("AUTO_CONTROL_ARM_PERCENT").pipe(
      Config.withDefault(0),
      Config.validate({ message: "AUTO_CONTROL_ARM_PERCENT must be a number from 0 to 100", validation: (n) => n >= 0 && n <= 100 })
    ),
    // How often a replica re-reads the operator's `auto` list (a change made through another replica shows up by then).
    routingListRefreshMs: positiveInteger("ROUTING_LIST_REFRESH_MS", 5_000),
    // How often one replica deletes the stored responses (`/v1/responses`, kept 30 days) expired by then; 0: off.
    storedResponsePurgeIntervalSeconds: nonNegativeNumber("STORED_RESPONSE_PURGE_INTERVAL_SECONDS", 3_600)
  }),
  ledger: Config.all({
    // Longer than any request may run: a hold still live after it was left by a crash, and the sweeper releases it.
    holdTtlSeconds: positiveInteger("HOLD_TTL_SECONDS", 900),
    holdSweepIntervalSeconds: nonNegativeNumber("HOLD_SWEEP_INTERVAL_SECONDS", 60),
    // How often one replica reads the treasury's Deposited events and credits them; 0: off.
    fundingScanIntervalSeconds: nonNegativeNumber("FUNDING_SCAN_INTERVAL_SECONDS", 5)
  }),
  points: Config.all({
    // How often one replica reconciles identities' points_balance with the points ledger; 0: off.
    reconcileIntervalSeconds: nonNegativeNumber("POINTS_RECONCILE_INTERVAL_SECONDS", 60)
  })
}).pipe(
  // A replica running some roles only stands beside others: it needs what they share (domain/serviceRoles.ts).
  Config.mapOrFail((config) => {
    const problem = rolesConfigurationProblem(config.roles, {
      databaseUrl: Option.isSome(config.database.url),
      rpcUrl: Option.isSome(config.chain.rpcUrl)
    })
    return problem === undefined ? Either.right(config) : Either.left(ConfigError.InvalidData(["SERVICE_ROLES"], problem))
  })
)

export type AppConfigShape = Config.Config.Success<typeof appConfig>

/**
 * Variables whose names come from data rather than this module (PROVIDERS_FILE's `${NAME}` and `env:` references,
 * the vendors' key variables), read through Config like every setting: each name to its value, or undefined.
 */
export const readVariables = (names: Iterable<string>) =>
  Effect.reduce(names, {} as Record<string, string | undefined>, (acc, name) =>
    Effect.map(Config.option(Config.string(name)), (value) => ({ ...acc, [name]: Option.getOrUndefined(value) }))
  )

export class AppConfig extends Effect.Service<AppConfig>()("AppConfig", {
  effect: appConfig
}) {}
