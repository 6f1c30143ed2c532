/**
 * Deploys contracts from the committed artifacts: plain ones, and UUPS implementations behind an ERC-1967 proxy
 * initialized in the same transaction. And the converse checks: whether the code at an address is what an artifact
 * compiled to, so a saved deployment is only reattached to our own contracts.
 */
import { type Abi, type Account, type Chain, encodeFunctionData, type Hex, type PublicClient, type Transport, type WalletClient } from "viem"
import { type Artifact, type ArtifactName, ARTIFACTS, loadArtifact } from "../../contracts/compile.ts"

export type DeployWallet = WalletClient<Transport, Chain, Account>

export interface Deployment {
  readonly registryAddress: Hex
  readonly implementationAddress: Hex
  readonly deployedBlock: bigint
}

export interface DeployedContract {
  readonly address: Hex
  readonly block: bigint
}

/** Deploys `name` from `artifact` and waits for its receipt; the address is lower-case. */
export const deployContract = async (
  client: PublicClient,
  wallet: DeployWallet,
  artifact: Artifact,
  name: string,
  args: ReadonlyArray<unknown>
): Promise<DeployedContract> => {
  const contract = artifact.contracts[name]!
  const hash = await wallet.deployContract({
    abi: contract.abi as unknown as Abi,
    bytecode: contract.bytecode,
    args,
    account: wallet.account,
    chain: wallet.chain
  })
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deployment of ${name} (${hash}) failed`)
  return { address: receipt.contractAddress.toLowerCase() as Hex, block: receipt.blockNumber }
}

/** Deploys the implementation `name`, then the artifact's ERC1967Proxy in front of it, calling `initialize(args)`. */
export const deployBehindProxy = async (
  client: PublicClient,
  wallet: DeployWallet,
  artifact: Artifact,
  name: string,
  initializeArgs: ReadonlyArray<unknown>
): Promise<{ readonly proxy: DeployedContract; readonly implementation: DeployedContract }> => {
  const implementation = await deployContract(client, wallet, artifact, name, [])
  const initialize = encodeFunctionData({
    abi: artifact.contracts[name]!.abi as unknown as Abi,
    functionName: "initialize",
    args: initializeArgs
  })
  const proxy = await deployContract(client, wallet, artifact, "ERC1967Proxy", [implementation.address, initialize])
  return { proxy, implementation }
}

export const deployRegistry = async (
  client: PublicClient,
  wallet: DeployWallet,
  roles: { readonly admin: Hex; readonly publisher: Hex },
  artifact: Artifact = loadArtifact()
): Promise<Deployment> => {
  const { proxy, implementation } = await deployBehindProxy(client, wallet, artifact, "OracleRegistry", [roles.admin, roles.publisher])
  return { registryAddress: proxy.address, implementationAddress: implementation.address, deployedBlock: proxy.block }
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

/** What a proxied deployment's addresses must hold, and how its refusals name it. */
export interface ProxiedContract {
  /** The committed artifact holding the implementation and its ERC1967Proxy. */
  readonly artifact: ArtifactName
  /** The implementation's contract name in that artifact. */
  readonly implementation: string
  /** How a refusal names the deployment ("registry", "treasury"). */
  readonly label: string
}

/**
 * Why the code at `address` is not the artifact's implementation behind its ERC-1967 proxy, or undefined when it
 * is: the proxy's runtime code exactly, and the implementation in its slot up to that implementation's own address.
 */
export const proxiedCodeMismatch = async (
  client: PublicClient,
  address: Hex,
  expected: ProxiedContract,
  artifact: Artifact = loadArtifact(expected.artifact)
): Promise<string | undefined> => {
  const proxyCode = (await client.getCode({ address })) ?? "0x"
  if (proxyCode === "0x") return `there is no contract at ${address}`
  if (proxyCode.toLowerCase() !== artifact.contracts.ERC1967Proxy!.deployedBytecode.toLowerCase()) {
    return `the contract at ${address} is not the ${expected.label}'s ERC1967 proxy`
  }
  const slot = (await client.getStorageAt({ address, slot: IMPLEMENTATION_SLOT })) ?? "0x"
  const implementation = `0x${slot.slice(-40)}` as Hex
  const implementationCode = (await client.getCode({ address: implementation })) ?? "0x"
  const code = artifact.contracts[expected.implementation]!.deployedBytecode.toLowerCase().slice(2)
  if (withoutOwnAddress(implementationCode, implementation) !== code) {
    return `the implementation behind it (${implementation}) is not the ${expected.implementation} of contracts/${ARTIFACTS[expected.artifact].file}`
  }
  return undefined
}

/** Why the code at `address` is not the artifact's contract `name` (deployed without a proxy), or undefined. */
export const plainCodeMismatch = async (
  client: PublicClient,
  address: Hex,
  expected: { readonly artifact: ArtifactName; readonly name: string },
  artifact: Artifact = loadArtifact(expected.artifact)
): Promise<string | undefined> => {
  const code = (await client.getCode({ address })) ?? "0x"
  if (code === "0x") return `there is no contract at ${address}`
  if (code.toLowerCase() !== artifact.contracts[expected.name]!.deployedBytecode.toLowerCase()) {
    return `the contract at ${address} is not the ${expected.name} of contracts/${ARTIFACTS[expected.artifact].file}`
  }
  return undefined
}

/** Why the code at `address` is not the artifact's OracleRegistry behind its ERC-1967 proxy, or undefined. */
export const registryCodeMismatch = (client: PublicClient, address: Hex, artifact: Artifact = loadArtifact()) =>
  proxiedCodeMismatch(client, address, { artifact: "registry", implementation: "OracleRegistry", label: "registry" }, artifact)
