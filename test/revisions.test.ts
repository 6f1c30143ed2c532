/**
 * Revisions on the embedded chain (SPEC "Price index" 1-11, "On-chain anchoring"): the history replayed at its
 * own dates, manifests that verify against the chain, the reconstitution log, a new revision when the basket
 * changes, and no second publication of a revision that reached the chain.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { contentHash, jcs, metadataHash } from "../domain/index/manifest.ts"
import { draftRevision } from "../domain/index/revision.ts"
import { scu18 } from "../domain/index/scu.ts"
import { formatUsd18 } from "../domain/money.ts"
import { Registry } from "../services/chain/Registry.ts"
import { HistoryReplay } from "../services/oracle/HistoryReplay.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { Publisher } from "../services/oracle/Publisher.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { type AnchoringHarness, startAnchoring } from "./support/anchoring.ts"

let harness: AnchoringHarness

beforeAll(async () => {
  harness = await startAnchoring()
  await harness.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
}, 60_000)

afterAll(async () => {
  await harness?.close()
})

const confirmed = () => harness.run(Effect.flatMap(RevisionRepository, (r) => r.confirmed))

describe("the history replay", () => {
  it("publishes every basket change since genesis in a block stamped with its date", async () => {
    const published = await harness.run(Effect.flatMap(HistoryReplay, (r) => r.replay))
    expect(published).toBe(4)
    const revisions = await confirmed()
    expect(revisions.map((r) => [r.revisionVersion, r.publishedAt!.toISOString(), r.summary])).toEqual([
      [1, "2025-06-17T00:00:00.000Z", "Genesis basket: 2 families"],
      [2, "2025-07-22T00:00:00.000Z", "2 families added"],
      [3, "2025-09-08T00:00:00.000Z", "1 version change"],
      // Big 2's halved input price took effect 2025-12-01 and was held for 24 hours.
      [4, "2025-12-02T00:00:00.000Z", "1 price change"]
    ])
    expect(await harness.run(Effect.flatMap(Registry, (r) => r.lastRevisionVersion))).toBe(4)
  })

  it("anchors manifests that verify: keccak256(JCS(manifest)) is the on-chain metadataHash, and the SCU recomputes", async () => {
    for (const revision of await confirmed()) {
      const manifest = Option.getOrThrow(revision.manifest)
      expect(jcs(manifest)).toBe(Option.getOrThrow(revision.manifestJcs))
      expect(metadataHash(manifest)).toBe(revision.metadataHash)
      expect(contentHash(manifest)).toBe(revision.contentHash)
      const members = manifest.models.map((m) => ({ inputPrice18: BigInt(m.inputPrice), outputPrice18: BigInt(m.outputPrice) }))
      expect(scu18(members as never)).toBe(revision.scuUsd18)
      const header = await harness.run(Effect.flatMap(Registry, (r) => r.getRevision(revision.revisionVersion)))
      expect(header).toEqual({
        revisionVersion: revision.revisionVersion,
        methodologyVersion: 1,
        scuUsd18: revision.scuUsd18,
        contentHash: revision.contentHash,
        metadataHash: revision.metadataHash,
        publishedAt: revision.publishedAt
      })
    }
  })

  it("writes a reconstitution-log entry per revision, with the SCU before and after and the transaction", async () => {
    const log = await harness.run(Effect.flatMap(RevisionRepository, (r) => r.log))
    const revisions = await confirmed()
    expect(log.map((e) => e.revisionVersion)).toEqual([1, 2, 3, 4])
    expect(log[0]).toMatchObject({ previousVersion: null, scuBeforeUsd18: null, scuAfterUsd18: revisions[0]!.scuUsd18 })
    expect(log[0]!.changes.map((c) => `${c.type} ${c.modelKey}`)).toEqual(["ModelAdded acme/big-1", "ModelAdded acme/small-1"])
    expect(log[2]).toMatchObject({ previousVersion: 2, scuBeforeUsd18: revisions[1]!.scuUsd18, scuAfterUsd18: revisions[2]!.scuUsd18 })
    expect(log[2]!.changes.map((c) => `${c.type} ${c.modelKey}`)).toEqual(["ModelRemoved acme/big-1", "ModelAdded acme/big-2"])
    expect(log[3]!.changes.map((c) => c.type)).toEqual(["PriceChanged"])
    for (const [i, entry] of log.entries()) {
      expect(entry.txHash).toBe(revisions[i]!.txHash)
      expect(entry.publishedAt).toEqual(revisions[i]!.publishedAt)
    }
  })

  it("does not replay again once done", async () => {
    expect(await harness.run(Effect.flatMap(HistoryReplay, (r) => r.replay))).toBe(0)
    expect(await confirmed()).toHaveLength(4)
  })
})

describe("publication", () => {
  it("publishes a revision now when a member's price changes, and nothing when the basket is unchanged", async () => {
    expect(
      Option.isNone(await harness.run(Effect.flatMap(Publisher, (p) => p.publishIfChanged({ asOf: new Date(), liveness: { _tag: "AllSeen" } }))))
    ).toBe(true)
    harness.edit("cards/acme.yaml", (text) =>
      text.replace(
        "        input: 0.1\n        output: 0.4\n",
        "        input: 0.1\n        output: 0.4\n      - from: 2026-01-15\n        sourceUrl: https://acme.example/pricing\n        checkedAt: 2026-01-15\n        input: 0.09\n        output: 0.36\n"
      )
    )
    await harness.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
    const before = Date.now()
    const revision = Option.getOrThrow(
      await harness.run(Effect.flatMap(Publisher, (p) => p.publishIfChanged({ asOf: new Date(), liveness: { _tag: "AllSeen" } })))
    )
    expect(revision).toMatchObject({ revisionVersion: 5, status: "CONFIRMED", summary: "1 price change" })
    // After the replay the chain keeps the present's time.
    expect(Math.abs(revision.publishedAt!.getTime() - before)).toBeLessThan(60_000)
    const small = Option.getOrThrow(revision.manifest).models.find((m) => m.modelKey === "acme/small-1")!
    expect(formatUsd18(BigInt(small.inputPrice) as never)).toBe("0.09")
  })

  it("adopts a revision that reached the chain before its broadcast was recorded, never sending it twice", async () => {
    const latest = (await confirmed()).at(-1)!
    const manifest = Option.getOrThrow(latest.manifest)
    // A draft of revision 6 whose publish went out, but the process died before recording it.
    const draft = draftRevision({
      revisionVersion: 6,
      methodologyVersion: 1,
      members: manifest.models.map((m) => ({
        ...m,
        inputPrice18: (BigInt(m.inputPrice) + (m.modelKey === "acme/small-1" ? 1n : 0n)) as never,
        outputPrice18: BigInt(m.outputPrice) as never
      })),
      changes: [{ type: "PriceChanged", family: "acme.small", modelKey: "acme/small-1", previousModelKey: null, description: "test" }]
    })
    const stored = await harness.run(Effect.flatMap(RevisionRepository, (r) => r.insertDraft(draft, { requiresApproval: false, intendedAt: null })))
    await harness.run(
      Effect.flatMap(Registry, (registry) =>
        Effect.flatMap(
          registry.publish({
            revisionVersion: 6,
            methodologyVersion: 1,
            scuUsd18: draft.scu18,
            contentHash: draft.contentHash,
            metadataHash: draft.metadataHash
          }),
          (txHash) => registry.awaitConfirmation(txHash, "10 seconds")
        )
      )
    )
    const adopted = await harness.run(Effect.flatMap(Publisher, (p) => p.advance(stored)))
    expect(adopted.status).toBe("CONFIRMED")
    expect(adopted.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await harness.run(Effect.flatMap(Registry, (r) => r.lastRevisionVersion))).toBe(6)
    const transactions = await harness.run(
      Effect.flatMap(Registry, (r) => Effect.promise(() => r.client.getBlockNumber()))
    )
    expect(transactions).toBeGreaterThan(0n)
  })

  it("keeps revision content immutable in the database", async () => {
    const attempt = await harness.run(
      Effect.exit(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE revisions SET scu_usd18 = 1 WHERE revision_version = 1`))
    )
    expect(attempt._tag).toBe("Failure")
    const reopen = await harness.run(
      Effect.exit(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE revisions SET status = 'PENDING' WHERE revision_version = 1`))
    )
    expect(reopen._tag).toBe("Failure")
  })
})

describe("a restart on the same data", () => {
  it("keeps chain and database, and replays nothing", async () => {
    const reuse = { database: harness.database, dataDir: harness.dataDir, priceDir: harness.priceDir }
    const count = (await confirmed()).length
    const first = harness
    await first.stop()
    harness = await startAnchoring({}, reuse)
    expect(await harness.run(Effect.flatMap(Registry, (r) => r.lastRevisionVersion))).toBe(count)
    expect(await harness.run(Effect.flatMap(HistoryReplay, (r) => r.replay))).toBe(0)
    expect((await confirmed()).map((r) => r.revisionVersion)).toEqual([1, 2, 3, 4, 5, 6])
    await harness.stop()
    harness = first
  }, 60_000)
})
