/**
 * A counter every writer of oracle data bumps (a confirmed revision, a finished scan, a chain sync), so the
 * read snapshot knows, on the next read, that it must rebuild: reads are never stale after such a change.
 */
import { Effect, Ref } from "effect"

export class OracleChangeFeed extends Effect.Service<OracleChangeFeed>()("OracleChangeFeed", {
  effect: Effect.gen(function* () {
    const version = yield* Ref.make(0)
    return { version: Ref.get(version), bump: Ref.update(version, (n) => n + 1) } as const
  })
}) {}
