/**
 * OracleRegistry on a real anvil node (SPEC "On-chain anchoring", DESIGN.md section 6): publication, monotonic
 * revision numbers, the frozen baseline, the step function and its tie rule, access control, and an upgrade
 * that keeps every revision. Also: the committed artifacts (the registry's and the funding contracts') are what the
 * sources compile to.
 */
import { type Abi, BaseError, ContractFunctionRevertedError, type Hex, keccak256, stringToBytes } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compile, compileArtifact, loadArtifact } from "../contracts/compile.ts"
import { DEV_KEYS, deployTestRegistry, startTestChain, type TestChain } from "./support/chain.ts"

const admin = privateKeyToAccount(DEV_KEYS[0])
const publisher = privateKeyToAccount(DEV_KEYS[1])
const hash = (text: string) => keccak256(stringToBytes(text))
const GENESIS = 1_750_118_400 // 2025-06-17T00:00:00Z

let chain: TestChain
let registry: { proxy: Hex; implementation: Hex; abi: Abi }

beforeAll(async () => {
  chain = await startTestChain({ genesisTimestamp: GENESIS - 86_400 })
  registry = await deployTestRegistry(chain, { admin: admin.address, publisher: publisher.address })
}, 60_000)

afterAll(async () => {
  await chain?.close()
})

const read = (functionName: string, args: ReadonlyArray<unknown> = []) =>
  chain.public.readContract({ address: registry.proxy, abi: registry.abi, functionName, args })

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

/** Publishes from `key` in a block stamped `timestamp` (when given); returns the receipt. */
const publish = async (
  revision: number,
  scu: bigint,
  options: { timestamp?: number; key?: Hex; methodology?: number } = {}
) => {
  if (options.timestamp !== undefined) await chain.test.setNextBlockTimestamp({ timestamp: BigInt(options.timestamp) })
  const wallet = chain.wallet(options.key ?? DEV_KEYS[1])
  const txHash = await wallet.writeContract({
    address: registry.proxy,
    abi: registry.abi,
    functionName: "publish",
    args: [BigInt(revision), options.methodology ?? 1, scu, hash(`content ${revision}`), hash(`metadata ${revision}`)],
    account: wallet.account!,
    chain: wallet.chain
  })
  return chain.public.waitForTransactionReceipt({ hash: txHash })
}

const simulatePublish = (revision: number, scu: bigint, key: Hex = DEV_KEYS[1]) =>
  chain.public.simulateContract({
    address: registry.proxy,
    abi: registry.abi,
    functionName: "publish",
    args: [BigInt(revision), 1, scu, hash("c"), hash("m")],
    account: privateKeyToAccount(key)
  })

const T1 = GENESIS
const T2 = GENESIS + 10 * 86_400
const T3 = GENESIS + 20 * 86_400
const SCU1 = 3090963974856417n
const SCU2 = 2500000000000000n
const SCU3 = 2000000000000000n
const SCU4 = 1900000000000000n

describe("the registry contract", () => {
  it("reports its version and 18 decimals, and has no revision before genesis", async () => {
    expect(await read("version")).toBe("1.0.0")
    expect(await read("decimals")).toBe(18)
    expect(await read("lastRevisionVersion")).toBe(0n)
    expect(await revertName(read("getLatestRevision"))).toBe("NoRevision")
    expect(await revertName(read("getBaseline"))).toBe("NoRevision")
  })

  it("publishes revision 1 at the block's timestamp and freezes it as the baseline", async () => {
    const receipt = await publish(1, SCU1, { timestamp: T1 })
    expect(receipt.status).toBe("success")
    const block = await chain.public.getBlock({ blockNumber: receipt.blockNumber })
    expect(block.timestamp).toBe(BigInt(T1))
    expect(await read("getLatestRevision")).toEqual([1n, 1, SCU1, hash("content 1"), hash("metadata 1"), BigInt(T1)])
    expect(await read("getBaseline")).toBe(SCU1)
    expect(await read("getComputeIndex")).toBe(100n * 10n ** 18n)
  })

  it("numbers revisions strictly from 1 upward and refuses gaps, repeats and a zero SCU", async () => {
    expect(await revertName(simulatePublish(3, SCU2))).toBe("RevisionOutOfOrder")
    expect(await revertName(simulatePublish(1, SCU2))).toBe("RevisionOutOfOrder")
    expect(await revertName(simulatePublish(2, 0n))).toBe("InvalidScu")
    await publish(2, SCU2, { timestamp: T2 })
    expect(await read("lastRevisionVersion")).toBe(2n)
    expect(await read("getRevision", [2n])).toEqual([2n, 1, SCU2, hash("content 2"), hash("metadata 2"), BigInt(T2)])
    expect(await read("getRevisionScuUsd", [1n])).toBe(SCU1)
    expect(await revertName(read("getRevision", [0n]))).toBe("UnknownRevision")
    expect(await revertName(read("getRevision", [3n]))).toBe("UnknownRevision")
  })

  it("keeps the baseline frozen at revision 1 and indexes against it", async () => {
    expect(await read("getBaseline")).toBe(SCU1)
    expect(await read("getComputeIndex")).toBe((SCU1 * 100n * 10n ** 18n) / SCU2)
  })

  it("refuses a publisher it does not know", async () => {
    expect(await revertName(simulatePublish(3, SCU3, DEV_KEYS[2]))).toBe("AccessControlUnauthorizedAccount")
  })

  it("resolves an instant to the revision in force, ties going to the highest revision", async () => {
    // Revisions 3 and 4 in one block: the same publishedAt.
    await chain.test.setAutomine(false)
    const wallet = chain.wallet(DEV_KEYS[1])
    const send = (revision: number, scu: bigint, nonce: number) =>
      wallet.writeContract({
        address: registry.proxy,
        abi: registry.abi,
        functionName: "publish",
        args: [BigInt(revision), 1, scu, hash(`content ${revision}`), hash(`metadata ${revision}`)],
        account: wallet.account!,
        chain: wallet.chain,
        nonce,
        gas: 300_000n
      })
    const nonce = await chain.public.getTransactionCount({ address: publisher.address })
    const first = await send(3, SCU3, nonce)
    const second = await send(4, SCU4, nonce + 1)
    await chain.test.setNextBlockTimestamp({ timestamp: BigInt(T3) })
    await chain.test.mine({ blocks: 1 })
    await chain.test.setAutomine(true)
    const [r3, r4] = await Promise.all([first, second].map((h) => chain.public.waitForTransactionReceipt({ hash: h })))
    expect(r3!.blockNumber).toBe(r4!.blockNumber)
    expect(r4!.status).toBe("success")

    const at = async (t: number) => ((await read("getRevisionAt", [BigInt(t)])) as Array<unknown>)[0]
    expect(await revertName(read("getRevisionAt", [BigInt(T1 - 1)]))).toBe("BeforeGenesis")
    expect(await at(T1)).toBe(1n)
    expect(await at(T2 - 1)).toBe(1n)
    expect(await at(T2)).toBe(2n)
    expect(await at(T3 - 1)).toBe(2n)
    expect(await at(T3)).toBe(4n)
    expect(await at(T3 + 1_000_000)).toBe(4n)
  })

  it("answers the compute index at an instant as (scuUsd, indexValue, publishedAt, methodologyVersion, revisionVersion)", async () => {
    expect(await read("getComputeIndexAt", [BigInt(T2 + 5)])).toEqual([
      SCU2,
      (SCU1 * 100n * 10n ** 18n) / SCU2,
      BigInt(T2),
      1,
      2n
    ])
    expect(await read("getComputeIndexAt", [BigInt(T1)])).toEqual([SCU1, 100n * 10n ** 18n, BigInt(T1), 1, 1n])
  })

  it("upgrades only by its upgrader, keeping every revision", async () => {
    const v2 = compile(["test/OracleRegistryV2.sol"], ["OracleRegistryV2"]).contracts.OracleRegistryV2!
    const deployer = chain.wallet(DEV_KEYS[0])
    const deployHash = await deployer.deployContract({ abi: v2.abi as unknown as Abi, bytecode: v2.bytecode, account: deployer.account!, chain: deployer.chain })
    const implementation = (await chain.public.waitForTransactionReceipt({ hash: deployHash })).contractAddress!

    const upgrade = (key: Hex) =>
      chain.public.simulateContract({
        address: registry.proxy,
        abi: registry.abi,
        functionName: "upgradeToAndCall",
        args: [implementation, "0x"],
        account: privateKeyToAccount(key)
      })
    expect(await revertName(upgrade(DEV_KEYS[1]))).toBe("AccessControlUnauthorizedAccount")
    const { request } = await upgrade(DEV_KEYS[0])
    await chain.public.waitForTransactionReceipt({ hash: await deployer.writeContract(request) })

    const v2Abi = v2.abi as unknown as Abi
    expect(await chain.public.readContract({ address: registry.proxy, abi: v2Abi, functionName: "version" })).toBe("2.0.0")
    expect(await chain.public.readContract({ address: registry.proxy, abi: v2Abi, functionName: "upgradedMarker" })).toBe(true)
    expect(await read("lastRevisionVersion")).toBe(4n)
    expect(await read("getBaseline")).toBe(SCU1)
    expect(await read("getRevision", [2n])).toEqual([2n, 1, SCU2, hash("content 2"), hash("metadata 2"), BigInt(T2)])
    expect(((await read("getRevisionAt", [BigInt(T3)])) as Array<unknown>)[0]).toBe(4n)
  })
})

describe("the committed artifacts", () => {
  it.each([
    ["registry", ["ERC1967Proxy", "OracleRegistry"]],
    ["funding", ["CreditToken", "ERC1967Proxy", "Treasury"]]
  ] as const)("%s: exactly what the sources compile to", (artifact, contracts) => {
    const fresh = compileArtifact(artifact)
    const committed = loadArtifact(artifact)
    expect(committed.compiler).toBe(fresh.compiler)
    expect(committed.settings).toEqual(fresh.settings)
    expect(Object.keys(committed.contracts)).toEqual(contracts)
    expect(Object.keys(fresh.contracts)).toEqual(contracts)
    for (const name of Object.keys(fresh.contracts)) {
      expect(committed.contracts[name]!.bytecode, name).toBe(fresh.contracts[name]!.bytecode)
      expect(committed.contracts[name]!.deployedBytecode, name).toBe(fresh.contracts[name]!.deployedBytecode)
      expect(committed.contracts[name]!.abi, name).toEqual(fresh.contracts[name]!.abi)
    }
  }, 60_000)

  it("declares every read function of SPEC.md with its signature", () => {
    const abi = loadArtifact().contracts.OracleRegistry!.abi as Array<{ type: string; name?: string; inputs?: Array<{ type: string }>; outputs?: Array<{ type: string }> }>
    const signature = (name: string) => {
      const entry = abi.find((e) => e.type === "function" && e.name === name)!
      return `${name}(${entry.inputs!.map((i) => i.type).join(",")}) -> (${entry.outputs!.map((o) => o.type).join(",")})`
    }
    const header = "uint256,uint16,uint256,bytes32,bytes32,uint64"
    expect(signature("version")).toBe("version() -> (string)")
    expect(signature("decimals")).toBe("decimals() -> (uint8)")
    expect(signature("lastRevisionVersion")).toBe("lastRevisionVersion() -> (uint256)")
    expect(signature("getLatestRevision")).toBe(`getLatestRevision() -> (${header})`)
    expect(signature("getRevision")).toBe(`getRevision(uint256) -> (${header})`)
    expect(signature("getRevisionScuUsd")).toBe("getRevisionScuUsd(uint256) -> (uint256)")
    expect(signature("getBaseline")).toBe("getBaseline() -> (uint256)")
    expect(signature("getComputeIndex")).toBe("getComputeIndex() -> (uint256)")
    expect(signature("getRevisionAt")).toBe(`getRevisionAt(uint256) -> (${header})`)
    expect(signature("getComputeIndexAt")).toBe("getComputeIndexAt(uint256) -> (uint256,uint256,uint64,uint16,uint256)")
  })
})
