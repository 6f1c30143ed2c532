/**
 * Composition by service role (SERVICE_ROLES, DESIGN.md section 14; domain/serviceRoles.ts): what a replica builds
 * for the roles it runs, and the light stand-ins it builds for the parts of the roles it does not. The typed HttpApi
 * needs a handler for every group, so a group of a role not run keeps its handlers over stand-ins that are never
 * called (src/http/serviceRoles.ts answers its routes 404 before the router); the heavy parts behind them (the chain
 * client, the history replay, the oracle's schedule, the background jobs, the page build) are never started.
 */
import { Effect, Layer, Option } from "effect"
import type { Hex, PublicClient } from "viem"
import { rolesNeedChain, runsRole, type ServiceRole } from "../domain/serviceRoles.ts"
import { EmbeddedChainTag } from "../services/chain/EmbeddedChain.ts"
import { FundingContractsTag } from "../services/chain/funding.ts"
import { ChainEndpointTag, ChainFailure, type ChainEndpoint, Registry } from "../services/chain/Registry.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { WebPages } from "../src/http/WebPages.ts"
import { ChainLive } from "./Chain.ts"

/**
 * `layer` when this replica runs `role`, else nothing: for the layers that only start background work (the jobs, the
 * oracle's schedule), whose absence no other layer notices.
 */
export const whenRole = <E, R>(role: ServiceRole, layer: Layer.Layer<never, E, R>): Layer.Layer<never, E, R | AppConfig> =>
  Layer.unwrapEffect(Effect.map(AppConfig, (config) => (runsRole(config.roles, role) ? layer : Layer.empty)))

const NO_CHAIN_MESSAGE = "this replica does not run the chain client (SERVICE_ROLES runs the exchange only)"

/** Anything reading the client of a replica without a chain fails loudly (a defect: no route of its roles does). */
const absentClient = new Proxy({} as PublicClient, {
  get: (_, property) => {
    if (typeof property === "symbol" || property === "then") return undefined
    throw new Error(`${NO_CHAIN_MESSAGE}: the chain client's ${property} was read`)
  }
})

/**
 * No chain at all: the registry as a client that answers every call `chain_unavailable` without a connection, no
 * funding contracts, no embedded chain. What an exchange-only replica builds the chain's dependants over (the
 * publisher, the funding reads, the contract metadata), none of which its routes call.
 */
export const DetachedChainLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    const registryAddress = Option.getOrElse(config.chain.registryAddress, () => "0x0000000000000000000000000000000000000000").toLowerCase() as Hex
    const endpoint: ChainEndpoint = {
      rpcUrl: "",
      chainId: config.chain.chainId,
      registryAddress,
      publisherKey: Option.none(),
      confirmations: config.chain.confirmations,
      embedded: false
    }
    const unavailable = new ChainFailure({ reason: "chain_unavailable", message: NO_CHAIN_MESSAGE })
    return Layer.mergeAll(
      Layer.succeed(
        Registry,
        Registry.make({
          endpoint,
          client: absentClient,
          lastRevisionVersion: Effect.fail(unavailable),
          getRevision: () => Effect.fail(unavailable),
          deployedCodeHash: Effect.fail(unavailable),
          latestBlock: Effect.fail(unavailable),
          publish: () => Effect.fail(unavailable),
          awaitConfirmation: () => Effect.fail(unavailable),
          receiptOf: () => Effect.fail(unavailable)
        })
      ),
      Layer.succeed(ChainEndpointTag, endpoint),
      Layer.succeed(EmbeddedChainTag, Option.none()),
      Layer.succeed(FundingContractsTag, Option.none())
    )
  })
).pipe(Layer.provideMerge(AppConfig.Default))

/** The chain this replica's roles need: the configured or embedded one (layers/Chain.ts), or none (exchange only). */
export const ChainForRolesLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => (rolesNeedChain(config.roles) ? ChainLive : DetachedChainLive))
).pipe(Layer.provideMerge(AppConfig.Default))

const notServed = (what: string) => Effect.dieMessage(`this replica does not run the web role (SERVICE_ROLES): ${what} is not served here`)

/** Pages not built: the web role's routes answer 404 before their handlers on a replica that does not run it. */
const UnservedWebPages = Layer.succeed(
  WebPages,
  WebPages.make({
    manifest: undefined as never,
    publicPage: () => notServed("a public page"),
    sitemap: () => notServed("the sitemap"),
    robots: () => {
      throw new Error("this replica does not run the web role (SERVICE_ROLES): robots.txt is not served here")
    },
    console: () => {
      throw new Error("this replica does not run the web role (SERVICE_ROLES): the console is not served here")
    },
    asset: () => notServed("an asset")
  })
)

/** The web pages (built from web/ at start) when this replica runs the web role; else stand-ins never called. */
export const WebPagesForRolesLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => (runsRole(config.roles, "web") ? WebPages.Default : UnservedWebPages))
)
