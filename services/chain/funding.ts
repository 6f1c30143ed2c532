/**
 * On-chain funding (DESIGN.md section 11): the Treasury, behind its ERC-1967 proxy, holding the credit token; and,
 * on the embedded chain only, the test CreditToken it holds. Typed ABIs for viem, their deployment, the check that
 * saved addresses still hold our code, and the tag through which the rest of the service finds them.
 */
import { Context, type Option, type Redacted } from "effect"
import { type Hex, parseAbi, type PublicClient } from "viem"
import { type Artifact, loadArtifact } from "../../contracts/compile.ts"
import { deployBehindProxy, deployContract, type DeployWallet, plainCodeMismatch, proxiedCodeMismatch } from "./deploy.ts"

/** Where deposits go and who sends withdrawals, on the chain the registry uses. */
export interface FundingContracts {
  readonly chainId: number
  /** The ERC-20 the treasury holds (the CreditToken on the embedded chain). */
  readonly token: Hex
  /** The Treasury proxy: `approve` it, then `deposit(accountRef, amount)`. */
  readonly treasury: Hex
  /** The token's decimals, as it reports them. */
  readonly decimals: number
  /** The block the treasury was deployed in, where a scan for `Deposited` can start; None on a configured network. */
  readonly treasuryDeployedBlock: Option.Option<bigint>
  /** Holds the treasury's RELAYER_ROLE; without it withdrawals cannot be sent. */
  readonly relayerKey: Option.Option<Redacted.Redacted<Hex>>
  /** Holds the CreditToken's MINTER_ROLE (the faucet); only on the embedded chain. */
  readonly minterKey: Option.Option<Redacted.Redacted<Hex>>
}

/** Some(contracts) on the embedded chain and on a network configured with TREASURY_ADDRESS; None otherwise. */
export class FundingContractsTag extends Context.Tag("FundingContracts")<FundingContractsTag, Option.Option<FundingContracts>>() {}

/**
 * The errors an ERC-20 of OpenZeppelin 5 reverts with. SafeERC20 bubbles them up through the treasury, so its ABI
 * lists them too and viem decodes, say, a deposit without allowance as ERC20InsufficientAllowance.
 */
const erc20Errors = [
  "error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "error ERC20InvalidApprover(address approver)",
  "error ERC20InvalidReceiver(address receiver)",
  "error ERC20InvalidSender(address sender)",
  "error ERC20InvalidSpender(address spender)"
] as const

/** contracts/Treasury.sol's ABI (the artifact's, checked by test/funding-contracts.test.ts) plus `erc20Errors`. */
export const treasuryAbi = parseAbi([
  "constructor()",
  "error AccessControlBadConfirmation()",
  "error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)",
  "error AddressEmptyCode(address target)",
  "error ERC1967InvalidImplementation(address implementation)",
  "error ERC1967NonPayable()",
  "error FailedCall()",
  "error InsufficientTreasuryBalance(uint256 balance, uint256 amount)",
  "error InvalidInitialization()",
  "error InvalidToken(address token)",
  "error NotInitializing()",
  "error SafeERC20FailedOperation(address token)",
  "error UUPSUnauthorizedCallContext()",
  "error UUPSUnsupportedProxiableUUID(bytes32 slot)",
  "error WithdrawalRefUsed(bytes32 withdrawalRef)",
  "error ZeroAccountRef()",
  "error ZeroAddress()",
  "error ZeroAmount()",
  "error ZeroWithdrawalRef()",
  "event Deposited(bytes32 indexed accountRef, address indexed from, uint256 amount)",
  "event Initialized(uint64 version)",
  "event RoleAdminChanged(bytes32 indexed role, bytes32 indexed previousAdminRole, bytes32 indexed newAdminRole)",
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
  "event Upgraded(address indexed implementation)",
  "event Withdrawn(bytes32 indexed withdrawalRef, address indexed to, uint256 amount)",
  "function DEFAULT_ADMIN_ROLE() view returns (bytes32)",
  "function RELAYER_ROLE() view returns (bytes32)",
  "function UPGRADER_ROLE() view returns (bytes32)",
  "function UPGRADE_INTERFACE_VERSION() view returns (string)",
  "function deposit(bytes32 accountRef, uint256 amount)",
  "function getRoleAdmin(bytes32 role) view returns (bytes32)",
  "function grantRole(bytes32 role, address account)",
  "function hasRole(bytes32 role, address account) view returns (bool)",
  "function initialize(address token_, address admin, address relayer)",
  "function isWithdrawalRefUsed(bytes32 withdrawalRef) view returns (bool)",
  "function proxiableUUID() view returns (bytes32)",
  "function renounceRole(bytes32 role, address callerConfirmation)",
  "function revokeRole(bytes32 role, address account)",
  "function supportsInterface(bytes4 interfaceId) view returns (bool)",
  "function token() view returns (address)",
  "function upgradeToAndCall(address newImplementation, bytes data) payable",
  "function version() pure returns (string)",
  "function withdraw(address to, uint256 amount, bytes32 withdrawalRef)",
  ...erc20Errors
])

/** contracts/CreditToken.sol's ABI (the artifact's, checked by test/funding-contracts.test.ts). */
export const creditTokenAbi = parseAbi([
  "constructor(address admin, address minter)",
  "error AccessControlBadConfirmation()",
  "error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)",
  ...erc20Errors,
  "event Approval(address indexed owner, address indexed spender, uint256 value)",
  "event RoleAdminChanged(bytes32 indexed role, bytes32 indexed previousAdminRole, bytes32 indexed newAdminRole)",
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "function DEFAULT_ADMIN_ROLE() view returns (bytes32)",
  "function MINTER_ROLE() view returns (bytes32)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function approve(address spender, uint256 value) returns (bool)",
  "function balanceOf(address account) view returns (uint256)",
  "function decimals() view returns (uint8)",
  "function getRoleAdmin(bytes32 role) view returns (bytes32)",
  "function grantRole(bytes32 role, address account)",
  "function hasRole(bytes32 role, address account) view returns (bool)",
  "function mint(address to, uint256 amount)",
  "function name() view returns (string)",
  "function renounceRole(bytes32 role, address callerConfirmation)",
  "function revokeRole(bytes32 role, address account)",
  "function supportsInterface(bytes4 interfaceId) view returns (bool)",
  "function symbol() view returns (string)",
  "function totalSupply() view returns (uint256)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function transferFrom(address from, address to, uint256 value) returns (bool)"
])

/** The addresses and blocks of one funding deployment; DATA_DIR/chain/deployment.json keeps them. */
export interface FundingDeployment {
  readonly treasuryAddress: Hex
  readonly treasuryImplementationAddress: Hex
  readonly treasuryDeployedBlock: bigint
  readonly creditTokenAddress: Hex
  readonly creditTokenDeployedBlock: bigint
}

export interface FundingRoles {
  /** DEFAULT_ADMIN_ROLE of both contracts and the treasury's UPGRADER_ROLE. */
  readonly admin: Hex
  readonly relayer: Hex
  readonly minter: Hex
}

/** Deploys the CreditToken, then the Treasury behind its proxy, initialized to hold that token. */
export const deployFunding = async (
  client: PublicClient,
  wallet: DeployWallet,
  roles: FundingRoles,
  artifact: Artifact = loadArtifact("funding")
): Promise<FundingDeployment> => {
  const token = await deployContract(client, wallet, artifact, "CreditToken", [roles.admin, roles.minter])
  const treasury = await deployBehindProxy(client, wallet, artifact, "Treasury", [token.address, roles.admin, roles.relayer])
  return {
    treasuryAddress: treasury.proxy.address,
    treasuryImplementationAddress: treasury.implementation.address,
    treasuryDeployedBlock: treasury.proxy.block,
    creditTokenAddress: token.address,
    creditTokenDeployedBlock: token.block
  }
}

/**
 * Why the saved addresses are not our funding contracts, or undefined when they are: the Treasury behind its proxy
 * (up to the implementation's own address), the CreditToken exactly, and the treasury holding that token.
 */
export const fundingCodeMismatch = async (
  client: PublicClient,
  saved: { readonly treasuryAddress: Hex; readonly creditTokenAddress: Hex },
  artifact: Artifact = loadArtifact("funding")
): Promise<string | undefined> => {
  const treasury = await proxiedCodeMismatch(
    client,
    saved.treasuryAddress,
    { artifact: "funding", implementation: "Treasury", label: "treasury" },
    artifact
  )
  if (treasury !== undefined) return `the treasury: ${treasury}`
  const token = await plainCodeMismatch(client, saved.creditTokenAddress, { artifact: "funding", name: "CreditToken" }, artifact)
  if (token !== undefined) return `the credit token: ${token}`
  const held = await client.readContract({ address: saved.treasuryAddress, abi: treasuryAbi, functionName: "token" })
  if (held.toLowerCase() !== saved.creditTokenAddress.toLowerCase()) {
    return `the treasury at ${saved.treasuryAddress} holds the token ${held}, not ${saved.creditTokenAddress}`
  }
  return undefined
}
