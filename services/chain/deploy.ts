/**
 * Deploys the registry: the implementation, then an ERC-1967 proxy initialized with its admin and publisher.
 */
import { type Abi, type Account, type Chain, encodeFunctionData, type Hex, type PublicClient, type Transport, type WalletClient } from "viem"
import { type Artifact, loadArtifact } from "../../contracts/compile.ts"

export interface Deployment {
  readonly registryAddress: Hex
  readonly implementationAddress: Hex
  readonly deployedBlock: bigint
}

export const deployRegistry = async (
  client: PublicClient,
  wallet: WalletClient<Transport, Chain, Account>,
  roles: { readonly admin: Hex; readonly publisher: Hex },
  artifact: Artifact = loadArtifact()
): Promise<Deployment> => {
  const registry = artifact.contracts.OracleRegistry!
  const proxy = artifact.contracts.ERC1967Proxy!
  const deploy = async (abi: Abi, bytecode: Hex, args: ReadonlyArray<unknown>) => {
    const hash = await wallet.deployContract({ abi, bytecode, args, account: wallet.account, chain: wallet.chain })
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deployment ${hash} failed`)
    return { address: receipt.contractAddress.toLowerCase() as Hex, block: receipt.blockNumber }
  }
  const abi = registry.abi as unknown as Abi
  const implementation = await deploy(abi, registry.bytecode, [])
  const initialize = encodeFunctionData({ abi, functionName: "initialize", args: [roles.admin, roles.publisher] })
  const deployed = await deploy(proxy.abi as unknown as Abi, proxy.bytecode, [implementation.address, initialize])
  return { registryAddress: deployed.address, implementationAddress: implementation.address, deployedBlock: deployed.block }
}
