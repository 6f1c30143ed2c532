/**
 * API keys (issue 9 items 7-8) at the service: issuance returns the raw key once and stores its hash; the state rules
 * (freeze, reactivate, revoke, an administrator's freeze); `allowedModels` resolved and collapsed; and the check
 * every inference request makes, answered from a per-replica cache that a change made through another replica
 * invalidates within a second.
 *
 * Two replicas of ApiKeys (each its own cache and its own poll) over one scratch PostgreSQL database, on the real
 * clock: the cross-replica check is a matter of wall time.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, LogLevel } from "effect"
import { hashApiKey, type ModelLookup } from "../domain/accounts/apiKeys.ts"
import { TestAppConfig } from "../layers/Test.ts"
import { ApiKeys, CatalogModels } from "../services/accounts/ApiKeys.ts"
import { KeyCacheInvalidation } from "../services/accounts/KeyCacheInvalidation.ts"
import { ScratchDatabase } from "./support/database.ts"

const CATALOG = ["openai/gpt-5.5", "openai/gpt-5.5-mini", "anthropic/claude-opus-4.8", "google/gemini-3-pro"]

/** The catalog's key rule in miniature: canonical or bare, any case. */
const lookup = (name: string): ModelLookup => {
  const key = name.trim().toLowerCase()
  const found = CATALOG.find((k) => k === key || k.slice(k.indexOf("/") + 1) === key)
  return found === undefined ? { _tag: "NotFound", message: `no model ${key}` } : { _tag: "Found", value: found }
}

const TestCatalog = Layer.succeed(CatalogModels, { lookup: Effect.succeed(lookup) })

/** One replica's ApiKeys: its own key cache, its own revision poll, its own cache invalidation. */
const Replica = ApiKeys.Default.pipe(Layer.provide([TestCatalog, KeyCacheInvalidation.Default]))

/** A second replica over the same database: `ApiKeys` in these tests is replica A. */
class ReplicaB extends Context.Tag("test/api-keys/ReplicaB")<ReplicaB, ApiKeys>() {}
const ReplicaBLive = Layer.effect(ReplicaB, ApiKeys).pipe(Layer.provide(Layer.fresh(Replica)))

/** The personal account every key here is issued on. */
class Owner extends Context.Tag("test/api-keys/Owner")<Owner, string>() {}
const OwnerLive = Layer.effect(
  Owner,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO identities ${sql.insert({ cfId: "cf_aaaaaaaaaaaa", email: "a@example.com", referralCode: "cf_ref_aaaaaaaa", displayName: "a***@example.com" })}`
    const [row] = yield* sql<{ id: string }>`INSERT INTO accounts ${sql.insert({ ownerCfId: "cf_aaaaaaaaaaaa", kind: "personal" })} RETURNING id::text AS id`
    return row!.id
  })
)

const TwoReplicas = Layer.mergeAll(Replica, ReplicaBLive, OwnerLive).pipe(
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

layer(TwoReplicas, { timeout: 60_000, excludeTestServices: true })((it) => {
  describe("issuing a key", () => {
    it.effect("returns ct_live_ and 256 random bits once; only the SHA-256 and a short prefix are stored", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const { key, raw } = yield* keys.issue(yield* Owner, "cf_aaaaaaaaaaaa", {})
        expect(raw).toMatch(/^ct_live_[A-Za-z0-9_-]{43}$/)
        expect(key).toMatchObject({ status: "active", label: null, dailyLimitWei: null, allowedModels: [], keyPrefix: raw.slice(0, 14) })
        // The row as stored, column names and all.
        const rows = yield* (yield* SqlClient.SqlClient).withoutTransforms().unsafe<Record<string, unknown>>("SELECT * FROM api_keys WHERE id = $1", [key.id])
        expect(rows[0]!.key_hash).toBe(hashApiKey(raw))
        expect(JSON.stringify(rows[0])).not.toContain(raw.slice(14))
        expect((yield* keys.authenticate(raw)).id).toBe(key.id)
      }))

    it.effect("resolves allowedModels to catalog keys and collapses duplicate spellings; an unknown model is 422 naming it", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const accountId = yield* Owner
        const { key } = yield* keys.issue(accountId, null, { allowedModels: ["gpt-5.5", "OPENAI/GPT-5.5", "openai/gpt-5.5", "claude-opus-4.8"] })
        expect(key.allowedModels).toEqual(["openai/gpt-5.5", "anthropic/claude-opus-4.8"])
        const refused = yield* Effect.flip(keys.issue(accountId, null, { allowedModels: ["gpt-5.5", "gpt-9-imaginary"] }))
        expect(refused).toMatchObject({ _tag: "ValidationFailed", param: "allowedModels.1" })
        expect(refused.message).toContain("gpt-9-imaginary")
      }))
  })

  describe("key states", () => {
    it.effect("freeze and reactivate by the owner; an administrator's freeze cannot be lifted by the owner (403 naming support)", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const accountId = yield* Owner
        const { key, raw } = yield* keys.issue(accountId, null, { label: "ci" })
        yield* keys.freeze(accountId, key.id)
        expect(yield* Effect.flip(keys.authenticate(raw))).toMatchObject({ _tag: "ApiKeyFrozen" })
        yield* keys.reactivate(accountId, key.id)
        expect(Exit.isSuccess(yield* Effect.exit(keys.authenticate(raw)))).toBe(true)
        yield* keys.freezeByAdmin(key.id)
        const refused = yield* Effect.flip(keys.reactivate(accountId, key.id))
        expect(refused).toMatchObject({ _tag: "Forbidden" })
        expect(refused.message).toContain("support")
      }))

    it.effect("revoke is permanent: the key stays listed and cannot be edited (409 conflict)", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const accountId = yield* Owner
        const { key, raw } = yield* keys.issue(accountId, null, { label: "old" })
        yield* keys.revoke(accountId, key.id)
        expect(yield* Effect.flip(keys.authenticate(raw))).toMatchObject({ _tag: "ApiKeyRevoked" })
        expect(yield* Effect.flip(keys.update(accountId, key.id, { label: "new" }))).toMatchObject({ _tag: "Conflict" })
        expect(yield* Effect.flip(keys.reactivate(accountId, key.id))).toMatchObject({ _tag: "Conflict" })
        const listed = yield* keys.list(accountId)
        expect(listed.find((k) => k.id === key.id)).toMatchObject({ status: "revoked", label: "old" })
      }))

    it.effect("empty, malformed and unknown keys are invalid_api_key", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        for (const raw of ["", "ct_live_short", `sk-${"a".repeat(48)}`, `ct_live_${"A".repeat(43)}`]) {
          expect(yield* Effect.flip(keys.authenticate(raw)), raw).toMatchObject({ _tag: "InvalidApiKey" })
        }
      }))
  })

  describe("the key cache across replicas", () => {
    it.effect("a key revoked through one replica is refused by the other within a second", () =>
      Effect.gen(function* () {
        const replicaA = yield* ApiKeys
        const replicaB = yield* ReplicaB
        const accountId = yield* Owner
        const { key, raw } = yield* replicaA.issue(accountId, null, {})
        // Both replicas hold the key in their caches.
        expect((yield* replicaB.authenticate(raw)).status).toBe("active")
        expect((yield* replicaA.authenticate(raw)).status).toBe("active")
        yield* replicaA.revoke(accountId, key.id)
        const revokedAt = Date.now()
        let refusedAfterMs: number | undefined
        while (Date.now() - revokedAt < 1_000) {
          const exit = yield* Effect.exit(replicaB.authenticate(raw))
          if (Exit.isFailure(exit)) {
            refusedAfterMs = Date.now() - revokedAt
            break
          }
          yield* Effect.sleep("20 millis")
        }
        expect(refusedAfterMs, "replica B still accepted the revoked key a second later").toBeDefined()
      }))
  })
})
