/**
 * A real anvil node per suite, with viem clients for its funded default accounts, and the registry deployed
 * behind its proxy.
 */
import { Effect, Exit, Scope } from "effect"
import {
  type Abi,
  type Account,
  type Chain,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hex,
  type Transport,
  http,
  type PublicClient,
  type TestClient,
  type WalletClient
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { foundry } from "viem/chains"
import { type Artifact, loadArtifact } from "../../contracts/compile.ts"
import { startAnvil } from "../../services/chain/anvil.ts"
import { deployRegistry } from "../../services/chain/deploy.ts"
import { freePort } from "./server.ts"

/** anvil's well-known development keys (mnemonic "test test ... junk"); never hold value. */
export const DEV_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdf443a6"
] as const satisfies ReadonlyArray<Hex>

export interface TestChain {
  readonly rpcUrl: string
  readonly chainId: number
  readonly public: PublicClient
  readonly test: TestClient
  readonly wallet: (key: Hex) => WalletClient
  readonly close: () => Promise<void>
}

export const startTestChain = async (options: { genesisTimestamp?: number; chainId?: number } = {}): Promise<TestChain> => {
  const chainId = options.chainId ?? 8453
  const port = await freePort()
  const scope = Effect.runSync(Scope.make())
  const node = await Effect.runPromise(
    Scope.extend(
      startAnvil({ port, chainId, ...(options.genesisTimestamp === undefined ? {} : { genesisTimestamp: options.genesisTimestamp }) }),
      scope
    )
  )
  const chain = { ...foundry, id: chainId }
  const transport = http(node.rpcUrl)
  return {
    rpcUrl: node.rpcUrl,
    chainId,
    public: createPublicClient({ chain, transport }) as PublicClient,
    test: createTestClient({ chain, transport, mode: "anvil" }) as unknown as TestClient,
    wallet: (key) => createWalletClient({ chain, transport, account: privateKeyToAccount(key) }),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Deploys the registry behind its proxy with the product's own deployment code; returns the proxy address. */
export const deployTestRegistry = async (
  chain: TestChain,
  options: { admin: Hex; publisher: Hex; artifact?: Artifact }
): Promise<{ proxy: Hex; implementation: Hex; abi: Abi }> => {
  const artifact = options.artifact ?? loadArtifact()
  const deployment = await deployRegistry(
    chain.public,
    chain.wallet(DEV_KEYS[0]) as WalletClient<Transport, Chain, Account>,
    { admin: options.admin, publisher: options.publisher },
    artifact
  )
  return {
    proxy: deployment.registryAddress,
    implementation: deployment.implementationAddress,
    abi: artifact.contracts.OracleRegistry!.abi as unknown as Abi
  }
}
