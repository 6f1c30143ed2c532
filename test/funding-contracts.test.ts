/**
 * The funding contracts (issue 9 item 6, DESIGN.md section 11) on a real anvil node: the CreditToken's faucet role,
 * deposits into the Treasury and its `Deposited` event, withdrawals by the relayer only and once per reference, and
 * the upgrade role. Then the embedded chain: deployed next to the registry on a first start, recorded in
 * deployment.json, reattached without redeploying, added to a DATA_DIR saved before they existed; and the configured
 * network's TREASURY_ADDRESS/CREDIT_TOKEN_ADDRESS.
 */
import { Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import {
  type Abi,
  type Account,
  BaseError,
  type Chain,
  ContractFunctionRevertedError,
  createPublicClient,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  type PublicClient,
  stringToBytes,
  type Transport,
  type WalletClient,
  zeroHash
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { foundry } from "viem/chains"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadArtifact } from "../contracts/compile.ts"
import { ChainLive } from "../layers/Chain.ts"
import { deployContract, proxiedCodeMismatch } from "../services/chain/deploy.ts"
import { GENESIS } from "../services/chain/EmbeddedChain.ts"
import {
  creditTokenAbi,
  type FundingContracts,
  FundingContractsTag,
  type FundingDeployment,
  fundingCodeMismatch,
  treasuryAbi
} from "../services/chain/funding.ts"
import { ChainEndpointTag } from "../services/chain/Registry.ts"
import {
  DEV_KEYS,
  deployTestFunding,
  deployTestRegistry,
  saveRegistryOnlyChain,
  startTestChain,
  type TestChain
} from "./support/chain.ts"
import { startLayer } from "./support/harness.ts"
import { freePort } from "./support/server.ts"

const admin = privateKeyToAccount(DEV_KEYS[0])
const relayer = privateKeyToAccount(DEV_KEYS[1])
const minter = privateKeyToAccount(DEV_KEYS[2])
const userKey = generatePrivateKey()
const user = privateKeyToAccount(userKey)
const ref = (text: string) => keccak256(stringToBytes(text))
const credits = (n: bigint) => n * 10n ** 18n

const cleanups: Array<() => Promise<unknown> | void> = []

let chain: TestChain
let funding: FundingDeployment

beforeAll(async () => {
  chain = await startTestChain()
  cleanups.push(() => chain.close())
  await chain.test.setBalance({ address: user.address, value: 10n ** 20n })
  funding = await deployTestFunding(chain, { admin: admin.address, relayer: relayer.address, minter: minter.address })
}, 60_000)

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const revertName = async (promise: Promise<unknown>): Promise<string | undefined> => {
  try {
    await promise
    return undefined
  } catch (error) {
    if (error instanceof BaseError) {
      const revert = error.walk((e) => e instanceof ContractFunctionRevertedError)
      if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName ?? revert.reason ?? "reverted"
    }
    throw error
  }
}

/** Simulates `functionName` from `key`'s account, then sends it; returns the receipt. */
const send = async (
  key: Hex,
  contract: { address: Hex; abi: Abi },
  functionName: string,
  args: ReadonlyArray<unknown>
) => {
  const { request } = await chain.public.simulateContract({ ...contract, functionName, args, account: privateKeyToAccount(key) })
  const wallet = chain.wallet(key)
  const hash = await wallet.writeContract(request as Parameters<typeof wallet.writeContract>[0])
  const receipt = await chain.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  expect(receipt.status).toBe("success")
  return receipt
}

const treasury = () => ({ address: funding.treasuryAddress, abi: treasuryAbi as Abi })
const token = () => ({ address: funding.creditTokenAddress, abi: creditTokenAbi as Abi })
const balanceOf = (address: Hex) =>
  chain.public.readContract({ address: funding.creditTokenAddress, abi: creditTokenAbi, functionName: "balanceOf", args: [address] })
const simulate = (key: Hex, contract: { address: Hex; abi: Abi }, functionName: string, args: ReadonlyArray<unknown>) =>
  chain.public.simulateContract({ ...contract, functionName, args, account: privateKeyToAccount(key) })

describe("the CreditToken", () => {
  it("is Compute Credit (CCR) with 18 decimals, minted only by its minter", async () => {
    const read = (functionName: "name" | "symbol" | "decimals") =>
      chain.public.readContract({ address: funding.creditTokenAddress, abi: creditTokenAbi, functionName })
    expect([await read("name"), await read("symbol"), await read("decimals")]).toEqual(["Compute Credit", "CCR", 18])
    expect(await revertName(simulate(userKey, token(), "mint", [user.address, credits(1n)]))).toBe("AccessControlUnauthorizedAccount")
    // The admin may grant the role, but does not hold it.
    expect(await revertName(simulate(DEV_KEYS[0], token(), "mint", [user.address, credits(1n)]))).toBe("AccessControlUnauthorizedAccount")
    await send(DEV_KEYS[2], token(), "mint", [user.address, credits(100n)])
    expect(await balanceOf(user.address)).toBe(credits(100n))
  })
})

describe("the Treasury", () => {
  it("holds the token it was initialized with, and refuses to be initialized again", async () => {
    const held = await chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "token" })
    expect(held.toLowerCase()).toBe(funding.creditTokenAddress)
    expect(await chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "version" })).toBe("1.0.0")
    expect(
      await revertName(simulate(DEV_KEYS[0], treasury(), "initialize", [funding.creditTokenAddress, user.address, user.address]))
    ).toBe("InvalidInitialization")
  })

  it("takes a deposit after approve: the tokens move and Deposited names the account reference, the sender and the amount", async () => {
    const before = { user: await balanceOf(user.address), treasury: await balanceOf(funding.treasuryAddress) }
    await send(userKey, token(), "approve", [funding.treasuryAddress, credits(30n)])
    const receipt = await send(userKey, treasury(), "deposit", [ref("account A"), credits(30n)])
    const deposits = parseEventLogs({ abi: treasuryAbi, eventName: "Deposited", logs: receipt.logs })
    expect(deposits).toHaveLength(1)
    expect(deposits[0]!.address).toBe(funding.treasuryAddress)
    expect(deposits[0]!.args).toEqual({ accountRef: ref("account A"), from: user.address, amount: credits(30n) })
    expect(await balanceOf(user.address)).toBe(before.user - credits(30n))
    expect(await balanceOf(funding.treasuryAddress)).toBe(before.treasury + credits(30n))
  })

  it("refuses a deposit without allowance, of zero, or for no account", async () => {
    expect(await revertName(simulate(userKey, treasury(), "deposit", [ref("account A"), credits(1n)]))).toBe(
      "ERC20InsufficientAllowance"
    )
    await send(userKey, token(), "approve", [funding.treasuryAddress, credits(5n)])
    expect(await revertName(simulate(userKey, treasury(), "deposit", [ref("account A"), 0n]))).toBe("ZeroAmount")
    expect(await revertName(simulate(userKey, treasury(), "deposit", [zeroHash, credits(1n)]))).toBe("ZeroAccountRef")
    // More than approved is refused by the token, through the treasury.
    expect(await revertName(simulate(userKey, treasury(), "deposit", [ref("account A"), credits(6n)]))).toBe(
      "ERC20InsufficientAllowance"
    )
  })

  it("pays a withdrawal only from its relayer, once per reference, and never more than it holds", async () => {
    const destination = privateKeyToAccount(generatePrivateKey()).address
    const args = [destination, credits(10n), ref("withdrawal 1")] as const
    expect(await revertName(simulate(userKey, treasury(), "withdraw", args))).toBe("AccessControlUnauthorizedAccount")
    expect(await revertName(simulate(DEV_KEYS[0], treasury(), "withdraw", args))).toBe("AccessControlUnauthorizedAccount")

    const held = await balanceOf(funding.treasuryAddress)
    const receipt = await send(DEV_KEYS[1], treasury(), "withdraw", args)
    const withdrawals = parseEventLogs({ abi: treasuryAbi, eventName: "Withdrawn", logs: receipt.logs })
    expect(withdrawals.map((log) => log.args)).toEqual([{ withdrawalRef: ref("withdrawal 1"), to: destination, amount: credits(10n) }])
    expect(await balanceOf(destination)).toBe(credits(10n))
    expect(await balanceOf(funding.treasuryAddress)).toBe(held - credits(10n))
    expect(
      await chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "isWithdrawalRefUsed", args: [ref("withdrawal 1")] })
    ).toBe(true)

    // A retry of the same withdrawal, even of another amount to another address, pays nothing.
    expect(await revertName(simulate(DEV_KEYS[1], treasury(), "withdraw", args))).toBe("WithdrawalRefUsed")
    expect(await revertName(simulate(DEV_KEYS[1], treasury(), "withdraw", [user.address, 1n, ref("withdrawal 1")]))).toBe(
      "WithdrawalRefUsed"
    )
    const remaining = await balanceOf(funding.treasuryAddress)
    expect(await revertName(simulate(DEV_KEYS[1], treasury(), "withdraw", [destination, remaining + 1n, ref("withdrawal 2")]))).toBe(
      "InsufficientTreasuryBalance"
    )
    expect(await revertName(simulate(DEV_KEYS[1], treasury(), "withdraw", [destination, 0n, ref("withdrawal 2")]))).toBe("ZeroAmount")
    expect(await revertName(simulate(DEV_KEYS[1], treasury(), "withdraw", [destination, 1n, zeroHash]))).toBe("ZeroWithdrawalRef")
    expect(
      await revertName(simulate(DEV_KEYS[1], treasury(), "withdraw", ["0x0000000000000000000000000000000000000000", 1n, ref("withdrawal 2")]))
    ).toBe("ZeroAddress")
    // The refused attempts left the reference free and the balance whole.
    expect(
      await chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "isWithdrawalRefUsed", args: [ref("withdrawal 2")] })
    ).toBe(false)
    expect(await balanceOf(funding.treasuryAddress)).toBe(remaining)
  })

  it("is upgraded only by its upgrader, keeping its token, balance and paid references", async () => {
    const artifact = loadArtifact("funding")
    const next = await deployContract(chain.public, chain.wallet(DEV_KEYS[0]) as WalletClient<Transport, Chain, Account>, artifact, "Treasury", [])
    const upgrade = [next.address, "0x"] as const
    expect(await revertName(simulate(DEV_KEYS[1], treasury(), "upgradeToAndCall", upgrade))).toBe("AccessControlUnauthorizedAccount")
    expect(await revertName(simulate(userKey, treasury(), "upgradeToAndCall", upgrade))).toBe("AccessControlUnauthorizedAccount")
    const held = await balanceOf(funding.treasuryAddress)
    const receipt = await send(DEV_KEYS[0], treasury(), "upgradeToAndCall", upgrade)
    expect(parseEventLogs({ abi: treasuryAbi, eventName: "Upgraded", logs: receipt.logs }).map((log) => log.args.implementation.toLowerCase())).toEqual([
      next.address
    ])
    expect(await balanceOf(funding.treasuryAddress)).toBe(held)
    expect(
      await chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "isWithdrawalRefUsed", args: [ref("withdrawal 1")] })
    ).toBe(true)
    // Still our code: the new implementation is the same Treasury, at another address.
    expect(await fundingCodeMismatch(chain.public, funding)).toBeUndefined()
  })

  it("is told apart from other code by its address's code", async () => {
    const registry = await deployTestRegistry(chain, { admin: admin.address, publisher: admin.address })
    expect(await fundingCodeMismatch(chain.public, { ...funding, treasuryAddress: registry.proxy })).toBe(
      `the treasury: the implementation behind it (${registry.implementation}) is not the Treasury of contracts/Funding.json`
    )
    expect(await fundingCodeMismatch(chain.public, { ...funding, creditTokenAddress: funding.treasuryAddress })).toBe(
      `the credit token: the contract at ${funding.treasuryAddress} is not the CreditToken of contracts/Funding.json`
    )
    expect(
      await proxiedCodeMismatch(chain.public, funding.creditTokenAddress, { artifact: "funding", implementation: "Treasury", label: "treasury" })
    ).toBe(`the contract at ${funding.creditTokenAddress} is not the treasury's ERC1967 proxy`)
  })

  it("has the typed ABIs the service uses: the artifact's, plus the token's errors on the treasury", () => {
    const artifact = loadArtifact("funding")
    // Each entry as the compiler states it, less solc's internalType annotations, empty names and `indexed: false`.
    type Entry = { type: string; name?: string; stateMutability?: string; anonymous?: boolean; inputs?: Array<Record<string, unknown>>; outputs?: Array<Record<string, unknown>> }
    const parameters = (list: Array<Record<string, unknown>> | undefined) =>
      (list ?? []).map(({ name, type, indexed }) => ({ type, ...(name ? { name } : {}), ...(indexed ? { indexed } : {}) }))
    const signatures = (abi: unknown) =>
      (abi as Array<Entry>)
        .map((entry) =>
          JSON.stringify({
            type: entry.type,
            name: entry.name,
            stateMutability: entry.stateMutability,
            inputs: parameters(entry.inputs),
            outputs: entry.type === "function" ? parameters(entry.outputs) : undefined
          })
        )
        .sort()
    const tokenErrors = signatures(creditTokenAbi).filter((line) => line.includes('"name":"ERC20'))
    expect(signatures(treasuryAbi)).toEqual([...signatures(artifact.contracts.Treasury!.abi), ...tokenErrors].sort())
    expect(signatures(creditTokenAbi)).toEqual(signatures(artifact.contracts.CreditToken!.abi))
  })
})

const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-funding-"))
  cleanups.push(() => Fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Builds the chain layers as `npm start` does, over DATA_DIR `dataDir` (embedded) or the given environment. */
const startChain = async (env: Record<string, string>) => {
  const started = await startLayer(ChainLive, { LOG_LEVEL: "WARN", EMBEDDED_CHAIN_PORT: String(await freePort()), ...env })
  cleanups.push(() => started.close())
  const contracts = await started.run(FundingContractsTag)
  return { started, contracts }
}

const readRecord = (dataDir: string) =>
  JSON.parse(Fs.readFileSync(Path.join(dataDir, "chain", "deployment.json"), "utf8")) as Record<string, string>

const clientOf = (rpcUrl: string) => createPublicClient({ chain: { ...foundry, id: 8453 }, transport: http(rpcUrl) }) as PublicClient

const embeddedRpc = async (started: Awaited<ReturnType<typeof startChain>>["started"]) =>
  (await started.run(ChainEndpointTag)).rpcUrl

const hasRole = (client: PublicClient, contract: { address: Hex; abi: Abi }, role: string, account: Hex) =>
  client
    .readContract({ ...contract, functionName: role })
    .then((id) => client.readContract({ ...contract, functionName: "hasRole", args: [id, account] }))

describe("on the embedded chain", () => {
  it("deploys both next to the registry on the first start, records them, and reattaches without redeploying", async () => {
    const dataDir = tempDir()
    const first = await startChain({ DATA_DIR: dataDir })
    expect(Option.isSome(first.contracts)).toBe(true)
    const contracts = Option.getOrThrow(first.contracts)
    const record = readRecord(dataDir)
    expect(Object.keys(record).sort()).toEqual(
      [
        "registryAddress",
        "implementationAddress",
        "deployedBlock",
        "treasuryAddress",
        "treasuryImplementationAddress",
        "treasuryDeployedBlock",
        "creditTokenAddress",
        "creditTokenDeployedBlock"
      ].sort()
    )
    expect(contracts).toMatchObject({
      chainId: 8453,
      token: record.creditTokenAddress as Hex,
      treasury: record.treasuryAddress as Hex,
      decimals: 18,
      treasuryDeployedBlock: Option.some(BigInt(record.treasuryDeployedBlock!))
    } satisfies Partial<FundingContracts>)
    const client = clientOf(await embeddedRpc(first.started))
    const saved = { treasuryAddress: record.treasuryAddress as Hex, creditTokenAddress: record.creditTokenAddress as Hex }
    expect(await fundingCodeMismatch(client, saved)).toBeUndefined()
    // The relayer and minter keys the service holds are the ones with the roles; the publisher holds neither.
    const relayerAddress = privateKeyToAccount(Redacted.value(Option.getOrThrow(contracts.relayerKey))).address
    const minterAddress = privateKeyToAccount(Redacted.value(Option.getOrThrow(contracts.minterKey))).address
    const treasuryContract = { address: contracts.treasury, abi: treasuryAbi as Abi }
    const tokenContract = { address: contracts.token, abi: creditTokenAbi as Abi }
    expect(await hasRole(client, treasuryContract, "RELAYER_ROLE", relayerAddress)).toBe(true)
    expect(await hasRole(client, tokenContract, "MINTER_ROLE", minterAddress)).toBe(true)
    expect(await hasRole(client, treasuryContract, "RELAYER_ROLE", admin.address)).toBe(false)
    expect(new Set([relayerAddress, minterAddress, admin.address]).size).toBe(3)
    // Both can pay for their transactions.
    expect(await client.getBalance({ address: relayerAddress })).toBeGreaterThan(10n ** 18n)
    expect(await client.getBalance({ address: minterAddress })).toBeGreaterThan(10n ** 18n)
    const blockAfterFirst = await client.getBlockNumber()
    const recordBytes = Fs.readFileSync(Path.join(dataDir, "chain", "deployment.json"), "utf8")
    await first.started.close()

    const second = await startChain({ DATA_DIR: dataDir })
    expect(Option.getOrThrow(second.contracts)).toEqual(contracts)
    expect(Fs.readFileSync(Path.join(dataDir, "chain", "deployment.json"), "utf8")).toBe(recordBytes)
    expect(await clientOf(await embeddedRpc(second.started)).getBlockNumber()).toBe(blockAfterFirst)
    await second.started.close()
  })

  /**
   * A DATA_DIR saved before the funding contracts existed: its registry deployed, and a revision's block stamped at
   * a historical instant, as a history replay interrupted there leaves it.
   */
  const savedBeforeFunding = async () => {
    const dataDir = tempDir()
    const replayedUntil = Math.floor(GENESIS.getTime() / 1000) + 10 * 86_400
    const record = await saveRegistryOnlyChain(dataDir, {
      genesisTimestamp: Math.floor(GENESIS.getTime() / 1000) - 86_400,
      lastBlockAt: replayedUntil
    })
    return { dataDir, record, replayedUntil }
  }

  it("deploys them at the next start of a DATA_DIR saved before they existed, stamped where its history stopped", async () => {
    const saved = await savedBeforeFunding()
    const copy = tempDir()
    Fs.cpSync(saved.dataDir, copy, { recursive: true })

    const started = await startChain({ DATA_DIR: saved.dataDir })
    const contracts = Option.getOrThrow(started.contracts)
    const record = readRecord(saved.dataDir)
    expect(record).toMatchObject(saved.record)
    expect(record.treasuryAddress).toBe(contracts.treasury)
    expect(record.creditTokenAddress).toBe(contracts.token)
    const client = clientOf(await embeddedRpc(started.started))
    expect(await fundingCodeMismatch(client, { treasuryAddress: contracts.treasury, creditTokenAddress: contracts.token })).toBeUndefined()
    // Deployed in blocks right after the last replayed one, so an interrupted replay can go on at its own instants...
    const deployedAt = Number((await client.getBlock({ blockNumber: BigInt(record.treasuryDeployedBlock!) })).timestamp)
    expect(deployedAt).toBeGreaterThan(saved.replayedUntil)
    expect(deployedAt).toBeLessThan(saved.replayedUntil + 60)
    // ...and the chain's clock is the present again for whatever is sent next.
    await client.request({ method: "evm_mine" as never, params: [] as never })
    const next = Number((await client.getBlock({ blockTag: "latest" })).timestamp)
    expect(Math.abs(next - Date.now() / 1000)).toBeLessThan(60)
    await started.started.close()

    // On a copy of the same DATA_DIR: the replay's next instant can still be stamped after the deployment.
    const other = await startChain({ DATA_DIR: copy })
    const otherClient = clientOf(await embeddedRpc(other.started))
    await otherClient.request({ method: "evm_setNextBlockTimestamp" as never, params: [saved.replayedUntil + 86_400] as never })
    await otherClient.request({ method: "evm_mine" as never, params: [] as never })
    expect((await otherClient.getBlock({ blockTag: "latest" })).timestamp).toBe(BigInt(saved.replayedUntil + 86_400))
    await other.started.close()
  })

  it("refuses a record naming only some of them, or naming code that is not theirs", async () => {
    const dataDir = tempDir()
    const first = await startChain({ DATA_DIR: dataDir })
    await first.started.close()
    const record = readRecord(dataDir)
    const edited = (edit: (record: Record<string, string>) => Record<string, string>) => {
      const copy = tempDir()
      Fs.cpSync(dataDir, copy, { recursive: true })
      Fs.writeFileSync(Path.join(copy, "chain", "deployment.json"), JSON.stringify(edit({ ...record })))
      return copy
    }
    const partial = edited(({ creditTokenAddress: _, ...rest }) => rest)
    await expect(startChain({ DATA_DIR: partial })).rejects.toThrow(/not a deployment record this service wrote.*but not creditTokenAddress/s)
    const swapped = edited((r) => ({ ...r, treasuryAddress: r.registryAddress! }))
    await expect(startChain({ DATA_DIR: swapped })).rejects.toThrow(
      /is not this service's chain as it was left: deployment.json records funding contracts, but the treasury: the implementation behind it/
    )
  })
})

describe("on a configured network", () => {
  const configured = (extra: Record<string, string>) => ({
    DATA_DIR: tempDir(),
    RPC_URL: chain.rpcUrl,
    REGISTRY_ADDRESS: funding.treasuryAddress,
    ...extra
  })

  it("reads TREASURY_ADDRESS, CREDIT_TOKEN_ADDRESS and RELAYER_PRIVATE_KEY, and asks the token its decimals", async () => {
    const { contracts } = await startChain(
      configured({
        TREASURY_ADDRESS: funding.treasuryAddress.toUpperCase().replace("0X", "0x"),
        CREDIT_TOKEN_ADDRESS: funding.creditTokenAddress,
        RELAYER_PRIVATE_KEY: DEV_KEYS[1]
      })
    )
    const value = Option.getOrThrow(contracts)
    expect(value).toMatchObject({
      chainId: 8453,
      token: funding.creditTokenAddress,
      treasury: funding.treasuryAddress,
      decimals: 18,
      treasuryDeployedBlock: Option.none(),
      minterKey: Option.none()
    })
    expect(Redacted.value(Option.getOrThrow(value.relayerKey))).toBe(DEV_KEYS[1])
  })

  it("has none without TREASURY_ADDRESS, and refuses half a pair, a bad key, a treasury holding another token or none", async () => {
    expect(Option.isNone((await startChain(configured({}))).contracts)).toBe(true)
    await expect(startChain(configured({ TREASURY_ADDRESS: funding.treasuryAddress }))).rejects.toThrow(/CREDIT_TOKEN_ADDRESS/)
    await expect(
      startChain(configured({ TREASURY_ADDRESS: funding.treasuryAddress, CREDIT_TOKEN_ADDRESS: funding.treasuryAddress }))
    ).rejects.toThrow(`holds the token ${funding.creditTokenAddress}, not CREDIT_TOKEN_ADDRESS ${funding.treasuryAddress}`)
    await expect(
      startChain(
        configured({ TREASURY_ADDRESS: funding.treasuryAddress, CREDIT_TOKEN_ADDRESS: funding.creditTokenAddress, RELAYER_PRIVATE_KEY: "0x1234" })
      )
    ).rejects.toThrow(/RELAYER_PRIVATE_KEY must be a 32-byte hex key/)
    await expect(
      startChain(configured({ TREASURY_ADDRESS: user.address, CREDIT_TOKEN_ADDRESS: funding.creditTokenAddress }))
    ).rejects.toThrow(`could not read the token of the treasury at TREASURY_ADDRESS ${user.address.toLowerCase()} on RPC_URL`)
  })
})
