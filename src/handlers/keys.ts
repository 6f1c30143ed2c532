/**
 * API keys of the active context's account: decode, call AccountAdmin (which applies the role policy), encode.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AccountAdmin } from "../../services/accounts/AccountAdmin.ts"
import type { ApiKeyRecord } from "../../services/accounts/ApiKeys.ts"
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
    const admin = yield* AccountAdmin
    return handlers
      .handle("issueKey", ({ payload }) => Effect.map(admin.issueKey(payload), ({ key, raw }) => ({ key: apiKeyView(key), secret: raw })))
      .handle("listKeys", () => Effect.map(admin.listKeys(), (keys) => ({ object: "list" as const, data: keys.map(apiKeyView) })))
      .handle("updateKey", ({ path, payload }) => Effect.map(admin.updateKey(path.id, payload), apiKeyView))
      .handle("freezeKey", ({ path }) => Effect.map(admin.freezeKey(path.id), apiKeyView))
      .handle("reactivateKey", ({ path }) => Effect.map(admin.reactivateKey(path.id), apiKeyView))
      .handle("revokeKey", ({ path }) => Effect.map(admin.revokeKey(path.id), apiKeyView))
  })
)
