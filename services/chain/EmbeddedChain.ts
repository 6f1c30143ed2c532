/**
 * The embedded chain for `npm start` with no RPC_URL: anvil on loopback with chain id 8453 and its state under
 * DATA_DIR/chain, the registry deployed on the first run. Its state is written to disk after every confirmed
 * publish, so a CONFIRMED revision can never lose its block to a crash.
 */
import { Context, Effect, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { gunzipSync } from "node:zlib"
import { type Account, type Chain, createPublicClient, createWalletClient, type Hex, http, type PublicClient, type Transport, type WalletClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { defineChain } from "viem/utils"
import { startAnvil } from "./anvil.ts"
import { deployRegistry, type Deployment } from "./deploy.ts"
import type { ChainEndpoint } from "./Registry.ts"

/** The index's genesis: 2025-06-17T00:00:00Z. */
export const GENESIS = new Date("2025-06-17T00:00:00Z")

/**
 * anvil's first development key. It only ever signs on the local chain, where it is both registry admin and
 * publisher; it holds nothing of value anywhere.
 */
const EMBEDDED_PUBLISHER_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

/** Controls only the embedded chain offers: replaying at historical times, and saving state. */
export interface EmbeddedChainControl {
  /** True when this start created the chain (no saved state was found). */
  readonly fresh: boolean
  readonly setNextBlockTimestamp: (at: Date) => Effect.Effect<void, Error>
  /** Moves the chain's clock (new blocks are stamped from here on). */
  readonly setTime: (at: Date) => Effect.Effect<void, Error>
  /** Writes the chain's state to DATA_DIR/chain/state.json atomically. */
  readonly persist: Effect.Effect<void, Error>
}

/** Some(controls) when the service runs its own chain; None against a configured network. */
export class EmbeddedChainTag extends Context.Tag("EmbeddedChain")<EmbeddedChainTag, Option.Option<EmbeddedChainControl>>() {}

const writeAtomically = (file: string, contents: string | Buffer) => {
  const temporary = `${file}.${process.pid}.tmp`
  Fs.writeFileSync(temporary, contents)
  Fs.renameSync(temporary, file)
}

export const acquireEmbeddedChain = (options: { readonly dataDir: string; readonly port: number; readonly chainId: number }) =>
  Effect.gen(function* () {
    const dir = Path.resolve(options.dataDir, "chain")
    Fs.mkdirSync(dir, { recursive: true })
    const statePath = Path.join(dir, "state.json")
    const deploymentPath = Path.join(dir, "deployment.json")
    const fresh = !Fs.existsSync(statePath)
    const started = Date.now()
    const node = yield* startAnvil({
      port: options.port,
      chainId: options.chainId,
      statePath,
      // A new chain starts the day before genesis so the history can be replayed at its own dates.
      ...(fresh ? { genesisTimestamp: Math.floor(GENESIS.getTime() / 1000) - 86_400 } : {})
    })
    const chain = defineChain({
      id: options.chainId,
      name: "embedded",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [node.rpcUrl] } }
    })
    const transport = http(node.rpcUrl)
    const client = createPublicClient({ chain, transport }) as PublicClient
    const account = privateKeyToAccount(EMBEDDED_PUBLISHER_KEY)
    const wallet = createWalletClient({ chain, transport, account }) as WalletClient<Transport, Chain, Account>

    const rpc = (method: string, params: ReadonlyArray<unknown>) =>
      Effect.tryPromise({
        try: () => client.request({ method: method as never, params: params as never }),
        catch: (error) => (error instanceof Error ? error : new Error(String(error)))
      })

    const persist = Effect.flatMap(rpc("anvil_dumpState", []), (dump) =>
      Effect.try({
        try: () => writeAtomically(statePath, gunzipSync(Buffer.from(String(dump).slice(2), "hex"))),
        catch: (error) => (error instanceof Error ? error : new Error(String(error)))
      })
    )

    const saved = Fs.existsSync(deploymentPath)
      ? Option.some(JSON.parse(Fs.readFileSync(deploymentPath, "utf8")) as { registryAddress: Hex; implementationAddress: Hex; deployedBlock: string })
      : Option.none()
    const codeAt = (address: Hex) => Effect.promise(() => client.getCode({ address }))
    let deployment: Deployment
    if (Option.isSome(saved) && ((yield* codeAt(saved.value.registryAddress)) ?? "0x") !== "0x") {
      deployment = { ...saved.value, deployedBlock: BigInt(saved.value.deployedBlock) }
    } else {
      deployment = yield* Effect.tryPromise({
        try: () => deployRegistry(client, wallet, { admin: account.address, publisher: account.address }),
        catch: (error) => (error instanceof Error ? error : new Error(String(error)))
      })
      writeAtomically(
        deploymentPath,
        `${JSON.stringify({ ...deployment, deployedBlock: deployment.deployedBlock.toString() }, null, 2)}\n`
      )
      yield* persist
      yield* Effect.logInfo("registry deployed on the embedded chain").pipe(
        Effect.annotateLogs({ registry: deployment.registryAddress, block: deployment.deployedBlock.toString() })
      )
    }
    yield* Effect.logInfo("embedded chain ready").pipe(
      Effect.annotateLogs({
        rpcUrl: node.rpcUrl,
        chainId: options.chainId,
        registry: deployment.registryAddress,
        state: statePath,
        fresh,
        startedInMs: Date.now() - started
      })
    )

    const endpoint: ChainEndpoint = {
      rpcUrl: node.rpcUrl,
      chainId: options.chainId,
      registryAddress: deployment.registryAddress,
      publisherKey: Option.some(Redacted.make(EMBEDDED_PUBLISHER_KEY)),
      confirmations: 1,
      embedded: true
    }
    const control: EmbeddedChainControl = {
      fresh,
      setNextBlockTimestamp: (at) => Effect.asVoid(rpc("evm_setNextBlockTimestamp", [Math.floor(at.getTime() / 1000)])),
      setTime: (at) => Effect.asVoid(rpc("evm_setTime", [Math.floor(at.getTime() / 1000)])),
      persist
    }
    return { endpoint, control, deployment }
  })
