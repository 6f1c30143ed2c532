/**
 * A counter every writer of oracle data bumps (a confirmed revision, a finished scan, a chain sync), so the
 * read snapshot knows, on the next read, that it must rebuild: reads are never stale after such a change.
 * The counter is also readable synchronously, for the fast path that answers ahead of the Effect stack.
 */
import { Effect } from "effect"

export class OracleChangeFeed extends Effect.Service<OracleChangeFeed>()("OracleChangeFeed", {
  sync: () => {
    let version = 0
    return {
      version: Effect.sync(() => version),
      versionNow: (): number => version,
      bump: Effect.sync(() => void version++)
    } as const
  }
}) {}
