/**
 * The OracleRegistry on whichever chain backs the service: reads of its headers and the role-gated publish,
 * with every failure classified into SPEC's chainFailure reasons.
 */
import { Context, Data, Duration, Effect, Option, Redacted } from "effect"
import {
  type Abi,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  InsufficientFundsError,
  keccak256,
  type PublicClient
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { defineChain } from "viem/utils"
import { loadArtifact } from "../../contracts/compile.ts"
import type { ChainFailureReason } from "../../domain/errors.ts"

export class ChainFailure extends Data.TaggedError("ChainFailure")<{
  readonly reason: ChainFailureReason
  readonly message: string
}> {}

/** Where the registry is and who may publish to it. */
export interface ChainEndpoint {
  readonly rpcUrl: string
  readonly chainId: number
  readonly registryAddress: Hex
  readonly publisherKey: Option.Option<Redacted.Redacted<Hex>>
  /** Blocks that must include a publish (its own counts as one) before it is CONFIRMED. */
  readonly confirmations: number
  readonly embedded: boolean
}

export class ChainEndpointTag extends Context.Tag("ChainEndpoint")<ChainEndpointTag, ChainEndpoint>() {}

export interface RevisionHeader {
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly scuUsd18: bigint
  readonly contentHash: Hex
  readonly metadataHash: Hex
  readonly publishedAt: Date
}

export interface PublishedReceipt {
  readonly txHash: Hex
  readonly blockNumber: bigint
  readonly blockTimestamp: Date
}

/** Maps an RPC or contract error to the reason SPEC's contract_error carries. */
export const classifyChainError = (error: unknown, stage: "broadcast" | "confirm" | "read"): ChainFailure => {
  const message = error instanceof Error ? error.message.split("\n")[0]! : String(error)
  if (error instanceof BaseError) {
    if (error.walk((e) => e instanceof InsufficientFundsError)) return new ChainFailure({ reason: "relayer_unfunded", message })
    const revert = error.walk((e) => e instanceof ContractFunctionRevertedError)
    if (revert instanceof ContractFunctionRevertedError) {
      const name = revert.data?.errorName ?? revert.reason ?? "reverted"
      return new ChainFailure({
        reason: name === "AccessControlUnauthorizedAccount" ? "contributor_frozen" : "contract_rejected",
        message: `the registry refused the call: ${name}`
      })
    }
  }
  // A node's own wording sits in the details of the error chain (e.g. a refused eth_sendRawTransaction).
  const details = error instanceof BaseError ? `${error.details ?? ""} ${error.shortMessage}` : ""
  if (/insufficient funds|exceeds the balance of the account/i.test(`${message} ${details}`)) {
    return new ChainFailure({ reason: "relayer_unfunded", message: /insufficient funds/i.test(message) ? message : `${message} ${details}`.trim() })
  }
  if (/revert/i.test(message)) return new ChainFailure({ reason: "contract_rejected", message })
  return new ChainFailure({ reason: stage === "confirm" ? "confirmation_pending" : "chain_unavailable", message })
}

const toHeader = (tuple: ReadonlyArray<unknown>): RevisionHeader => ({
  revisionVersion: Number(tuple[0] as bigint),
  methodologyVersion: Number(tuple[1]),
  scuUsd18: tuple[2] as bigint,
  contentHash: tuple[3] as Hex,
  metadataHash: tuple[4] as Hex,
  publishedAt: new Date(Number(tuple[5] as bigint) * 1000)
})

export const registryAbi = loadArtifact().contracts.OracleRegistry!.abi as unknown as Abi

export class Registry extends Effect.Service<Registry>()("Registry", {
  effect: Effect.gen(function* () {
    const endpoint = yield* ChainEndpointTag
    const chain = defineChain({
      id: endpoint.chainId,
      name: endpoint.embedded ? "embedded" : `chain ${endpoint.chainId}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [endpoint.rpcUrl] } }
    })
    const transport = http(endpoint.rpcUrl, { retryCount: 1, timeout: 10_000 })
    const client = createPublicClient({ chain, transport }) as PublicClient
    const address = endpoint.registryAddress

    const read = <A>(functionName: string, args: ReadonlyArray<unknown> = []) =>
      Effect.tryPromise({
        try: () => client.readContract({ address, abi: registryAbi, functionName, args }) as Promise<A>,
        catch: (error) => classifyChainError(error, "read")
      })

    const lastRevisionVersion = Effect.map(read<bigint>("lastRevisionVersion"), Number)
    const getRevision = (revisionVersion: number) =>
      Effect.map(read<ReadonlyArray<unknown>>("getRevision", [BigInt(revisionVersion)]), toHeader)

    /** keccak256 of the registry's deployed code; None when there is none. */
    const deployedCodeHash = Effect.tryPromise({
      try: () => client.getCode({ address }),
      catch: (error) => classifyChainError(error, "read")
    }).pipe(Effect.map((code) => (code === undefined || code === "0x" ? Option.none<Hex>() : Option.some(keccak256(code)))))

    const latestBlock = Effect.tryPromise({
      try: () => client.getBlock({ blockTag: "latest" }),
      catch: (error) => classifyChainError(error, "read")
    })

    const publisher = Option.map(endpoint.publisherKey, (key) =>
      createWalletClient({ chain, transport, account: privateKeyToAccount(Redacted.value(key)) })
    )

    /** Simulates, then broadcasts, the publish of one header; returns its transaction hash. */
    const publish = (header: Omit<RevisionHeader, "publishedAt">) =>
      Effect.gen(function* () {
        if (Option.isNone(publisher)) {
          return yield* new ChainFailure({ reason: "contributor_frozen", message: "no publisher key is configured" })
        }
        const wallet = publisher.value
        const args = [
          BigInt(header.revisionVersion),
          header.methodologyVersion,
          header.scuUsd18,
          header.contentHash,
          header.metadataHash
        ] as const
        const { request } = yield* Effect.tryPromise({
          try: () =>
            client.simulateContract({ address, abi: registryAbi, functionName: "publish", args, account: wallet.account }),
          catch: (error) => classifyChainError(error, "broadcast")
        })
        return yield* Effect.tryPromise({
          try: () => wallet.writeContract(request as Parameters<typeof wallet.writeContract>[0]),
          catch: (error) => classifyChainError(error, "broadcast")
        })
      })

    /** Waits until `txHash` has the configured confirmations; fails with confirmation_pending after `timeout`. */
    const awaitConfirmation = (txHash: Hex, timeout: Duration.DurationInput) =>
      Effect.gen(function* () {
        const receipt = yield* Effect.tryPromise({
          try: () =>
            client.waitForTransactionReceipt({
              hash: txHash,
              confirmations: endpoint.confirmations,
              timeout: Duration.toMillis(timeout),
              pollingInterval: endpoint.embedded ? 50 : 1_000
            }),
          catch: (error) => classifyChainError(error, "confirm")
        })
        if (receipt.status !== "success") {
          return yield* new ChainFailure({ reason: "contract_rejected", message: `transaction ${txHash} reverted` })
        }
        const block = yield* Effect.tryPromise({
          try: () => client.getBlock({ blockNumber: receipt.blockNumber }),
          catch: (error) => classifyChainError(error, "confirm")
        })
        return {
          txHash,
          blockNumber: receipt.blockNumber,
          blockTimestamp: new Date(Number(block.timestamp) * 1000)
        } satisfies PublishedReceipt
      })

    /** The receipt of a transaction sent earlier, if it has been mined. */
    const receiptOf = (txHash: Hex) =>
      Effect.tryPromise({
        try: () => client.getTransactionReceipt({ hash: txHash }).then(
          (receipt) => Option.some(receipt),
          (error: unknown) => (error instanceof Error && /could not be found/i.test(error.message) ? Option.none() : Promise.reject(error))
        ),
        catch: (error) => classifyChainError(error, "read")
      })

    return {
      endpoint,
      client,
      lastRevisionVersion,
      getRevision,
      deployedCodeHash,
      latestBlock,
      publish,
      awaitConfirmation,
      receiptOf
    } as const
  })
}) {}
