/**
 * API keys (issue 9 items 7-8) at the service: issuance returns the raw key once and stores its hash; the state rules
 * (freeze, reactivate, revoke, an administrator's freeze); `allowedModels` resolved and collapsed; and the check
 * every inference request makes, answered from a per-replica cache that a change made through another replica
 * invalidates within a second.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hashApiKey, type ModelLookup } from "../domain/accounts/apiKeys.ts"
import { DatabaseLive } from "../layers/Database.ts"
import { ApiKeys, CatalogModels } from "../services/accounts/ApiKeys.ts"
import { KeyCacheInvalidation } from "../services/accounts/KeyCacheInvalidation.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startLayer, type StartedLayer } from "./support/harness.ts"

const CATALOG = ["openai/gpt-5.5", "openai/gpt-5.5-mini", "anthropic/claude-opus-4.8", "google/gemini-3-pro"]

/** The catalog's key rule in miniature: canonical or bare, any case. */
const lookup = (name: string): ModelLookup => {
  const key = name.trim().toLowerCase()
  const found = CATALOG.find((k) => k === key || k.slice(k.indexOf("/") + 1) === key)
  return found === undefined ? { _tag: "NotFound", message: `no model ${key}` } : { _tag: "Found", value: found }
}

const TestCatalog = Layer.succeed(CatalogModels, { lookup: Effect.succeed(lookup) })

let database: TestDatabase
let replicaA: StartedLayer<ApiKeys | SqlClient.SqlClient>
let replicaB: StartedLayer<ApiKeys | SqlClient.SqlClient>
let accountId: string

const start = () =>
  startLayer(ApiKeys.Default.pipe(Layer.provide([TestCatalog, KeyCacheInvalidation.Default]), Layer.provideMerge(DatabaseLive)), {
    DATABASE_URL: database.url,
    LOG_LEVEL: "WARN"
  })

const failureOf = async <A, E>(run: Promise<Exit.Exit<A, E>>) => {
  const exit = await run
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  return failure as { _tag: string; message: string } | undefined
}

beforeAll(async () => {
  database = await createTestDatabase()
  replicaA = await start()
  replicaB = await start()
  accountId = await replicaA.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO identities ${sql.insert({ cfId: "cf_aaaaaaaaaaaa", email: "a@example.com", referralCode: "cf_ref_aaaaaaaa", displayName: "a***@example.com" })}`
      const [row] = yield* sql<{ id: string }>`INSERT INTO accounts ${sql.insert({ ownerCfId: "cf_aaaaaaaaaaaa", kind: "personal" })} RETURNING id::text AS id`
      return row!.id
    })
  )
}, 60_000)

afterAll(async () => {
  await replicaA?.close()
  await replicaB?.close()
  await database?.close()
})

describe("issuing a key", () => {
  it("returns ct_live_ and 256 random bits once; only the SHA-256 and a short prefix are stored", async () => {
    const { key, raw } = await replicaA.run(Effect.flatMap(ApiKeys, (keys) => keys.issue(accountId, "cf_aaaaaaaaaaaa", {})))
    expect(raw).toMatch(/^ct_live_[A-Za-z0-9_-]{43}$/)
    expect(key).toMatchObject({ status: "active", label: null, dailyLimitWei: null, allowedModels: [], keyPrefix: raw.slice(0, 14) })
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const { rows } = await client.query("SELECT * FROM api_keys WHERE id = $1", [key.id])
      expect(rows[0].key_hash).toBe(hashApiKey(raw))
      expect(JSON.stringify(rows[0])).not.toContain(raw.slice(14))
    } finally {
      await client.end()
    }
    expect((await replicaA.run(Effect.flatMap(ApiKeys, (keys) => keys.authenticate(raw)))).id).toBe(key.id)
  })

  it("resolves allowedModels to catalog keys and collapses duplicate spellings; an unknown model is 422 naming it", async () => {
    const { key } = await replicaA.run(
      Effect.flatMap(ApiKeys, (keys) =>
        keys.issue(accountId, null, { allowedModels: ["gpt-5.5", "OPENAI/GPT-5.5", "openai/gpt-5.5", "claude-opus-4.8"] })
      )
    )
    expect(key.allowedModels).toEqual(["openai/gpt-5.5", "anthropic/claude-opus-4.8"])
    const refused = await failureOf(
      replicaA.runExit(Effect.flatMap(ApiKeys, (keys) => keys.issue(accountId, null, { allowedModels: ["gpt-5.5", "gpt-9-imaginary"] })))
    )
    expect(refused).toMatchObject({ _tag: "ValidationFailed", param: "allowedModels.1" })
    expect(refused!.message).toContain("gpt-9-imaginary")
  })
})

describe("key states", () => {
  it("freeze and reactivate by the owner; an administrator's freeze cannot be lifted by the owner (403 naming support)", async () => {
    const { key, raw } = await replicaA.run(Effect.flatMap(ApiKeys, (keys) => keys.issue(accountId, null, { label: "ci" })))
    const keys = (effect: (k: ApiKeys) => Effect.Effect<unknown, unknown>) => replicaA.runExit(Effect.flatMap(ApiKeys, effect))
    await keys((k) => k.freeze(accountId, key.id))
    expect(await failureOf(keys((k) => k.authenticate(raw)))).toMatchObject({ _tag: "ApiKeyFrozen" })
    await keys((k) => k.reactivate(accountId, key.id))
    expect(Exit.isSuccess(await keys((k) => k.authenticate(raw)))).toBe(true)
    await keys((k) => k.freezeByAdmin(key.id))
    const refused = await failureOf(keys((k) => k.reactivate(accountId, key.id)))
    expect(refused).toMatchObject({ _tag: "Forbidden" })
    expect(refused!.message).toContain("support")
  })

  it("revoke is permanent: the key stays listed and cannot be edited (409 conflict)", async () => {
    const { key, raw } = await replicaA.run(Effect.flatMap(ApiKeys, (keys) => keys.issue(accountId, null, { label: "old" })))
    const keys = (effect: (k: ApiKeys) => Effect.Effect<unknown, unknown>) => replicaA.runExit(Effect.flatMap(ApiKeys, effect))
    await keys((k) => k.revoke(accountId, key.id))
    expect(await failureOf(keys((k) => k.authenticate(raw)))).toMatchObject({ _tag: "ApiKeyRevoked" })
    expect(await failureOf(keys((k) => k.update(accountId, key.id, { label: "new" })))).toMatchObject({ _tag: "Conflict" })
    expect(await failureOf(keys((k) => k.reactivate(accountId, key.id)))).toMatchObject({ _tag: "Conflict" })
    const listed = await replicaA.run(Effect.flatMap(ApiKeys, (k) => k.list(accountId)))
    expect(listed.find((k) => k.id === key.id)).toMatchObject({ status: "revoked", label: "old" })
  })

  it("empty, malformed and unknown keys are invalid_api_key", async () => {
    for (const raw of ["", "ct_live_short", `sk-${"a".repeat(48)}`, `ct_live_${"A".repeat(43)}`]) {
      expect(await failureOf(replicaA.runExit(Effect.flatMap(ApiKeys, (k) => k.authenticate(raw)))), raw).toMatchObject({ _tag: "InvalidApiKey" })
    }
  })
})

describe("the key cache across replicas", () => {
  it("a key revoked through one replica is refused by the other within a second", async () => {
    const { key, raw } = await replicaA.run(Effect.flatMap(ApiKeys, (keys) => keys.issue(accountId, null, {})))
    // Both replicas hold the key in their caches.
    expect((await replicaB.run(Effect.flatMap(ApiKeys, (k) => k.authenticate(raw)))).status).toBe("active")
    expect((await replicaA.run(Effect.flatMap(ApiKeys, (k) => k.authenticate(raw)))).status).toBe("active")
    await replicaA.run(Effect.flatMap(ApiKeys, (k) => k.revoke(accountId, key.id)))
    const revokedAt = Date.now()
    let refusedAfterMs: number | undefined
    while (Date.now() - revokedAt < 1_000) {
      const exit = await replicaB.runExit(Effect.flatMap(ApiKeys, (k) => k.authenticate(raw)))
      if (Exit.isFailure(exit)) {
        refusedAfterMs = Date.now() - revokedAt
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(refusedAfterMs, "replica B still accepted the revoked key a second later").toBeDefined()
  })
})
