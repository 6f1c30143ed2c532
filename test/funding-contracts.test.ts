/**
 * The funding contracts (issue 9 item 6, DESIGN.md section 11) on a real anvil node: the CreditToken's faucet role,
 * deposits into the Treasury and its `Deposited` event, withdrawals by the relayer only and once per reference, and
 * the upgrade role. Then the embedded chain: deployed next to the registry on a first start, recorded in
 * deployment.json, reattached without redeploying, added to a DATA_DIR saved before they existed; and the configured
 * network's TREASURY_ADDRESS/CREDIT_TOKEN_ADDRESS.
 *
 * One node for the suite, its tests in order (each goes on from the chain the one before left), on the real clock:
 * the chain layers wait for anvil in wall time.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Context, Effect, ExecutionStrategy, Exit, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
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
import { loadArtifact } from "../contracts/compile.ts"
import { ChainLive } from "../layers/Chain.ts"
import { ConfigFrom } from "../layers/Test.ts"
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
import { freePort } from "./support/ports.ts"

const admin = privateKeyToAccount(DEV_KEYS[0])
const relayer = privateKeyToAccount(DEV_KEYS[1])
const minter = privateKeyToAccount(DEV_KEYS[2])
const userKey = generatePrivateKey()
const user = privateKeyToAccount(userKey)
const ref = (text: string) => keccak256(stringToBytes(text))
const credits = (n: bigint) => n * 10n ** 18n

/** The suite's anvil node, the user funded, the CreditToken and the Treasury deployed on it. */
class Funded extends Context.Tag("test/funding-contracts/Funded")<
  Funded,
  { readonly chain: TestChain; readonly funding: FundingDeployment }
>() {}

const FundedLive = Layer.scoped(
  Funded,
  Effect.gen(function* () {
    const chain = yield* Effect.acquireRelease(Effect.promise(() => startTestChain()), (chain) => Effect.promise(() => chain.close()))
    yield* Effect.promise(() => chain.test.setBalance({ address: user.address, value: 10n ** 20n }))
    const funding = yield* Effect.promise(() =>
      deployTestFunding(chain, { admin: admin.address, relayer: relayer.address, minter: minter.address })
    )
    return { chain, funding }
  })
).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

/** `f` against the suite's node and contracts. */
const onChain = <A>(f: (chain: TestChain, funding: FundingDeployment) => Promise<A>) =>
  Effect.flatMap(Funded, ({ chain, funding }) => Effect.promise(() => f(chain, funding)))

type Contract = { address: Hex; abi: Abi }

const treasury = Effect.map(Funded, ({ funding }): Contract => ({ address: funding.treasuryAddress, abi: treasuryAbi as Abi }))
const token = Effect.map(Funded, ({ funding }): Contract => ({ address: funding.creditTokenAddress, abi: creditTokenAbi as Abi }))

/** Simulates `functionName` from `key`'s account: the name of the error it reverts with, or undefined if it would not. */
const revertOf = (key: Hex, contract: Contract, functionName: string, args: ReadonlyArray<unknown>) =>
  onChain(async (chain): Promise<string | undefined> => {
    try {
      await chain.public.simulateContract({ ...contract, functionName, args, account: privateKeyToAccount(key) })
      return undefined
    } catch (error) {
      if (error instanceof BaseError) {
        const revert = error.walk((e) => e instanceof ContractFunctionRevertedError)
        if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName ?? revert.reason ?? "reverted"
      }
      throw error
    }
  })

/** Simulates `functionName` from `key`'s account, then sends it; returns the receipt. */
const send = (key: Hex, contract: Contract, functionName: string, args: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const receipt = yield* onChain(async (chain) => {
      const { request } = await chain.public.simulateContract({ ...contract, functionName, args, account: privateKeyToAccount(key) })
      const wallet = chain.wallet(key)
      const hash = await wallet.writeContract(request as Parameters<typeof wallet.writeContract>[0])
      return chain.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    })
    expect(receipt.status).toBe("success")
    return receipt
  })

const balanceOf = (address: Hex) =>
  onChain((chain, funding) =>
    chain.public.readContract({ address: funding.creditTokenAddress, abi: creditTokenAbi, functionName: "balanceOf", args: [address] })
  )

const withdrawalRefUsed = (withdrawalRef: Hex) =>
  onChain((chain, funding) =>
    chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "isWithdrawalRefUsed", args: [withdrawalRef] })
  )

/** A temporary directory, removed when the test's scope closes. */
const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-funding-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/**
 * Builds the chain layers as `npm start` does (configured from `env`, over DATA_DIR for the embedded chain), in a scope
 * of their own: released by `close`, at the latest with the test's scope; at once when the start fails.
 */
const startChain = (env: Record<string, string>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const port = yield* Effect.promise(() => freePort())
    const context = yield* Layer.buildWithScope(
      ChainLive.pipe(Layer.provide(ConfigFrom({ LOG_LEVEL: "WARN", EMBEDDED_CHAIN_PORT: String(port), ...env }))),
      scope
    ).pipe(Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))))
    return {
      contracts: Context.get(context, FundingContractsTag),
      rpcUrl: Context.get(context, ChainEndpointTag).rpcUrl,
      close: Scope.close(scope, Exit.void)
    }
  })

/** How a start of the chain layers over `env` fails: the message of its first error (what a rejected start carries). */
const startFailure = (env: Record<string, string>) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(startChain(env))
    if (Exit.isSuccess(exit)) return yield* Effect.dieMessage("the chain layers started, where they were expected to fail")
    return Cause.prettyErrors(exit.cause)[0]?.message ?? ""
  })

const readRecord = (dataDir: string) =>
  JSON.parse(Fs.readFileSync(Path.join(dataDir, "chain", "deployment.json"), "utf8")) as Record<string, string>

const clientOf = (rpcUrl: string) => createPublicClient({ chain: { ...foundry, id: 8453 }, transport: http(rpcUrl) }) as PublicClient

const hasRole = (client: PublicClient, contract: Contract, role: string, account: Hex) =>
  Effect.promise(() =>
    client
      .readContract({ ...contract, functionName: role })
      .then((id) => client.readContract({ ...contract, functionName: "hasRole", args: [id, account] }))
  )

layer(FundedLive, { timeout: 60_000, excludeTestServices: true })((it) => {
  describe("the CreditToken", () => {
    it.effect("is Compute Credit (CCR) with 18 decimals, minted only by its minter", () =>
      Effect.gen(function* () {
        const read = (functionName: "name" | "symbol" | "decimals") =>
          onChain((chain, funding) => chain.public.readContract({ address: funding.creditTokenAddress, abi: creditTokenAbi, functionName }))
        expect([yield* read("name"), yield* read("symbol"), yield* read("decimals")]).toEqual(["Compute Credit", "CCR", 18])
        expect(yield* revertOf(userKey, yield* token, "mint", [user.address, credits(1n)])).toBe("AccessControlUnauthorizedAccount")
        // The admin may grant the role, but does not hold it.
        expect(yield* revertOf(DEV_KEYS[0], yield* token, "mint", [user.address, credits(1n)])).toBe("AccessControlUnauthorizedAccount")
        yield* send(DEV_KEYS[2], yield* token, "mint", [user.address, credits(100n)])
        expect(yield* balanceOf(user.address)).toBe(credits(100n))
      }))
  })

  describe("the Treasury", () => {
    it.effect("holds the token it was initialized with, and refuses to be initialized again", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        const held = yield* onChain((chain) => chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "token" }))
        expect(held.toLowerCase()).toBe(funding.creditTokenAddress)
        expect(
          yield* onChain((chain) => chain.public.readContract({ address: funding.treasuryAddress, abi: treasuryAbi, functionName: "version" }))
        ).toBe("1.0.0")
        expect(
          yield* revertOf(DEV_KEYS[0], yield* treasury, "initialize", [funding.creditTokenAddress, user.address, user.address])
        ).toBe("InvalidInitialization")
      }))

    it.effect("takes a deposit after approve: the tokens move and Deposited names the account reference, the sender and the amount", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        const before = { user: yield* balanceOf(user.address), treasury: yield* balanceOf(funding.treasuryAddress) }
        yield* send(userKey, yield* token, "approve", [funding.treasuryAddress, credits(30n)])
        const receipt = yield* send(userKey, yield* treasury, "deposit", [ref("account A"), credits(30n)])
        const deposits = parseEventLogs({ abi: treasuryAbi, eventName: "Deposited", logs: receipt.logs })
        expect(deposits).toHaveLength(1)
        expect(deposits[0]!.address).toBe(funding.treasuryAddress)
        expect(deposits[0]!.args).toEqual({ accountRef: ref("account A"), from: user.address, amount: credits(30n) })
        expect(yield* balanceOf(user.address)).toBe(before.user - credits(30n))
        expect(yield* balanceOf(funding.treasuryAddress)).toBe(before.treasury + credits(30n))
      }))

    it.effect("refuses a deposit without allowance, of zero, or for no account", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        expect(yield* revertOf(userKey, yield* treasury, "deposit", [ref("account A"), credits(1n)])).toBe("ERC20InsufficientAllowance")
        yield* send(userKey, yield* token, "approve", [funding.treasuryAddress, credits(5n)])
        expect(yield* revertOf(userKey, yield* treasury, "deposit", [ref("account A"), 0n])).toBe("ZeroAmount")
        expect(yield* revertOf(userKey, yield* treasury, "deposit", [zeroHash, credits(1n)])).toBe("ZeroAccountRef")
        // More than approved is refused by the token, through the treasury.
        expect(yield* revertOf(userKey, yield* treasury, "deposit", [ref("account A"), credits(6n)])).toBe("ERC20InsufficientAllowance")
      }))

    it.effect("pays a withdrawal only from its relayer, once per reference, and never more than it holds", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        const contract = yield* treasury
        const destination = privateKeyToAccount(generatePrivateKey()).address
        const args = [destination, credits(10n), ref("withdrawal 1")] as const
        expect(yield* revertOf(userKey, contract, "withdraw", args)).toBe("AccessControlUnauthorizedAccount")
        expect(yield* revertOf(DEV_KEYS[0], contract, "withdraw", args)).toBe("AccessControlUnauthorizedAccount")

        const held = yield* balanceOf(funding.treasuryAddress)
        const receipt = yield* send(DEV_KEYS[1], contract, "withdraw", args)
        const withdrawals = parseEventLogs({ abi: treasuryAbi, eventName: "Withdrawn", logs: receipt.logs })
        expect(withdrawals.map((log) => log.args)).toEqual([{ withdrawalRef: ref("withdrawal 1"), to: destination, amount: credits(10n) }])
        expect(yield* balanceOf(destination)).toBe(credits(10n))
        expect(yield* balanceOf(funding.treasuryAddress)).toBe(held - credits(10n))
        expect(yield* withdrawalRefUsed(ref("withdrawal 1"))).toBe(true)

        // A retry of the same withdrawal, even of another amount to another address, pays nothing.
        expect(yield* revertOf(DEV_KEYS[1], contract, "withdraw", args)).toBe("WithdrawalRefUsed")
        expect(yield* revertOf(DEV_KEYS[1], contract, "withdraw", [user.address, 1n, ref("withdrawal 1")])).toBe("WithdrawalRefUsed")
        const remaining = yield* balanceOf(funding.treasuryAddress)
        expect(yield* revertOf(DEV_KEYS[1], contract, "withdraw", [destination, remaining + 1n, ref("withdrawal 2")])).toBe(
          "InsufficientTreasuryBalance"
        )
        expect(yield* revertOf(DEV_KEYS[1], contract, "withdraw", [destination, 0n, ref("withdrawal 2")])).toBe("ZeroAmount")
        expect(yield* revertOf(DEV_KEYS[1], contract, "withdraw", [destination, 1n, zeroHash])).toBe("ZeroWithdrawalRef")
        expect(
          yield* revertOf(DEV_KEYS[1], contract, "withdraw", ["0x0000000000000000000000000000000000000000", 1n, ref("withdrawal 2")])
        ).toBe("ZeroAddress")
        // The refused attempts left the reference free and the balance whole.
        expect(yield* withdrawalRefUsed(ref("withdrawal 2"))).toBe(false)
        expect(yield* balanceOf(funding.treasuryAddress)).toBe(remaining)
      }))

    it.effect("is upgraded only by its upgrader, keeping its token, balance and paid references", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        const contract = yield* treasury
        const artifact = loadArtifact("funding")
        const next = yield* onChain((chain) =>
          deployContract(chain.public, chain.wallet(DEV_KEYS[0]) as WalletClient<Transport, Chain, Account>, artifact, "Treasury", [])
        )
        const upgrade = [next.address, "0x"] as const
        expect(yield* revertOf(DEV_KEYS[1], contract, "upgradeToAndCall", upgrade)).toBe("AccessControlUnauthorizedAccount")
        expect(yield* revertOf(userKey, contract, "upgradeToAndCall", upgrade)).toBe("AccessControlUnauthorizedAccount")
        const held = yield* balanceOf(funding.treasuryAddress)
        const receipt = yield* send(DEV_KEYS[0], contract, "upgradeToAndCall", upgrade)
        expect(parseEventLogs({ abi: treasuryAbi, eventName: "Upgraded", logs: receipt.logs }).map((log) => log.args.implementation.toLowerCase())).toEqual([
          next.address
        ])
        expect(yield* balanceOf(funding.treasuryAddress)).toBe(held)
        expect(yield* withdrawalRefUsed(ref("withdrawal 1"))).toBe(true)
        // Still our code: the new implementation is the same Treasury, at another address.
        expect(yield* onChain((chain) => fundingCodeMismatch(chain.public, funding))).toBeUndefined()
      }))

    it.effect("is told apart from other code by its address's code", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        const registry = yield* onChain((chain) => deployTestRegistry(chain, { admin: admin.address, publisher: admin.address }))
        expect(yield* onChain((chain) => fundingCodeMismatch(chain.public, { ...funding, treasuryAddress: registry.proxy }))).toBe(
          `the treasury: the implementation behind it (${registry.implementation}) is not the Treasury of contracts/Funding.json`
        )
        expect(yield* onChain((chain) => fundingCodeMismatch(chain.public, { ...funding, creditTokenAddress: funding.treasuryAddress }))).toBe(
          `the credit token: the contract at ${funding.treasuryAddress} is not the CreditToken of contracts/Funding.json`
        )
        expect(
          yield* onChain((chain) =>
            proxiedCodeMismatch(chain.public, funding.creditTokenAddress, { artifact: "funding", implementation: "Treasury", label: "treasury" })
          )
        ).toBe(`the contract at ${funding.creditTokenAddress} is not the treasury's ERC1967 proxy`)
      }))

    it.effect("has the typed ABIs the service uses: the artifact's, plus the token's errors on the treasury", () =>
      Effect.sync(() => {
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
      }))
  })

  describe("on the embedded chain", () => {
    it.scoped("deploys both next to the registry on the first start, records them, and reattaches without redeploying", () =>
      Effect.gen(function* () {
        const dataDir = yield* tempDir
        const first = yield* startChain({ DATA_DIR: dataDir })
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
        const client = clientOf(first.rpcUrl)
        const saved = { treasuryAddress: record.treasuryAddress as Hex, creditTokenAddress: record.creditTokenAddress as Hex }
        expect(yield* Effect.promise(() => fundingCodeMismatch(client, saved))).toBeUndefined()
        // The relayer and minter keys the service holds are the ones with the roles; the publisher holds neither.
        const relayerAddress = privateKeyToAccount(Redacted.value(Option.getOrThrow(contracts.relayerKey))).address
        const minterAddress = privateKeyToAccount(Redacted.value(Option.getOrThrow(contracts.minterKey))).address
        const treasuryContract = { address: contracts.treasury, abi: treasuryAbi as Abi }
        const tokenContract = { address: contracts.token, abi: creditTokenAbi as Abi }
        expect(yield* hasRole(client, treasuryContract, "RELAYER_ROLE", relayerAddress)).toBe(true)
        expect(yield* hasRole(client, tokenContract, "MINTER_ROLE", minterAddress)).toBe(true)
        expect(yield* hasRole(client, treasuryContract, "RELAYER_ROLE", admin.address)).toBe(false)
        expect(new Set([relayerAddress, minterAddress, admin.address]).size).toBe(3)
        // Both can pay for their transactions.
        expect(yield* Effect.promise(() => client.getBalance({ address: relayerAddress }))).toBeGreaterThan(10n ** 18n)
        expect(yield* Effect.promise(() => client.getBalance({ address: minterAddress }))).toBeGreaterThan(10n ** 18n)
        const blockAfterFirst = yield* Effect.promise(() => client.getBlockNumber())
        const recordBytes = Fs.readFileSync(Path.join(dataDir, "chain", "deployment.json"), "utf8")
        yield* first.close

        const second = yield* startChain({ DATA_DIR: dataDir })
        expect(Option.getOrThrow(second.contracts)).toEqual(contracts)
        expect(Fs.readFileSync(Path.join(dataDir, "chain", "deployment.json"), "utf8")).toBe(recordBytes)
        expect(yield* Effect.promise(() => clientOf(second.rpcUrl).getBlockNumber())).toBe(blockAfterFirst)
        yield* second.close
      }))

    /**
     * A DATA_DIR saved before the funding contracts existed: its registry deployed, and a revision's block stamped at
     * a historical instant, as a history replay interrupted there leaves it.
     */
    const savedBeforeFunding = Effect.gen(function* () {
      const dataDir = yield* tempDir
      const replayedUntil = Math.floor(GENESIS.getTime() / 1000) + 10 * 86_400
      const record = yield* Effect.promise(() =>
        saveRegistryOnlyChain(dataDir, {
          genesisTimestamp: Math.floor(GENESIS.getTime() / 1000) - 86_400,
          lastBlockAt: replayedUntil
        })
      )
      return { dataDir, record, replayedUntil }
    })

    it.scoped("deploys them at the next start of a DATA_DIR saved before they existed, stamped where its history stopped", () =>
      Effect.gen(function* () {
        const saved = yield* savedBeforeFunding
        const copy = yield* tempDir
        Fs.cpSync(saved.dataDir, copy, { recursive: true })

        const started = yield* startChain({ DATA_DIR: saved.dataDir })
        const contracts = Option.getOrThrow(started.contracts)
        const record = readRecord(saved.dataDir)
        expect(record).toMatchObject(saved.record)
        expect(record.treasuryAddress).toBe(contracts.treasury)
        expect(record.creditTokenAddress).toBe(contracts.token)
        const client = clientOf(started.rpcUrl)
        expect(
          yield* Effect.promise(() => fundingCodeMismatch(client, { treasuryAddress: contracts.treasury, creditTokenAddress: contracts.token }))
        ).toBeUndefined()
        // Deployed in blocks right after the last replayed one, so an interrupted replay can go on at its own instants...
        const deployedAt = Number((yield* Effect.promise(() => client.getBlock({ blockNumber: BigInt(record.treasuryDeployedBlock!) }))).timestamp)
        expect(deployedAt).toBeGreaterThan(saved.replayedUntil)
        expect(deployedAt).toBeLessThan(saved.replayedUntil + 60)
        // ...and the chain's clock is the present again for whatever is sent next.
        yield* Effect.promise(() => client.request({ method: "evm_mine" as never, params: [] as never }))
        const next = Number((yield* Effect.promise(() => client.getBlock({ blockTag: "latest" }))).timestamp)
        expect(Math.abs(next - Date.now() / 1000)).toBeLessThan(60)
        yield* started.close

        // On a copy of the same DATA_DIR: the replay's next instant can still be stamped after the deployment.
        const other = yield* startChain({ DATA_DIR: copy })
        const otherClient = clientOf(other.rpcUrl)
        yield* Effect.promise(() =>
          otherClient.request({ method: "evm_setNextBlockTimestamp" as never, params: [saved.replayedUntil + 86_400] as never })
        )
        yield* Effect.promise(() => otherClient.request({ method: "evm_mine" as never, params: [] as never }))
        expect((yield* Effect.promise(() => otherClient.getBlock({ blockTag: "latest" }))).timestamp).toBe(BigInt(saved.replayedUntil + 86_400))
        yield* other.close
      }))

    it.scoped("refuses a record naming only some of them, or naming code that is not theirs", () =>
      Effect.gen(function* () {
        const dataDir = yield* tempDir
        const first = yield* startChain({ DATA_DIR: dataDir })
        yield* first.close
        const record = readRecord(dataDir)
        const edited = (edit: (record: Record<string, string>) => Record<string, string>) =>
          Effect.map(tempDir, (copy) => {
            Fs.cpSync(dataDir, copy, { recursive: true })
            Fs.writeFileSync(Path.join(copy, "chain", "deployment.json"), JSON.stringify(edit({ ...record })))
            return copy
          })
        const partial = yield* edited(({ creditTokenAddress: _, ...rest }) => rest)
        expect(yield* startFailure({ DATA_DIR: partial })).toMatch(/not a deployment record this service wrote.*but not creditTokenAddress/s)
        const swapped = yield* edited((r) => ({ ...r, treasuryAddress: r.registryAddress! }))
        expect(yield* startFailure({ DATA_DIR: swapped })).toMatch(
          /is not this service's chain as it was left: deployment.json records funding contracts, but the treasury: the implementation behind it/
        )
      }))
  })

  describe("on a configured network", () => {
    const configured = (extra: Record<string, string>) =>
      Effect.gen(function* () {
        const { chain, funding } = yield* Funded
        return { DATA_DIR: yield* tempDir, RPC_URL: chain.rpcUrl, REGISTRY_ADDRESS: funding.treasuryAddress, ...extra }
      })

    it.scoped("reads TREASURY_ADDRESS, CREDIT_TOKEN_ADDRESS and RELAYER_PRIVATE_KEY, and asks the token its decimals", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        const { contracts } = yield* startChain(
          yield* configured({
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
      }))

    it.scoped("has none without TREASURY_ADDRESS, and refuses half a pair, a bad key, a treasury holding another token or none", () =>
      Effect.gen(function* () {
        const { funding } = yield* Funded
        expect(Option.isNone((yield* startChain(yield* configured({}))).contracts)).toBe(true)
        expect(yield* startFailure(yield* configured({ TREASURY_ADDRESS: funding.treasuryAddress }))).toMatch(/CREDIT_TOKEN_ADDRESS/)
        expect(
          yield* startFailure(yield* configured({ TREASURY_ADDRESS: funding.treasuryAddress, CREDIT_TOKEN_ADDRESS: funding.treasuryAddress }))
        ).toContain(`holds the token ${funding.creditTokenAddress}, not CREDIT_TOKEN_ADDRESS ${funding.treasuryAddress}`)
        expect(
          yield* startFailure(
            yield* configured({ TREASURY_ADDRESS: funding.treasuryAddress, CREDIT_TOKEN_ADDRESS: funding.creditTokenAddress, RELAYER_PRIVATE_KEY: "0x1234" })
          )
        ).toMatch(/RELAYER_PRIVATE_KEY must be a 32-byte hex key/)
        expect(
          yield* startFailure(yield* configured({ TREASURY_ADDRESS: user.address, CREDIT_TOKEN_ADDRESS: funding.creditTokenAddress }))
        ).toContain(`could not read the token of the treasury at TREASURY_ADDRESS ${user.address.toLowerCase()} on RPC_URL`)
      }))
  })
})
