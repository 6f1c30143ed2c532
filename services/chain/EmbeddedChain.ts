/**
 * The embedded chain for `npm start` with no RPC_URL: anvil on loopback with chain id 8453 and its state under
 * DATA_DIR/chain, the registry and the funding contracts (CreditToken, Treasury) deployed on the first run. Its
 * state is written to disk after every confirmed publish, so a CONFIRMED revision can never lose its block to a crash.
 */
import { Clock, Context, Data, Effect, Option, ParseResult, Redacted, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { gunzipSync } from "node:zlib"
import { type Account, type Chain, createPublicClient, createWalletClient, type Hex, http, type PublicClient, type Transport, type WalletClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { defineChain } from "viem/utils"
import { startAnvil } from "./anvil.ts"
import { deployRegistry, type Deployment, registryCodeMismatch } from "./deploy.ts"
import { deployFunding, type FundingContracts, type FundingDeployment, fundingCodeMismatch } from "./funding.ts"
import type { ChainEndpoint } from "./Registry.ts"

/** The index's genesis: 2025-06-17T00:00:00Z. */
export const GENESIS = new Date("2025-06-17T00:00:00Z")

/**
 * anvil's first development key. It only ever signs on the local chain, where it is both registry admin and
 * publisher; it holds nothing of value anywhere.
 */
const EMBEDDED_PUBLISHER_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

/**
 * anvil's second and third development keys: the treasury's relayer and the CreditToken's minter (the faucet). Each
 * signer has its own account, so withdrawals, mints and publishes never race for one account's nonces.
 */
const EMBEDDED_RELAYER_KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
const EMBEDDED_MINTER_KEY: Hex = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"

/** The CreditToken's decimals (contracts/CreditToken.sol keeps ERC-20's default). */
const CREDIT_TOKEN_DECIMALS = 18

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

const Address = Schema.TemplateLiteral("0x", Schema.String).pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/))

const fundingFields = [
  "treasuryAddress",
  "treasuryImplementationAddress",
  "treasuryDeployedBlock",
  "creditTokenAddress",
  "creditTokenDeployedBlock"
] as const

/**
 * DATA_DIR/chain/deployment.json: where the first start deployed the registry and the funding contracts. A record
 * written before the funding contracts existed has none of their fields (they are deployed at the next start); one
 * with only some of them was not written by this service.
 */
const SavedDeployment = Schema.Struct({
  registryAddress: Address,
  implementationAddress: Address,
  deployedBlock: Schema.BigInt,
  treasuryAddress: Schema.optional(Address),
  treasuryImplementationAddress: Schema.optional(Address),
  treasuryDeployedBlock: Schema.optional(Schema.BigInt),
  creditTokenAddress: Schema.optional(Address),
  creditTokenDeployedBlock: Schema.optional(Schema.BigInt)
}).pipe(
  Schema.filter((saved) => {
    const present = fundingFields.filter((field) => saved[field] !== undefined)
    return present.length === 0 || present.length === fundingFields.length
      ? undefined
      : `has ${present.join(", ")} but not ${fundingFields.filter((field) => !present.includes(field)).join(", ")}`
  })
)
type SavedDeployment = typeof SavedDeployment.Type

const savedFunding = (saved: SavedDeployment): Option.Option<FundingDeployment> =>
  saved.treasuryAddress !== undefined &&
  saved.treasuryImplementationAddress !== undefined &&
  saved.treasuryDeployedBlock !== undefined &&
  saved.creditTokenAddress !== undefined &&
  saved.creditTokenDeployedBlock !== undefined
    ? Option.some({
        treasuryAddress: saved.treasuryAddress,
        treasuryImplementationAddress: saved.treasuryImplementationAddress,
        treasuryDeployedBlock: saved.treasuryDeployedBlock,
        creditTokenAddress: saved.creditTokenAddress,
        creditTokenDeployedBlock: saved.creditTokenDeployedBlock
      })
    : Option.none()

const deploymentRecord = (deployment: Deployment, funding: Option.Option<FundingDeployment>) =>
  `${JSON.stringify(
    { ...deployment, ...Option.getOrElse(funding, () => ({})) },
    (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value),
    2
  )}\n`

/** The saved chain is not this service's, or not as it was left; the service must not write to it. */
export class ForeignEmbeddedChain extends Data.TaggedError("ForeignEmbeddedChain")<{ readonly message: string }> {}

/**
 * The chain id the registry's deployment was signed for. anvil takes its chain id from the command line, not from
 * the state it loads, so a changed CHAIN_ID shows only in the transactions already on the chain.
 */
const deploymentChainId = (client: PublicClient, deployedBlock: bigint) =>
  Effect.tryPromise(() => client.getBlock({ blockNumber: deployedBlock, includeTransactions: true })).pipe(
    Effect.map((block) => Option.fromNullable(block.transactions.find((tx) => tx.chainId !== undefined)?.chainId)),
    Effect.orElseSucceed(() => Option.none<number>())
  )

/**
 * Refuses a saved DATA_DIR/chain whose chain is not the one its deployment.json was written on: another CHAIN_ID, a
 * state file lost or replaced (no registry at the saved address), or code there that is not our registry or, when
 * the record has them, not our funding contracts.
 */
const checkOwnChain = (
  client: PublicClient,
  options: { readonly dir: string; readonly statePath: string; readonly chainId: number; readonly saved: SavedDeployment }
) =>
  Effect.gen(function* () {
    const where = `DATA_DIR/chain (${options.dir})`
    const refuse = (reason: string, remedy: string) =>
      Effect.fail(new ForeignEmbeddedChain({ message: `${where} is not this service's chain as it was left: ${reason}; ${remedy}` }))
    const createdOn = yield* deploymentChainId(client, options.saved.deployedBlock)
    if (Option.isSome(createdOn) && createdOn.value !== options.chainId) {
      return yield* refuse(
        `it was created with CHAIN_ID ${createdOn.value} and CHAIN_ID is now ${options.chainId}`,
        `set CHAIN_ID=${createdOn.value}, or use an empty DATA_DIR for a new chain`
      )
    }
    const restore = Fs.existsSync(options.statePath)
      ? "restore the state.json saved with that deployment.json, or use an empty DATA_DIR for a new chain"
      : "its state.json is missing: restore it, or use an empty DATA_DIR for a new chain"
    const mismatch = yield* Effect.tryPromise({
      try: () => registryCodeMismatch(client, options.saved.registryAddress),
      catch: (error) => (error instanceof Error ? error : new Error(String(error)))
    })
    if (mismatch !== undefined) {
      return yield* refuse(`deployment.json records the registry at ${options.saved.registryAddress}, but ${mismatch}`, restore)
    }
    const funding = savedFunding(options.saved)
    if (Option.isSome(funding)) {
      const fundingMismatch = yield* Effect.tryPromise({
        try: () => fundingCodeMismatch(client, funding.value),
        catch: (error) => (error instanceof Error ? error : new Error(String(error)))
      })
      if (fundingMismatch !== undefined) {
        return yield* refuse(`deployment.json records funding contracts, but ${fundingMismatch}`, restore)
      }
    }
  })

/**
 * Runs `deploy` in blocks stamped just after the chain's latest block, then moves the clock forward again. A
 * reattached chain keeps the wall clock, but one whose history replay was interrupted must still take blocks at the
 * replay's next (historical) instants: a deployment stamped "now" would be a parent newer than all of them. The clock
 * is moved forward again with `evm_increaseTime`, which, unlike `evm_setTime`, leaves the earliest timestamp a next
 * block may be given at the deployment's last block.
 */
const atChainTime = <A>(
  client: PublicClient,
  rpc: (method: string, params: ReadonlyArray<unknown>) => Effect.Effect<unknown, Error>,
  deploy: Effect.Effect<A, Error>
) =>
  Effect.gen(function* () {
    const latest = yield* Effect.tryPromise({
      try: () => client.getBlock({ blockTag: "latest" }),
      catch: (error) => (error instanceof Error ? error : new Error(String(error)))
    })
    const stampedFrom = Number(latest.timestamp) + 1
    const setBack = Math.floor((yield* Clock.currentTimeMillis) / 1000) - stampedFrom
    if (setBack <= 0) return yield* deploy
    yield* rpc("evm_setTime", [stampedFrom])
    const deployed = yield* deploy
    yield* rpc("evm_increaseTime", [setBack])
    return deployed
  })

export const acquireEmbeddedChain = (options: { readonly dataDir: string; readonly port: number; readonly chainId: number }) =>
  Effect.gen(function* () {
    const dir = Path.resolve(options.dataDir, "chain")
    Fs.mkdirSync(dir, { recursive: true })
    const statePath = Path.join(dir, "state.json")
    const deploymentPath = Path.join(dir, "deployment.json")
    const fresh = !Fs.existsSync(statePath)
    const started = yield* Clock.currentTimeMillis
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
      ? Option.some(
          yield* Schema.decodeUnknown(Schema.parseJson(SavedDeployment))(Fs.readFileSync(deploymentPath, "utf8")).pipe(
            Effect.mapError(
              (error) =>
                new ForeignEmbeddedChain({
                  message: `${deploymentPath} is not a deployment record this service wrote (${ParseResult.TreeFormatter.formatErrorSync(error)}); restore it or use an empty DATA_DIR`
                })
            )
          )
        )
      : Option.none()
    const attempt = <A>(deploy: () => Promise<A>) =>
      Effect.tryPromise({ try: deploy, catch: (error) => (error instanceof Error ? error : new Error(String(error))) })
    // Each deployment is saved in state.json before deployment.json names it: a crash in between leaves contracts
    // no record names (deployed again at the next start), never a record naming contracts the saved chain lacks.
    const record = (deployment: Deployment, funding: Option.Option<FundingDeployment>) =>
      Effect.zipRight(persist, Effect.sync(() => writeAtomically(deploymentPath, deploymentRecord(deployment, funding))))
    let deployment: Deployment
    let savedFundingDeployment: Option.Option<FundingDeployment>
    if (Option.isSome(saved)) {
      // A saved deployment is only reattached when the chain is still the one it was made on.
      yield* checkOwnChain(client, { dir, statePath, chainId: options.chainId, saved: saved.value })
      deployment = saved.value
      savedFundingDeployment = savedFunding(saved.value)
    } else {
      // No deployment yet: a new DATA_DIR, or one whose first start stopped before the registry was deployed.
      deployment = yield* attempt(() => deployRegistry(client, wallet, { admin: account.address, publisher: account.address }))
      savedFundingDeployment = Option.none()
      yield* record(deployment, savedFundingDeployment)
      yield* Effect.logInfo("registry deployed on the embedded chain").pipe(
        Effect.annotateLogs({ registry: deployment.registryAddress, block: deployment.deployedBlock.toString() })
      )
    }
    const fundingDeployment = Option.isSome(savedFundingDeployment)
      ? savedFundingDeployment.value
      : // A new chain, or one saved before the funding contracts existed.
        yield* Effect.gen(function* () {
          const roles = {
            admin: account.address,
            relayer: privateKeyToAccount(EMBEDDED_RELAYER_KEY).address,
            minter: privateKeyToAccount(EMBEDDED_MINTER_KEY).address
          }
          const deploy = attempt(() => deployFunding(client, wallet, roles))
          const deployed = Option.isSome(saved) ? yield* atChainTime(client, rpc, deploy) : yield* deploy
          yield* record(deployment, Option.some(deployed))
          yield* Effect.logInfo("funding contracts deployed on the embedded chain").pipe(
            Effect.annotateLogs({
              treasury: deployed.treasuryAddress,
              creditToken: deployed.creditTokenAddress,
              block: deployed.treasuryDeployedBlock.toString()
            })
          )
          return deployed
        })
    const ready = yield* Clock.currentTimeMillis
    yield* Effect.logInfo("embedded chain ready").pipe(
      Effect.annotateLogs({
        rpcUrl: node.rpcUrl,
        chainId: options.chainId,
        registry: deployment.registryAddress,
        treasury: fundingDeployment.treasuryAddress,
        creditToken: fundingDeployment.creditTokenAddress,
        state: statePath,
        fresh,
        startedInMs: ready - started
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
    const fundingContracts: FundingContracts = {
      chainId: options.chainId,
      token: fundingDeployment.creditTokenAddress,
      treasury: fundingDeployment.treasuryAddress,
      decimals: CREDIT_TOKEN_DECIMALS,
      treasuryDeployedBlock: Option.some(fundingDeployment.treasuryDeployedBlock),
      relayerKey: Option.some(Redacted.make(EMBEDDED_RELAYER_KEY)),
      minterKey: Option.some(Redacted.make(EMBEDDED_MINTER_KEY))
    }
    return { endpoint, control, deployment, funding: fundingDeployment, fundingContracts }
  })
