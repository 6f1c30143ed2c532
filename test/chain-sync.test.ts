/**
 * Against a configured network (here a separate anvil given by RPC_URL): publication failures surface as
 * contract_error with SPEC's chainFailure reason and publish nothing; the chain sync records lastSyncAt, and when
 * the RPC is down the service keeps its confirmed revisions and reports stale; a broadcast publish shows only
 * its age.
 */
import { Effect, Option } from "effect"
import { type Abi, type Hex, keccak256, stringToBytes } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixedClock } from "../layers/Test.ts"
import { ChainFailure } from "../services/chain/Registry.ts"
import { ChainSync } from "../services/oracle/ChainSync.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { Publisher, toContractError } from "../services/oracle/Publisher.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { SyncHealth } from "../services/oracle/SyncHealth.ts"
import { type AnchoringHarness, startAnchoring } from "./support/anchoring.ts"
import { DEV_KEYS, deployTestRegistry, startTestChain, type TestChain } from "./support/chain.ts"

let chain: TestChain
let registry: { proxy: Hex; abi: Abi }
let harness: AnchoringHarness
const extra: Array<AnchoringHarness> = []

const chainEnv = (publisherKey: Hex) => ({
  RPC_URL: chain.rpcUrl,
  REGISTRY_ADDRESS: registry.proxy,
  PUBLISHER_PRIVATE_KEY: publisherKey,
  CHAIN_CONFIRMATIONS: "1",
  CHAIN_CONFIRMATION_TIMEOUT_MS: "5000",
  CHAIN_STALE_AFTER_SECONDS: "1"
})

beforeAll(async () => {
  chain = await startTestChain()
  registry = await deployTestRegistry(chain, {
    admin: privateKeyToAccount(DEV_KEYS[0]).address,
    publisher: privateKeyToAccount(DEV_KEYS[1]).address
  })
  harness = await startAnchoring(chainEnv(DEV_KEYS[1]))
  await harness.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
}, 60_000)

afterAll(async () => {
  for (const h of extra) await h.stop()
  await harness?.close()
  await chain?.close()
})

const publishNow = (h: AnchoringHarness) =>
  h.run(Effect.flatMap(Publisher, (p) => p.publishIfChanged({ asOf: new Date(), liveness: { _tag: "AllSeen" } })).pipe(Effect.either))

/** A second service on the same database and chain, publishing with another key. */
const withPublisherKey = async (key: Hex) => {
  const other = await startAnchoring(chainEnv(key), { database: harness.database, dataDir: harness.dataDir, priceDir: harness.priceDir })
  extra.push(other)
  return other
}

describe("publication on a configured network", () => {
  it("publishes and confirms the first revision, stamped with the block's time", async () => {
    const result = await publishNow(harness)
    const revision = Option.getOrThrow(result._tag === "Right" ? result.right : Option.none())
    expect(revision).toMatchObject({ revisionVersion: 1, status: "CONFIRMED" })
    const block = await chain.public.getBlock({ blockTag: "latest" })
    expect(revision.publishedAt!.getTime()).toBe(Number(block.timestamp) * 1000)
  })

  it("an unauthorized publisher gets contract_error (contributor_frozen) and nothing is published", async () => {
    harness.edit("cards/acme.yaml", (text) => text.replace("output: 0.4\n", "output: 0.44\n"))
    await harness.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
    const stranger = await withPublisherKey(DEV_KEYS[2])
    const result = await publishNow(stranger)
    expect(result._tag).toBe("Left")
    const failure = (result as { left: ChainFailure }).left
    expect(failure.reason).toBe("contributor_frozen")
    expect(toContractError(failure).details).toEqual({ chainFailure: { reason: "contributor_frozen" } })
    const pending = Option.getOrThrow(await harness.run(Effect.flatMap(RevisionRepository, (r) => r.inFlight)))
    expect(pending).toMatchObject({ revisionVersion: 2, status: "PENDING", failureReason: "contributor_frozen" })
    expect((await harness.run(Effect.flatMap(RevisionRepository, (r) => r.confirmed))).map((r) => r.revisionVersion)).toEqual([1])
    expect(
      await chain.public.readContract({ address: registry.proxy, abi: registry.abi, functionName: "lastRevisionVersion" })
    ).toBe(1n)
  })

  it("a publisher without funds gets contract_error (relayer_unfunded)", async () => {
    const pauper = generatePrivateKey()
    const admin = chain.wallet(DEV_KEYS[0])
    const role = keccak256(stringToBytes("PUBLISHER_ROLE"))
    const grant = await admin.writeContract({
      address: registry.proxy,
      abi: registry.abi,
      functionName: "grantRole",
      args: [role, privateKeyToAccount(pauper).address],
      account: admin.account!,
      chain: admin.chain
    })
    await chain.public.waitForTransactionReceipt({ hash: grant })
    const result = await publishNow(await withPublisherKey(pauper))
    expect(result._tag === "Left" && result.left.reason).toBe("relayer_unfunded")
  })

  it("the rightful publisher then publishes the pending revision, once", async () => {
    const result = await publishNow(harness)
    expect(result._tag === "Right" && Option.getOrThrow(result.right)).toMatchObject({ revisionVersion: 2, status: "CONFIRMED" })
    expect(
      await chain.public.readContract({ address: registry.proxy, abi: registry.abi, functionName: "lastRevisionVersion" })
    ).toBe(2n)
  })
})

describe("the chain sync", () => {
  it("records lastSyncAt and reports fresh health", async () => {
    await harness.run(Effect.flatMap(ChainSync, (s) => s.sync))
    const health = await harness.run(Effect.flatMap(SyncHealth, (s) => s.health))
    expect(health).toMatchObject({ latestRevisionVersion: 2, methodologyVersion: 1, stale: false, pendingRevision: null })
    expect(Date.now() - health.lastSyncAt!.getTime()).toBeLessThan(5_000)
  })

  it("shows a broadcast publish awaiting confirmation by its age only", async () => {
    await harness.run(
      Effect.gen(function* () {
        const repo = yield* RevisionRepository
        const latest = Option.getOrThrow(yield* repo.latestConfirmed)
        const manifest = Option.getOrThrow(latest.manifest)
        const { draftRevision } = yield* Effect.promise(() => import("../domain/index/revision.ts"))
        const draft = draftRevision({
          revisionVersion: 3,
          methodologyVersion: 1,
          members: manifest.models.map((m) => ({ ...m, inputPrice18: (BigInt(m.inputPrice) + 7n) as never, outputPrice18: BigInt(m.outputPrice) as never })),
          changes: []
        })
        const row = yield* repo.insertDraft(draft, { requiresApproval: false, intendedAt: null })
        yield* repo.markBroadcast(row.id, `0x${"ab".repeat(32)}`)
      })
    )
    const health = await harness.run(Effect.flatMap(SyncHealth, (s) => s.health))
    expect(Object.keys(health.pendingRevision!)).toEqual(["ageMs"])
    expect(health.pendingRevision!.ageMs).toBeGreaterThanOrEqual(0)
    expect(health.latestRevisionVersion).toBe(2)
  })

  it("keeps serving from the database when the RPC is down, reporting stale and chain_unavailable", async () => {
    await chain.close()
    const synced = await harness.run(Effect.flatMap(ChainSync, (s) => s.sync))
    expect(Option.isNone(synced)).toBe(true)
    // Read 1.1 s later than now by the service's clock: past CHAIN_STALE_AFTER_SECONDS since the last sync.
    const health = await harness.run(Effect.flatMap(SyncHealth, (s) => s.health).pipe(Effect.withClock(fixedClock(new Date(Date.now() + 1_100)))))
    expect(health).toMatchObject({ latestRevisionVersion: 2, stale: true })
    const state = Option.getOrThrow(await harness.run(Effect.flatMap(RevisionRepository, (r) => r.syncState)))
    expect(state.lastError).toMatch(/^chain_unavailable: /)
    expect((await harness.run(Effect.flatMap(RevisionRepository, (r) => r.confirmed))).map((r) => r.revisionVersion)).toEqual([1, 2])
    const result = await publishNow(harness)
    expect(result._tag === "Left" && result.left.reason).toMatch(/^(chain_unavailable|confirmation_pending)$/)
  })
})
