/**
 * What the public is told about the registry contract: chain, address, implementation version and the keccak256
 * of its deployed code (null when there is none or the RPC fails), re-read at most every 5 minutes.
 */
import { Clock, Effect, Option, Ref } from "effect"
import { Registry, registryAbi } from "../chain/Registry.ts"

export interface ContractMetadataView {
  readonly chainId: number
  readonly address: string
  readonly version: string | null
  readonly bytecodeHash: string | null
  readonly checkedAt: string
}

const TTL_MS = 5 * 60 * 1000

export class ContractMetadata extends Effect.Service<ContractMetadata>()("ContractMetadata", {
  effect: Effect.gen(function* () {
    const registry = yield* Registry
    const cache = yield* Ref.make<{ at: number; view: ContractMetadataView } | undefined>(undefined)

    const read = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const codeHash = yield* registry.deployedCodeHash.pipe(Effect.orElseSucceed(() => Option.none()))
      const version = Option.isNone(codeHash)
        ? null
        : yield* Effect.tryPromise(
            () =>
              registry.client.readContract({
                address: registry.endpoint.registryAddress,
                abi: registryAbi,
                functionName: "version"
              }) as Promise<string>
          ).pipe(Effect.orElseSucceed(() => null))
      return {
        at: now,
        view: {
          chainId: registry.endpoint.chainId,
          address: registry.endpoint.registryAddress,
          version,
          bytecodeHash: Option.getOrNull(codeHash),
          checkedAt: new Date(now).toISOString()
        }
      }
    })

    const current = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const held = yield* Ref.get(cache)
      if (held !== undefined && now - held.at < TTL_MS) return held.view
      const fresh = yield* read
      yield* Ref.set(cache, fresh)
      return fresh.view
    })

    return { current } as const
  })
}) {}
