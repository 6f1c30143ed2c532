/**
 * A real anvil node per suite, with viem clients for its funded default accounts, and the registry or the funding
 * contracts deployed with the product's own deployment code.
 */
import { Effect, Exit, Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
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
import { deployFunding, type FundingDeployment, type FundingRoles } from "../../services/chain/funding.ts"
import { freePort } from "./ports.ts"

/** anvil's well-known development keys (mnemonic "test test ... junk"); never hold value. */
export const DEV_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"
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

/** Deploys the CreditToken and the Treasury behind its proxy (sent from the first development account). */
export const deployTestFunding = (chain: TestChain, roles: FundingRoles): Promise<FundingDeployment> =>
  deployFunding(chain.public, chain.wallet(DEV_KEYS[0]) as WalletClient<Transport, Chain, Account>, roles)

/**
 * Writes into `dataDir` a chain/ as a start before the funding contracts left it: anvil's state with the registry
 * deployed, and deployment.json naming only the registry. With `lastBlockAt`, a last block stamped at that instant
 * (Unix seconds), as an interrupted history replay leaves it. Returns the record.
 */
export const saveRegistryOnlyChain = async (
  dataDir: string,
  options: { genesisTimestamp?: number; lastBlockAt?: number } = {}
): Promise<Record<string, string>> => {
  const dir = Path.join(dataDir, "chain")
  Fs.mkdirSync(dir, { recursive: true })
  const scope = Effect.runSync(Scope.make())
  try {
    const node = await Effect.runPromise(
      Scope.extend(
        startAnvil({
          port: await freePort(),
          chainId: 8453,
          statePath: Path.join(dir, "state.json"),
          ...(options.genesisTimestamp === undefined ? {} : { genesisTimestamp: options.genesisTimestamp })
        }),
        scope
      )
    )
    const chain = { ...foundry, id: 8453 }
    const transport = http(node.rpcUrl)
    const client = createPublicClient({ chain, transport }) as PublicClient
    const account = privateKeyToAccount(DEV_KEYS[0])
    const wallet = createWalletClient({ chain, transport, account }) as WalletClient<Transport, Chain, Account>
    const deployment = await deployRegistry(client, wallet, { admin: account.address, publisher: account.address })
    if (options.lastBlockAt !== undefined) {
      const test = createTestClient({ chain, transport, mode: "anvil" })
      await test.setNextBlockTimestamp({ timestamp: BigInt(options.lastBlockAt) })
      await test.mine({ blocks: 1 })
    }
    const record = { ...deployment, deployedBlock: deployment.deployedBlock.toString() }
    Fs.writeFileSync(Path.join(dir, "deployment.json"), `${JSON.stringify(record, null, 2)}\n`)
    return record
  } finally {
    // anvil writes its state file as it stops.
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
