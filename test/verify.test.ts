/**
 * `npm run oracle -- verify` (issue 4): every confirmed revision recomputed from its manifest and compared with
 * the chain; a mismatch of any kind is reported and fails the command.
 */
import { Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyRevision } from "../domain/index/revision.ts"
import { HistoryReplay } from "../services/oracle/HistoryReplay.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { RevisionRepository, type StoredRevision } from "../services/oracle/RevisionRepository.ts"
import { type AnchoringHarness, startAnchoring } from "./support/anchoring.ts"
import { cleanEnv, startProcess } from "./support/process.ts"
import { freePort } from "./support/ports.ts"

let harness: AnchoringHarness
let revisions: ReadonlyArray<StoredRevision>

beforeAll(async () => {
  harness = await startAnchoring()
  await harness.run(Effect.flatMap(PriceScan, (scan) => scan.run("test")))
  await harness.run(Effect.flatMap(HistoryReplay, (replay) => replay.replay))
  revisions = await harness.run(Effect.flatMap(RevisionRepository, (r) => r.confirmed))
  await harness.stop()
}, 60_000)

afterAll(async () => {
  await harness?.close()
})

describe("verifyRevision", () => {
  const stored = () => {
    const r = revisions[2]!
    return { ...r, manifestJcs: Option.getOrThrow(r.manifestJcs), publishedAt: r.publishedAt! }
  }

  it("passes a revision that matches its manifest and the chain", () => {
    expect(verifyRevision(stored(), stored())).toEqual([])
  })

  it("catches a tampered price, a wrong SCU, a different on-chain header and a non-canonical manifest", () => {
    const good = stored()
    const tampered = good.manifestJcs.replace(/"inputPrice":"(\d+)"/, (_, digits: string) => `"inputPrice":"${BigInt(digits) * 2n}"`)
    expect(verifyRevision({ ...good, manifestJcs: tampered }, good).join("\n")).toMatch(/keccak256\(JCS\(manifest\)\) is .*\n.*content projection[\s\S]*SCU recomputes/)
    expect(verifyRevision({ ...good, scuUsd18: good.scuUsd18 + 1n }, good)).toContain(
      `the SCU recomputes to ${good.scuUsd18}, not ${good.scuUsd18 + 1n}`
    )
    expect(verifyRevision(good, { ...good, publishedAt: new Date(good.publishedAt.getTime() + 1000) })[0]).toMatch(/^on-chain publishedAt is/)
    expect(verifyRevision({ ...good, manifestJcs: JSON.stringify(JSON.parse(good.manifestJcs), null, 1) }, good)).toContain(
      "the stored manifest is not in canonical (JCS) form"
    )
  })
})

describe("npm run oracle -- verify", () => {
  const runCli = async (args: ReadonlyArray<string>) => {
    const cli = startProcess(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      cleanEnv({
        DATABASE_URL: harness.database.url,
        DATA_DIR: harness.dataDir,
        PRICE_DATA_DIR: harness.priceDir,
        EMBEDDED_CHAIN_PORT: String(await freePort()),
        LOG_LEVEL: "WARN"
      })
    )
    return { code: await cli.exited, output: cli.output() }
  }

  it("reports status and verifies every revision of the replayed history", async () => {
    const status = await runCli(["oracle", "status"])
    expect(status.code).toBe(0)
    expect(status.output).toMatch(/revisions on chain: 4; confirmed in the database: 4/)
    expect(status.output).toMatch(/genesis: revision 1 \(CONFIRMED\) published 2025-06-17T00:00:00.000Z/)
    const verified = await runCli(["oracle", "verify"])
    expect(verified.code).toBe(0)
    expect(verified.output).toMatch(/\[1\/4\] revision 1: ok/)
    expect(verified.output).toMatch(/4 revisions checked: 4 verified, 0 mismatched, 0 without a manifest/)
  }, 60_000)

  it("exits non-zero when the chain does not hold what the database says", async () => {
    // Lose the chain: the next start creates a new one with an empty registry.
    Fs.rmSync(Path.join(harness.dataDir, "chain"), { recursive: true, force: true })
    const verified = await runCli(["oracle", "verify"])
    expect(verified.code).toBe(1)
    expect(verified.output).toMatch(/MISMATCH: the registry holds 0 revisions, the database 4 confirmed/)
    expect(verified.output).toMatch(/\[1\/4\] revision 1: MISMATCH\n {4}the registry does not hold this revision/)
    expect(verified.output).toMatch(/error: verification failed/)
  }, 60_000)
})
