/**
 * Which chain backs the registry: a configured network (RPC_URL, REGISTRY_ADDRESS, CHAIN_ID, a publisher key),
 * or, with no RPC_URL, the embedded anvil chain under DATA_DIR.
 */
import { ConfigError, Effect, Layer, Option, Redacted } from "effect"
import type { Hex } from "viem"
import { AnvilPortInUse } from "../services/chain/anvil.ts"
import { acquireEmbeddedChain, EmbeddedChainTag, ForeignEmbeddedChain } from "../services/chain/EmbeddedChain.ts"
import { ChainEndpointTag, Registry } from "../services/chain/Registry.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { embeddedChainPortInUse, StartupFailure } from "../services/platform/Startup.ts"

const ChainEndpointLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const chain = config.chain
    if (Option.isSome(chain.rpcUrl)) {
      if (Option.isNone(chain.registryAddress)) {
        return yield* Effect.fail(ConfigError.MissingData(["REGISTRY_ADDRESS"], "REGISTRY_ADDRESS is required with RPC_URL"))
      }
      const registryAddress = chain.registryAddress.value.toLowerCase()
      if (!/^0x[0-9a-f]{40}$/.test(registryAddress)) {
        return yield* Effect.fail(ConfigError.InvalidData(["REGISTRY_ADDRESS"], "REGISTRY_ADDRESS must be a 20-byte hex address"))
      }
      yield* Effect.logInfo("using the configured chain").pipe(
        Effect.annotateLogs({ chainId: chain.chainId, registry: registryAddress, canPublish: Option.isSome(chain.publisherPrivateKey) })
      )
      return Layer.mergeAll(
        Layer.succeed(ChainEndpointTag, {
          rpcUrl: Redacted.value(chain.rpcUrl.value),
          chainId: chain.chainId,
          registryAddress: registryAddress as Hex,
          publisherKey: Option.map(chain.publisherPrivateKey, (key) => Redacted.make(Redacted.value(key) as Hex)),
          confirmations: chain.confirmations,
          embedded: false
        }),
        Layer.succeed(EmbeddedChainTag, Option.none())
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
      Layer.succeed(EmbeddedChainTag, Option.some(embedded.control))
    )
  })
)

/** The registry client and the chain it talks to. */
export const ChainLive = Registry.Default.pipe(Layer.provideMerge(ChainEndpointLive), Layer.provideMerge(AppConfig.Default))
