/**
 * API keys of the signed-in account: decode, call ApiKeys, encode.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type ApiKeyRecord, ApiKeys } from "../../services/accounts/ApiKeys.ts"
import { CurrentIdentity, requireRole } from "../api/SessionAuth.ts"
import { ServerApi } from "../api/ServerApi.ts"
import type { ApiKeyView } from "../api/KeysApi.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

export const apiKeyView = (key: ApiKeyRecord): typeof ApiKeyView.Type => ({
  id: key.id,
  prefix: key.keyPrefix,
  label: key.label,
  holderCfId: key.holderCfId,
  status: key.status,
  frozenBy: key.frozenBy,
  dailyLimitWei: key.dailyLimitWei?.toString() ?? null,
  monthlyLimitWei: key.monthlyLimitWei?.toString() ?? null,
  allowedModels: key.allowedModels,
  createdAt: key.createdAt.toISOString(),
  frozenAt: iso(key.frozenAt),
  revokedAt: iso(key.revokedAt)
})

export const KeysHandlers = HttpApiBuilder.group(ServerApi, "keys", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    const account = Effect.map(CurrentIdentity, (identity) => ({ accountId: String(identity.accountId), cfId: identity.cfId }))
    // In an organization, keys are the Owners' and Admins' to manage (SPEC "Organization rules").
    const managing = requireRole("manageKeys", "Managing API keys")
    return handlers
      .handle("issueKey", ({ payload }) =>
        Effect.gen(function* () {
          yield* requireRole("manageKeys", "Issuing API keys")
          const { accountId, cfId } = yield* account
          const { key, raw } = yield* keys.issue(accountId, cfId, payload)
          return { key: apiKeyView(key), secret: raw }
        })
      )
      .handle("listKeys", () =>
        Effect.gen(function* () {
          const { accountId } = yield* account
          return { object: "list" as const, data: (yield* keys.list(accountId)).map(apiKeyView) }
        })
      )
      .handle("updateKey", ({ path, payload }) =>
        managing.pipe(Effect.zipRight(account), Effect.flatMap(({ accountId }) => Effect.map(keys.update(accountId, path.id, payload), apiKeyView)))
      )
      .handle("freezeKey", ({ path }) =>
        managing.pipe(Effect.zipRight(account), Effect.flatMap(({ accountId }) => Effect.map(keys.freeze(accountId, path.id), apiKeyView)))
      )
      .handle("reactivateKey", ({ path }) =>
        managing.pipe(Effect.zipRight(account), Effect.flatMap(({ accountId }) => Effect.map(keys.reactivate(accountId, path.id), apiKeyView)))
      )
      .handle("revokeKey", ({ path }) =>
        managing.pipe(Effect.zipRight(account), Effect.flatMap(({ accountId }) => Effect.map(keys.revoke(accountId, path.id), apiKeyView)))
      )
  })
)
