/**
 * Deploys the registry: the implementation, then an ERC-1967 proxy initialized with its admin and publisher. And
 * the converse check: whether the code at an address is that registry, as compiled in the committed artifact.
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

/** ERC-1967's implementation slot: keccak256("eip1967.proxy.implementation") - 1. */
const IMPLEMENTATION_SLOT: Hex = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"

/**
 * A UUPS implementation's runtime code holds its own address (the `__self` immutable) where the compiled code holds
 * zeros: zero every byte-aligned occurrence of that address so the two compare equal.
 */
const withoutOwnAddress = (code: Hex, address: Hex): string => {
  const hex = code.toLowerCase().slice(2)
  const own = address.toLowerCase().slice(2)
  let masked = ""
  let from = 0
  for (let at = hex.indexOf(own); at >= 0; at = hex.indexOf(own, at + 1)) {
    if (at % 2 !== 0 || at < from) continue
    masked += hex.slice(from, at) + "0".repeat(own.length)
    from = at + own.length
  }
  return masked + hex.slice(from)
}

/**
 * Why the code at `address` is not the artifact's OracleRegistry behind its ERC-1967 proxy, or undefined when it
 * is: the proxy's runtime code exactly, and the implementation in its slot up to that implementation's own address.
 */
export const registryCodeMismatch = async (
  client: PublicClient,
  address: Hex,
  artifact: Artifact = loadArtifact()
): Promise<string | undefined> => {
  const proxyCode = (await client.getCode({ address })) ?? "0x"
  if (proxyCode === "0x") return `there is no contract at ${address}`
  if (proxyCode.toLowerCase() !== artifact.contracts.ERC1967Proxy!.deployedBytecode.toLowerCase()) {
    return `the contract at ${address} is not the registry's ERC1967 proxy`
  }
  const slot = (await client.getStorageAt({ address, slot: IMPLEMENTATION_SLOT })) ?? "0x"
  const implementation = `0x${slot.slice(-40)}` as Hex
  const implementationCode = (await client.getCode({ address: implementation })) ?? "0x"
  const expected = artifact.contracts.OracleRegistry!.deployedBytecode.toLowerCase().slice(2)
  if (withoutOwnAddress(implementationCode, implementation) !== expected) {
    return `the implementation behind it (${implementation}) is not the OracleRegistry of contracts/OracleRegistry.json`
  }
  return undefined
}
