/**
 * API keys: issue (the raw key once), list, edit, freeze, reactivate, revoke, and the check every inference request
 * makes (SPEC "Authentication" 4). The check answers from an in-memory cache by SHA-256; every change to a key takes
 * a new revision from one sequence, and each replica polls for revisions newer than what it holds, so a key revoked
 * through one replica is refused by every other within a poll interval.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import {
  type ApiKeyStatus,
  canChange,
  canReactivate,
  type FrozenBy,
  generateApiKey,
  generateApiKeyId,
  hashApiKey,
  isWellFormedApiKey,
  type ModelLookup,
  normalizeAllowedModels
} from "../../domain/accounts/apiKeys.ts"
import { ApiKeyFrozen, ApiKeyRevoked, Conflict, Forbidden, InvalidApiKey, NotFound, ValidationFailed } from "../../domain/errors.ts"
import { OracleSnapshot } from "../oracle/OracleSnapshot.ts"
import { CfId, KeyId } from "../../domain/accounts/ids.ts"
import { KeyCacheInvalidation } from "./KeyCacheInvalidation.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

/** Which catalog model a name means (canonical key or unambiguous bare name): what `allowedModels` may hold. */
export class CatalogModels extends Context.Tag("CatalogModels")<
  CatalogModels,
  { readonly lookup: Effect.Effect<(name: string) => ModelLookup> }
>() {}

/** The live catalog, from the oracle's snapshot. */
export const CatalogModelsLive = Layer.effect(
  CatalogModels,
  Effect.map(OracleSnapshot, (snapshots) => ({ lookup: Effect.map(snapshots.current, (snap) => snap.lookups.catalogModel) }))
)

/** How often a replica asks whether any key changed. */
const POLL_INTERVAL = Duration.millis(250)

const WeiFromNumeric = Schema.NullOr(Schema.BigInt)

const KeyRow = Schema.Struct({
  id: KeyId,
  accountId: Schema.String,
  issuedByCfId: Schema.NullOr(CfId),
  /** The member the key's spending counts for (their pool applies); its issuer unless issued for another member. */
  holderCfId: Schema.NullOr(CfId),
  keyHash: Schema.String,
  keyPrefix: Schema.String,
  label: Schema.NullOr(Schema.String),
  dailyLimitWei: WeiFromNumeric,
  monthlyLimitWei: WeiFromNumeric,
  allowedModels: Schema.Array(Schema.String),
  status: Schema.Literal("active", "frozen", "revoked"),
  frozenBy: Schema.NullOr(Schema.Literal("owner", "admin")),
  createdAt: Schema.DateFromSelf,
  frozenAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf),
  revision: Schema.BigInt
})
export type ApiKeyRecord = typeof KeyRow.Type

export interface KeyFields {
  /** At issue only: the organization's member the key is for (default: its issuer). */
  readonly holderCfId?: string | undefined
  readonly label?: string | null | undefined
  readonly dailyLimitWei?: bigint | null | undefined
  readonly monthlyLimitWei?: bigint | null | undefined
  readonly allowedModels?: ReadonlyArray<string> | undefined
}

const COLUMNS = `id, account_id::text AS account_id, issued_by_cf_id, holder_cf_id, key_hash, key_prefix, label, daily_limit_wei::text AS daily_limit_wei,
  monthly_limit_wei::text AS monthly_limit_wei, allowed_models, status, frozen_by, created_at, frozen_at, revoked_at, revision::text AS revision`

export class ApiKeys extends Effect.Service<ApiKeys>()("ApiKeys", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* CatalogModels

    const byHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: KeyRow,
      execute: (hash) => sql`SELECT ${sql.literal(COLUMNS)} FROM api_keys WHERE key_hash = ${hash}`
    })
    const byId = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, id: Schema.String }),
      Result: KeyRow,
      execute: ({ accountId, id }) => sql`SELECT ${sql.literal(COLUMNS)} FROM api_keys WHERE id = ${id} AND account_id = ${accountId}`
    })
    const ofAccount = SqlSchema.findAll({
      Request: Schema.String,
      Result: KeyRow,
      execute: (accountId) => sql`SELECT ${sql.literal(COLUMNS)} FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`
    })
    const latestRevision = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ revision: Schema.BigInt }),
      execute: () => sql`SELECT coalesce(max(revision), 0)::text AS revision FROM api_keys`
    })

    /** Hash -> the key as last read; a key that matched nothing is not remembered (a typo must not fill memory). */
    const cache = new Map<string, ApiKeyRecord>()
    yield* Effect.flatMap(KeyCacheInvalidation, (invalidation) => invalidation.subscribe(() => cache.clear()))
    let heldRevision = (yield* orDieAtRepository(latestRevision(undefined))).revision
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Effect.sleep(POLL_INTERVAL)
          const { revision } = yield* orDieAtRepository(latestRevision(undefined))
          if (revision !== heldRevision) {
            // Something changed somewhere: drop what this replica remembers; the next checks read afresh.
            cache.clear()
            heldRevision = revision
          }
        }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("api key cache poll failed", cause)))
      )
    )

    /** SPEC "Authentication" 4: active proceeds; frozen 403; revoked 401; anything else 401 invalid_api_key. */
    const authenticate = Effect.fn("ApiKeys.authenticate")(function* (raw: string): Effect.fn.Return<ApiKeyRecord, InvalidApiKey | ApiKeyFrozen | ApiKeyRevoked> {
      if (!isWellFormedApiKey(raw)) {
        return yield* Effect.fail(new InvalidApiKey({ message: "Send an API key as `Authorization: Bearer ct_live_...`." }))
      }
      const hash = hashApiKey(raw)
      let key = cache.get(hash)
      if (key === undefined) {
        const found = yield* orDieAtRepository(byHash(hash))
        if (Option.isNone(found)) return yield* Effect.fail(new InvalidApiKey({ message: "This API key matches no issued key." }))
        key = found.value
        cache.set(hash, key)
      }
      if (key.status === "revoked") return yield* Effect.fail(new ApiKeyRevoked({ message: `API key ${key.keyPrefix}... was revoked.` }))
      if (key.status === "frozen") return yield* Effect.fail(new ApiKeyFrozen({ message: `API key ${key.keyPrefix}... is frozen.` }))
      return key
    })

    /** The stored form of `allowedModels`, or a 422 naming every entry that names no catalog model. */
    const allowedModels = (entries: ReadonlyArray<string>) =>
      Effect.flatMap(catalog.lookup, (lookup) => {
        const { models, problems } = normalizeAllowedModels(entries, lookup)
        return problems.length === 0
          ? Effect.succeed(models)
          : Effect.fail(
              ValidationFailed.fromIssues(
                problems.map((p) => ({
                  param: p.index < 0 ? "allowedModels" : `allowedModels.${p.index}`,
                  path: p.index < 0 ? ["allowedModels"] : ["allowedModels", p.index],
                  message: p.message
                }))
              )
            )
      })

    const find = (accountId: string, id: string) =>
      Effect.flatMap(orDieAtRepository(byId({ accountId, id })), (found) =>
        Option.match(found, {
          onNone: () => Effect.fail(new NotFound({ message: `no API key ${id} on this account` })),
          onSome: Effect.succeed
        })
      )

    const revokedConflict = (id: string) => new Conflict({ message: `API key ${id} is revoked: it is kept as a record and cannot change.` })

    /** A change, seen at once by this replica's cache (other replicas see it at their next poll). */
    const updateRow = (id: string, set: Record<string, unknown>) =>
      orDieAtRepository(
        SqlSchema.single({
          Request: Schema.Void,
          Result: KeyRow,
          execute: () => sql`UPDATE api_keys SET ${sql.update(set)} WHERE id = ${id} RETURNING ${sql.literal(COLUMNS)}`
        })(undefined)
      ).pipe(Effect.tap((row) => Effect.sync(() => cache.set(row.keyHash, row))))

    /** A key is held by its issuer or issued for another member of the account's organization (422 otherwise). */
    const holder = (accountId: string, issuedByCfId: string | null, holderCfId: string | undefined) =>
      holderCfId === undefined || holderCfId === issuedByCfId
        ? Effect.succeed(issuedByCfId)
        : Effect.flatMap(
          orDieAtRepository(
            SqlSchema.findOne({
              Request: Schema.Void,
              Result: Schema.Struct({ cfId: Schema.String }),
              execute: () => sql`
                SELECT cf_id FROM organization_members WHERE account_id = ${accountId}::bigint AND cf_id = ${holderCfId}`
            })(undefined)
          ),
          Option.match({
            onSome: () => Effect.succeed(holderCfId),
            onNone: () =>
              Effect.fail(
                ValidationFailed.fromIssues([
                  { param: "holderCfId", path: ["holderCfId"], message: `${holderCfId} is not a member of the organization this key would spend` }
                ])
              )
          })
        )

    /** Issuance is free and never checks the balance; every field is optional. The raw key is returned only here. */
    const issue = Effect.fn("ApiKeys.issue")(function* (accountId: string, issuedByCfId: string | null, fields: KeyFields) {
      const holderCfId = yield* holder(accountId, issuedByCfId, fields.holderCfId)
      const models = yield* allowedModels(fields.allowedModels ?? [])
      const key = generateApiKey()
      const row = yield* orDieAtRepository(
        SqlSchema.single({
          Request: Schema.Void,
          Result: KeyRow,
          execute: () => sql`
            INSERT INTO api_keys ${sql.insert({
              id: generateApiKeyId(),
              accountId,
              issuedByCfId,
              holderCfId,
              keyHash: key.hash,
              keyPrefix: key.prefix,
              label: fields.label ?? null,
              dailyLimitWei: fields.dailyLimitWei?.toString() ?? null,
              monthlyLimitWei: fields.monthlyLimitWei?.toString() ?? null,
              // jsonb: a text parameter, typed by the column.
              allowedModels: JSON.stringify(models)
            })}
            RETURNING ${sql.literal(COLUMNS)}`
        })(undefined)
      )
      return { key: row, raw: key.raw }
    })

    const update = Effect.fn("ApiKeys.update")(function* (accountId: string, id: string, fields: KeyFields) {
      const key = yield* find(accountId, id)
      if (canChange(key.status)._tag === "Revoked") return yield* Effect.fail(revokedConflict(id))
      const models = fields.allowedModels === undefined ? undefined : yield* allowedModels(fields.allowedModels)
      const set: Record<string, unknown> = {}
      if (fields.label !== undefined) set["label"] = fields.label
      if (fields.dailyLimitWei !== undefined) set["dailyLimitWei"] = fields.dailyLimitWei?.toString() ?? null
      if (fields.monthlyLimitWei !== undefined) set["monthlyLimitWei"] = fields.monthlyLimitWei?.toString() ?? null
      if (models !== undefined) set["allowedModels"] = JSON.stringify(models)
      return Object.keys(set).length === 0 ? key : yield* updateRow(id, set)
    })

    const freeze = (accountId: string, id: string, by: FrozenBy) =>
      Effect.gen(function* () {
        const key = yield* find(accountId, id)
        if (canChange(key.status)._tag === "Revoked") return yield* Effect.fail(revokedConflict(id))
        // An administrator's freeze stands over the owner's: it is what decides who may lift it.
        if (key.status === "frozen" && (key.frozenBy === "admin" || by === "owner")) return key
        return yield* updateRow(id, { status: "frozen", frozenBy: by, frozenAt: new Date(yield* Clock.currentTimeMillis) })
      })

    const reactivate = Effect.fn("ApiKeys.reactivate")(function* (accountId: string, id: string) {
      const key = yield* find(accountId, id)
      const verdict = canReactivate(key.status as ApiKeyStatus, key.frozenBy)
      switch (verdict._tag) {
        case "Revoked":
          return yield* Effect.fail(revokedConflict(id))
        case "FrozenByAdmin":
          return yield* Effect.fail(new Forbidden({ message: `API key ${id} was frozen by an administrator: contact support to lift it.` }))
        case "NotFrozen":
          return key
        case "Allowed":
          return yield* updateRow(id, { status: "active", frozenBy: null, frozenAt: null })
      }
    })

    /** Permanent; the key stays listed as a record. Revoking a revoked key changes nothing. */
    const revoke = Effect.fn("ApiKeys.revoke")(function* (accountId: string, id: string) {
      const key = yield* find(accountId, id)
      if (key.status === "revoked") return key
      return yield* updateRow(id, { status: "revoked", frozenBy: null, revokedAt: new Date(yield* Clock.currentTimeMillis) })
    })

    /** Support's freeze, by key id alone (the operator API). */
    const freezeByAdmin = Effect.fn("ApiKeys.freezeByAdmin")(function* (id: string) {
      const accountId = yield* orDieAtRepository(
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Schema.Struct({ accountId: Schema.String }),
          execute: (keyId) => sql`SELECT account_id::text AS account_id FROM api_keys WHERE id = ${keyId}`
        })(id)
      )
      if (Option.isNone(accountId)) return yield* Effect.fail(new NotFound({ message: `no API key ${id}` }))
      return yield* freeze(accountId.value.accountId, id, "admin")
    })

    return {
      authenticate,
      issue,
      list: Effect.fn("ApiKeys.list")(function* (accountId: string) {
        return yield* orDieAtRepository(ofAccount(accountId))
      }),
      get: Effect.fn("ApiKeys.get")(function* (accountId: string, id: string) {
        return yield* find(accountId, id)
      }),
      update,
      freeze: Effect.fn("ApiKeys.freeze")(function* (accountId: string, id: string) {
        return yield* freeze(accountId, id, "owner")
      }),
      freezeByAdmin,
      reactivate,
      revoke
    } as const
  })
}) {}
