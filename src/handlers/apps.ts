/**
 * Connected apps: the signed-in identity's grants (decode, call AppGrants with the active context, encode), and the
 * account tools an app calls with its grant (AccountTools).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AccountTools } from "../../services/accounts/AccountTools.ts"
import { type AppGrantRecord, AppGrants } from "../../services/accounts/AppGrants.ts"
import { type AppGrantView, CurrentAppGrant } from "../api/AppsApi.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { AppGrantAuthLive } from "../http/appGrantAuth.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const grantView = (grant: AppGrantRecord): typeof AppGrantView.Type => ({
  id: grant.id,
  appName: grant.appName,
  scopes: grant.scopes,
  prefix: grant.tokenPrefix,
  status: grant.status,
  issuedByCfId: grant.issuedByCfId,
  createdAt: grant.createdAt.toISOString(),
  frozenAt: iso(grant.frozenAt),
  revokedAt: iso(grant.revokedAt),
  lastUsedAt: iso(grant.lastUsedAt)
})

export const AppsHandlers = HttpApiBuilder.group(ServerApi, "apps", (handlers) =>
  Effect.gen(function* () {
    const grants = yield* AppGrants
    return handlers
      .handle("createAppGrant", ({ payload }) =>
        Effect.map(grants.create(payload.appName, payload.scopes), ({ grant, token }) => ({ grant: grantView(grant), token }))
      )
      .handle("listAppGrants", () =>
        Effect.map(grants.list(), (list) => ({ object: "list" as const, data: list.map(grantView) }))
      )
      .handle("freezeAppGrant", ({ path }) => Effect.map(grants.freeze(path.id), grantView))
      .handle("unfreezeAppGrant", ({ path }) => Effect.map(grants.unfreeze(path.id), grantView))
      .handle("revokeAppGrant", ({ path }) => Effect.map(grants.revoke(path.id), grantView))
  })
)

export const AccountToolsHandlers = HttpApiBuilder.group(ServerApi, "accountTools", (handlers) =>
  Effect.gen(function* () {
    const tools = yield* AccountTools
    return handlers
      .handle("listAccountTools", () => Effect.map(CurrentAppGrant, tools.catalog))
      .handle("callAccountTool", ({ payload }) => Effect.flatMap(CurrentAppGrant, (caller) => tools.call(caller, payload.tool, payload.input)))
  })
).pipe(Layer.provide(AppGrantAuthLive))
