/**
 * Which chain backs the registry and the funding contracts: a configured network (RPC_URL, REGISTRY_ADDRESS,
 * CHAIN_ID, a publisher key; TREASURY_ADDRESS, CREDIT_TOKEN_ADDRESS, a relayer key), or, with no RPC_URL, the
 * embedded anvil chain under DATA_DIR.
 */
import { ConfigError, Effect, Layer, Option, Redacted } from "effect"
import { createPublicClient, type Hex, http } from "viem"
import { AnvilPortInUse } from "../services/chain/anvil.ts"
import { acquireEmbeddedChain, EmbeddedChainTag, ForeignEmbeddedChain } from "../services/chain/EmbeddedChain.ts"
import { creditTokenAbi, type FundingContracts, FundingContractsTag, treasuryAbi } from "../services/chain/funding.ts"
import { ChainEndpointTag, Registry } from "../services/chain/Registry.ts"
import { AppConfig, type AppConfigShape } from "../services/platform/AppConfig.ts"
import { embeddedChainPortInUse, StartupFailure } from "../services/platform/Startup.ts"

const address = (name: string, value: string) => {
  const lower = value.toLowerCase()
  return /^0x[0-9a-f]{40}$/.test(lower)
    ? Effect.succeed(lower as Hex)
    : Effect.fail(ConfigError.InvalidData([name], `${name} must be a 20-byte hex address`))
}

/**
 * The funding contracts of a configured network: None without TREASURY_ADDRESS (the service then only anchors the
 * index). The treasury is asked once which token it holds and the token its decimals, so a wrong pair of addresses
 * stops the start instead of the first deposit.
 */
const configuredFunding = (chain: AppConfigShape["chain"], rpcUrl: string) =>
  Effect.gen(function* () {
    if (Option.isNone(chain.treasuryAddress) && Option.isNone(chain.creditTokenAddress)) return Option.none<FundingContracts>()
    if (Option.isNone(chain.treasuryAddress) || Option.isNone(chain.creditTokenAddress)) {
      const missing = Option.isNone(chain.treasuryAddress) ? "TREASURY_ADDRESS" : "CREDIT_TOKEN_ADDRESS"
      return yield* Effect.fail(
        ConfigError.MissingData([missing], "TREASURY_ADDRESS and CREDIT_TOKEN_ADDRESS are set together, or neither")
      )
    }
    const treasury = yield* address("TREASURY_ADDRESS", chain.treasuryAddress.value)
    const token = yield* address("CREDIT_TOKEN_ADDRESS", chain.creditTokenAddress.value)
    if (Option.isSome(chain.relayerPrivateKey) && !/^0x[0-9a-fA-F]{64}$/.test(Redacted.value(chain.relayerPrivateKey.value))) {
      return yield* Effect.fail(ConfigError.InvalidData(["RELAYER_PRIVATE_KEY"], "RELAYER_PRIVATE_KEY must be a 32-byte hex key"))
    }
    const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) })
    const read = <A>(what: string, call: () => Promise<A>) =>
      Effect.tryPromise({
        try: call,
        catch: (error) =>
          new StartupFailure({
            message: `could not read ${what} on RPC_URL: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`
          })
      })
    const held = yield* read(`the token of the treasury at TREASURY_ADDRESS ${treasury}`, () =>
      client.readContract({ address: treasury, abi: treasuryAbi, functionName: "token" })
    )
    if (held.toLowerCase() !== token) {
      return yield* new StartupFailure({
        message: `the treasury at TREASURY_ADDRESS ${treasury} holds the token ${held.toLowerCase()}, not CREDIT_TOKEN_ADDRESS ${token}`
      })
    }
    const decimals = yield* read(`the decimals of the token at CREDIT_TOKEN_ADDRESS ${token}`, () =>
      client.readContract({ address: token, abi: creditTokenAbi, functionName: "decimals" })
    )
    return Option.some<FundingContracts>({
      chainId: chain.chainId,
      token,
      treasury,
      decimals,
      treasuryDeployedBlock: Option.map(chain.treasuryDeployedBlock, BigInt),
      relayerKey: Option.map(chain.relayerPrivateKey, (key) => Redacted.make(Redacted.value(key) as Hex)),
      minterKey: Option.none()
    })
  })

const ChainEndpointLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const chain = config.chain
    if (Option.isSome(chain.rpcUrl)) {
      if (Option.isNone(chain.registryAddress)) {
        return yield* Effect.fail(ConfigError.MissingData(["REGISTRY_ADDRESS"], "REGISTRY_ADDRESS is required with RPC_URL"))
      }
      const registryAddress = yield* address("REGISTRY_ADDRESS", chain.registryAddress.value)
      const rpcUrl = Redacted.value(chain.rpcUrl.value)
      const funding = yield* configuredFunding(chain, rpcUrl)
      yield* Effect.logInfo("using the configured chain").pipe(
        Effect.annotateLogs({
          chainId: chain.chainId,
          registry: registryAddress,
          canPublish: Option.isSome(chain.publisherPrivateKey),
          treasury: Option.match(funding, { onNone: () => "none", onSome: (f) => f.treasury }),
          canWithdraw: Option.isSome(chain.relayerPrivateKey)
        })
      )
      return Layer.mergeAll(
        Layer.succeed(ChainEndpointTag, {
          rpcUrl,
          chainId: chain.chainId,
          registryAddress,
          publisherKey: Option.map(chain.publisherPrivateKey, (key) => Redacted.make(Redacted.value(key) as Hex)),
          confirmations: chain.confirmations,
          embedded: false
        }),
        Layer.succeed(EmbeddedChainTag, Option.none()),
        Layer.succeed(FundingContractsTag, funding)
      )
    }
    const embedded = yield* acquireEmbeddedChain({ dataDir: config.dataDir, port: chain.embeddedPort, chainId: chain.chainId }).pipe(
      Effect.mapError((error) =>
        error instanceof AnvilPortInUse
          ? embeddedChainPortInUse(chain.embeddedPort)
          : error instanceof ForeignEmbeddedChain
            ? new StartupFailure({ message: error.message })
            : new StartupFailure({ message: `the embedded chain did not start: ${error.message}` })
      )
    )
    return Layer.mergeAll(
      Layer.succeed(ChainEndpointTag, embedded.endpoint),
      Layer.succeed(EmbeddedChainTag, Option.some(embedded.control)),
      Layer.succeed(FundingContractsTag, Option.some(embedded.fundingContracts))
    )
  })
)

/** The registry client, the funding contracts' addresses, and the chain they live on. */
export const ChainLive = Registry.Default.pipe(Layer.provideMerge(ChainEndpointLive), Layer.provideMerge(AppConfig.Default))
