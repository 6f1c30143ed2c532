/**
 * The configuration module: defaults that run everything embedded, validation with a message naming
 * the variable, and secrets that never print.
 */
import { ConfigProvider, Effect, Either, LogLevel, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { appConfig } from "../services/platform/AppConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("AppConfig", () => {
  it("defaults to an embedded, loopback-only service", () => {
    const config = Either.getOrThrow(load({}))
    expect(config.host).toBe("127.0.0.1")
    expect(config.port).toBe(8080)
    expect(config.dataDir).toBe("./.data")
    expect(config.trustProxy).toEqual({ _tag: "None" })
    expect(config.logLevel).toEqual(LogLevel.Info)
    expect(Option.isNone(config.database.url)).toBe(true)
    expect(config.chain.chainId).toBe(8453)
    expect(config.chain.embeddedPort).toBe(8545)
    expect(Option.isNone(config.chain.rpcUrl)).toBe(true)
    expect(config.oracle.priceDataDir).toMatch(/\/data$/)
    expect(config.oracle.priceCardUrls).toEqual([])
    expect(config.oracle.scanIntervalHours).toBe(24)
    expect(config.oracle.rules).toEqual({ seasoningDays: 7, livenessScans: 3, holdThresholdPercent: 30, holdHours: 24 })
  })

  it("reads the price-card sources and the index rules", () => {
    const config = Either.getOrThrow(
      load({
        PRICE_CARD_URLS: " https://cards.example/openai.yaml ,https://cards.example/google.yaml",
        PRICE_SCAN_INTERVAL_HOURS: "6",
        INDEX_SEASONING_DAYS: "14",
        INDEX_HOLD_THRESHOLD_PERCENT: "12.5"
      })
    )
    expect(config.oracle.priceCardUrls).toEqual(["https://cards.example/openai.yaml", "https://cards.example/google.yaml"])
    expect(config.oracle.scanIntervalHours).toBe(6)
    expect(config.oracle.rules.seasoningDays).toBe(14)
    expect(config.oracle.rules.holdThresholdPercent).toBe(12.5)
  })

  it("reads every variable", () => {
    const config = Either.getOrThrow(
      load({
        HOST: "0.0.0.0",
        PORT: "9000",
        DATA_DIR: "/var/lib/cx",
        TRUST_PROXY: "2",
        LOG_LEVEL: "DEBUG",
        LOG_FORMAT: "json",
        DATABASE_URL: "postgres://app:hunter2@db:5432/cx",
        DATABASE_POOL_SIZE: "20",
        RPC_URL: "https://rpc.example/secret-token",
        REGISTRY_ADDRESS: "0x0000000000000000000000000000000000000001",
        CHAIN_ID: "84532",
        PUBLISHER_PRIVATE_KEY: "0xabc",
        EMBEDDED_CHAIN_PORT: "18545"
      })
    )
    expect(config.port).toBe(9000)
    expect(config.trustProxy).toEqual({ _tag: "Hops", hops: 2 })
    expect(config.logLevel).toEqual(LogLevel.Debug)
    expect(config.database.poolSize).toBe(20)
    expect(config.chain.chainId).toBe(84532)
    expect(Option.getOrThrow(config.chain.registryAddress)).toBe("0x0000000000000000000000000000000000000001")
    expect(Redacted.value(Option.getOrThrow(config.database.url))).toBe("postgres://app:hunter2@db:5432/cx")
  })

  it("reads where a configured treasury's deposits start, and refuses a negative block naming the variable", () => {
    expect(Option.isNone(Either.getOrThrow(load({})).chain.treasuryDeployedBlock)).toBe(true)
    expect(Either.getOrThrow(load({ TREASURY_DEPLOYED_BLOCK: "21000000" })).chain.treasuryDeployedBlock).toEqual(Option.some(21000000))
    for (const bad of ["-1", "soon"]) {
      const refused = load({ TREASURY_DEPLOYED_BLOCK: bad })
      expect(Either.isLeft(refused) && String(refused.left)).toMatch(/TREASURY_DEPLOYED_BLOCK/)
    }
  })

  it("reads the credit peg, default 1, and refuses zero or text naming CREDIT_PEG_USD", () => {
    expect(Either.getOrThrow(load({})).exchange.creditPegUsd).toBe("1")
    expect(Either.getOrThrow(load({ CREDIT_PEG_USD: " 0.25 " })).exchange.creditPegUsd).toBe("0.25")
    for (const bad of ["0", "-1", "one"]) {
      const refused = load({ CREDIT_PEG_USD: bad })
      expect(Either.isLeft(refused) && String(refused.left)).toMatch(/CREDIT_PEG_USD/)
    }
  })

  it("reads the disposable e-mail domains file: the bundled list by default, a path, or off when empty", () => {
    const bundled = Either.getOrThrow(load({})).identity.disposableEmailDomainsFile
    expect(Option.getOrThrow(bundled)).toMatch(/\/data\/accounts\/disposable-domains\.txt$/)
    expect(Either.getOrThrow(load({ DISPOSABLE_EMAIL_DOMAINS_FILE: " /etc/cx/disposable.txt " })).identity.disposableEmailDomainsFile).toEqual(
      Option.some("/etc/cx/disposable.txt")
    )
    for (const off of ["", "  "]) {
      expect(Option.isNone(Either.getOrThrow(load({ DISPOSABLE_EMAIL_DOMAINS_FILE: off })).identity.disposableEmailDomainsFile)).toBe(true)
    }
  })

  it("never prints a secret", () => {
    const config = Either.getOrThrow(
      load({ DATABASE_URL: "postgres://app:hunter2@db/cx", PUBLISHER_PRIVATE_KEY: "0xdeadbeef", RPC_URL: "https://x/key123" })
    )
    const printed = `${JSON.stringify(config)} ${String(config.database.url)} ${String(config.chain.publisherPrivateKey)}`
    for (const secret of ["hunter2", "deadbeef", "key123"]) expect(printed).not.toContain(secret)
  })

  it("treats an empty DATABASE_URL as unset", () => {
    expect(Option.isNone(Either.getOrThrow(load({ DATABASE_URL: "" })).database.url)).toBe(true)
  })

  it.each([
    [{ TRUST_PROXY: "sometimes" }, "TRUST_PROXY"],
    [{ PORT: "70000" }, "PORT"],
    [{ PORT: "eighty" }, "PORT"],
    [{ LOG_FORMAT: "xml" }, "LOG_FORMAT"],
    [{ DATABASE_POOL_SIZE: "0" }, "DATABASE_POOL_SIZE"],
    [{ PRICE_CARD_URLS: "ftp://cards.example/a.yaml" }, "PRICE_CARD_URLS"],
    [{ INDEX_HOLD_HOURS: "-1" }, "INDEX_HOLD_HOURS"]
  ])("rejects %o naming the variable", (env, variable) => {
    const result = load(env)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(String(result.left)).toContain(variable)
  })
})
