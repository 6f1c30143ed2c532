/**
 * The chain sync over a stubbed registry (layers/Test.ts `ChainStub`: a chain that only answers reads, no anvil) on a
 * scratch PostgreSQL database, with time moved by TestClock: revisions the chain holds that this database never
 * drafted are recorded (their manifest unavailable), and the oracle's health turns stale CHAIN_STALE_AFTER_SECONDS after
 * the last sync, not a millisecond before.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { ChainStub, TestAppConfig } from "../layers/Test.ts"
import { EmbeddedChainTag } from "../services/chain/EmbeddedChain.ts"
import type { RevisionHeader } from "../services/chain/Registry.ts"
import { BasketGovernance } from "../services/oracle/BasketGovernance.ts"
import { ChainSync } from "../services/oracle/ChainSync.ts"
import { OracleChangeFeed } from "../services/oracle/OracleChangeFeed.ts"
import { Publisher } from "../services/oracle/Publisher.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { SyncHealth } from "../services/oracle/SyncHealth.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ScratchDatabase } from "./support/database.ts"

const header = (revisionVersion: number, publishedAt: string): RevisionHeader => ({
  revisionVersion,
  methodologyVersion: 1,
  scuUsd18: 1_936_491_673_103_708n + BigInt(revisionVersion),
  contentHash: `0x${String(revisionVersion).repeat(64).slice(0, 64)}`,
  metadataHash: `0x${String(revisionVersion + 1).repeat(64).slice(0, 64)}`,
  publishedAt: new Date(publishedAt)
})

const Sync = Layer.mergeAll(ChainSync.Default, SyncHealth.Default).pipe(
  Layer.provideMerge(Publisher.Default),
  Layer.provideMerge(Layer.mergeAll(RevisionRepository.Default, BasketGovernance.Default, OracleChangeFeed.Default, Jobs.Default)),
  Layer.provide(ChainStub([header(1, "2026-08-01T00:00:00Z"), header(2, "2026-08-02T00:00:00Z")], { blockNumber: 42n })),
  Layer.provide(Layer.succeed(EmbeddedChainTag, Option.none())),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig({ CHAIN_STALE_AFTER_SECONDS: "60" })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

layer(Sync, { timeout: 60_000 })("the chain sync over a stubbed registry", (it) => {
  it.effect("records the chain's revisions, and the health is stale 60 s after the sync and not before", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-08-03T00:00:00Z"))
      const health = (yield* SyncHealth).health
      expect(yield* health).toMatchObject({ latestRevisionVersion: null, lastSyncAt: null, stale: true })

      expect(yield* (yield* ChainSync).sync).toEqual(Option.some({ onChain: 2, block: 42n }))
      const recorded = yield* (yield* RevisionRepository).byVersion(2)
      expect(Option.map(recorded, (r) => ({ status: r.status, summary: r.summary }))).toEqual(
        Option.some({ status: "CONFIRMED", summary: "recorded from the chain; manifest unavailable" })
      )
      expect(yield* health).toMatchObject({
        latestRevisionVersion: 2,
        lastSyncAt: new Date("2026-08-03T00:00:00Z"),
        stale: false
      })
      yield* TestClock.adjust(60_000)
      expect((yield* health).stale).toBe(false)
      yield* TestClock.adjust(1)
      expect((yield* health).stale).toBe(true)
      // A second sync finds nothing new and makes it fresh again.
      expect(yield* (yield* ChainSync).sync).toEqual(Option.some({ onChain: 2, block: 42n }))
      expect((yield* health).stale).toBe(false)
    }))
})
