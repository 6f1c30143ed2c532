/**
 * Tells this replica's API-key cache (services/accounts/ApiKeys.ts) that keys changed outside ApiKeys: an organization
 * revoking a leaving member's keys in its own transaction. The cache drops what it holds at once, so the next request
 * on this replica reads the key afresh; other replicas see the revision at their next poll, as for any change.
 * Without dependencies, so the identity services and the key services share one instance.
 */
import { Effect } from "effect"

export class KeyCacheInvalidation extends Effect.Service<KeyCacheInvalidation>()("KeyCacheInvalidation", {
  sync: () => {
    const listeners = new Set<() => void>()
    return {
      /** Registers what to drop when keys changed elsewhere. */
      subscribe: (listener: () => void) => Effect.sync(() => void listeners.add(listener)),
      /** Keys changed (after the change committed: a read before the commit would cache the old row again). */
      changed: Effect.sync(() => {
        for (const listener of listeners) listener()
      })
    }
  }
}) {}
