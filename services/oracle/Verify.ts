/**
 * `npm run oracle -- verify`: every confirmed revision checked against its own manifest and against the chain.
 */
import { Effect, Option } from "effect"
import { verifyRevision } from "../../domain/index/revision.ts"
import { Registry } from "../chain/Registry.ts"
import { RevisionRepository } from "./RevisionRepository.ts"

export interface VerifyOutcome {
  readonly checked: number
  readonly failed: ReadonlyArray<{ readonly revisionVersion: number; readonly problems: ReadonlyArray<string> }>
  readonly unavailable: ReadonlyArray<number>
}

export class Verify extends Effect.Service<Verify>()("Verify", {
  effect: Effect.gen(function* () {
    const repository = yield* RevisionRepository
    const registry = yield* Registry

    /** Checks every confirmed revision, calling `progress` after each. */
    const verifyAll = Effect.fn("Verify.verifyAll")(function* (progress: (line: string) => Effect.Effect<void>) {
      const revisions = yield* repository.confirmed
      const onChainCount = yield* registry.lastRevisionVersion
      const failed: Array<{ revisionVersion: number; problems: ReadonlyArray<string> }> = []
      const unavailable: Array<number> = []
      if (onChainCount !== revisions.length) {
        const problem = `the registry holds ${onChainCount} revisions, the database ${revisions.length} confirmed`
        failed.push({ revisionVersion: 0, problems: [problem] })
        yield* progress(`MISMATCH: ${problem}`)
      }
      for (const [index, revision] of revisions.entries()) {
        const position = `[${index + 1}/${revisions.length}] revision ${revision.revisionVersion}`
        if (Option.isNone(revision.manifestJcs)) {
          unavailable.push(revision.revisionVersion)
          yield* progress(`${position}: manifest unavailable, on-chain header only`)
          continue
        }
        const onChain = yield* registry.getRevision(revision.revisionVersion).pipe(
          Effect.map(Option.some),
          // The registry refusing the read means it does not hold this revision: a mismatch, not an outage.
          Effect.catchIf((failure) => failure.reason === "contract_rejected", () => Effect.succeed(Option.none()))
        )
        const problems = Option.match(onChain, {
          onNone: () => ["the registry does not hold this revision"],
          onSome: (header) =>
            verifyRevision({ ...revision, manifestJcs: Option.getOrThrow(revision.manifestJcs), publishedAt: revision.publishedAt! }, header)
        })
        if (problems.length > 0) failed.push({ revisionVersion: revision.revisionVersion, problems })
        yield* progress(problems.length === 0 ? `${position}: ok (${revision.metadataHash})` : `${position}: MISMATCH\n    ${problems.join("\n    ")}`)
      }
      return { checked: revisions.length, failed, unavailable } satisfies VerifyOutcome
    })

    return { verifyAll } as const
  })
}) {}
