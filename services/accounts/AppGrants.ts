/**
 * App grants (SPEC "App grant", "Authentication" 3 and 5; issue 12 item 5): issued for the caller's active context
 * (the token once), listed per context account, frozen, unfrozen and revoked; and the check of every call an app makes
 * with its token. Grants are looked up by hash on every call (no cache: a freeze takes effect at once on every
 * replica), and a grant acts as its issuer with the issuer's role in the organization as it stands at that call.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Option, Schema } from "effect"
import {
  type AppGrantStatus,
  type GrantAction,
  grantTransition,
  isWellFormedAppGrant,
  normalizeScopes,
  type Scope,
  SCOPES
} from "../../domain/accounts/appGrantRules.ts"
import { CfId, GrantId } from "../../domain/accounts/ids.ts"
import { generateAppGrantId, generateAppGrantToken, hashAppGrant } from "../../domain/accounts/appGrants.ts"
import type { Role } from "../../domain/accounts/roles.ts"
import { AppGrantFrozen, AppGrantRevoked, Conflict, InvalidAppGrant, NotFound, OrganizationRole, type OrgRoleRequired } from "../../domain/errors.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { CurrentIdentity } from "./CurrentIdentity.ts"
import { requireActiveRole } from "./Policy.ts"

const GrantRow = Schema.Struct({
  id: GrantId,
  accountId: Schema.String,
  issuedByCfId: CfId,
  appName: Schema.String,
  scopes: Schema.Array(Schema.Literal(...SCOPES)),
  tokenPrefix: Schema.String,
  status: Schema.Literal("active", "frozen", "revoked"),
  createdAt: Schema.DateFromSelf,
  frozenAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf),
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type AppGrantRecord = typeof GrantRow.Type

/** The grant with the organization it acts in (null: a personal account) and its issuer's role there now. */
const AuthRow = Schema.Struct({
  ...GrantRow.fields,
  orgId: Schema.NullOr(Schema.String),
  orgName: Schema.NullOr(Schema.String),
  role: Schema.NullOr(OrganizationRole),
  contextLost: Schema.Boolean
})

export interface GrantContext {
  readonly orgId: string
  readonly orgName: string
  readonly role: Role
}

export interface AuthenticatedGrant {
  readonly grant: AppGrantRecord
  readonly organization: GrantContext | null
}

// Scopes travel as JSON both ways: a text parameter cast in SQL, an array in the row.
const COLUMNS = `g.id, g.account_id::text AS account_id, g.issued_by_cf_id, g.app_name, to_json(g.scopes) AS scopes, g.token_prefix,
  g.status, g.created_at, g.frozen_at, g.revoked_at, g.last_used_at`

/** Touching `last_used_at` on every call would write on every inference request: once a minute is enough to show. */
export const LAST_USED_RESOLUTION = Duration.seconds(60)

export class AppGrants extends Effect.Service<AppGrants>()("AppGrants", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(sql.withTransaction(effect))

    const byHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: AuthRow,
      execute: (hash) => sql`
        SELECT ${sql.literal(COLUMNS)}, o.id AS org_id, o.name AS org_name, m.role,
          (o.account_id IS NOT NULL AND (o.deleted_at IS NOT NULL OR m.role IS NULL)) AS context_lost
        FROM app_grants g
        LEFT JOIN organizations o ON o.account_id = g.account_id
        LEFT JOIN organization_members m ON m.account_id = g.account_id AND m.cf_id = g.issued_by_cf_id
        WHERE g.token_hash = ${hash}`
    })
    const byId = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, id: Schema.String }),
      Result: GrantRow,
      execute: ({ accountId, id }) =>
        sql`SELECT ${sql.literal(COLUMNS)} FROM app_grants g WHERE g.id = ${id} AND g.account_id = ${accountId}::bigint FOR UPDATE`
    })
    const ofAccount = SqlSchema.findAll({
      Request: Schema.String,
      Result: GrantRow,
      execute: (accountId) => sql`SELECT ${sql.literal(COLUMNS)} FROM app_grants g WHERE g.account_id = ${accountId}::bigint ORDER BY g.created_at, g.id`
    })

    /** SPEC "Authentication" 5: active proceeds; frozen 403; revoked 401; anything else 401 invalid_app_grant. */
    const authenticate = (raw: string): Effect.Effect<AuthenticatedGrant, InvalidAppGrant | AppGrantFrozen | AppGrantRevoked> =>
      Effect.gen(function* () {
        if (!isWellFormedAppGrant(raw)) {
          return yield* new InvalidAppGrant({ message: "Send an app grant as `Authorization: Bearer cfa_live_...`." })
        }
        const found = yield* orDieAtRepository(byHash(hashAppGrant(raw)))
        if (Option.isNone(found)) return yield* new InvalidAppGrant({ message: "This token matches no app grant." })
        const { contextLost, orgId, orgName, role, ...grant } = found.value
        // Removal, leaving and deletion revoke the grants in their own transaction; a grant whose issuer is no longer
        // a member is refused the same way even so.
        if (grant.status === "revoked" || contextLost) {
          return yield* new AppGrantRevoked({ message: `App grant ${grant.tokenPrefix}... was revoked: grant the app access again.` })
        }
        if (grant.status === "frozen") return yield* new AppGrantFrozen({ message: `App grant ${grant.tokenPrefix}... is frozen.` })
        // The time comes from Clock (so TestClock moves the throttle); the stamp and its threshold are one instant.
        const now = yield* Clock.currentTimeMillis
        const stale = new Date(now - Duration.toMillis(LAST_USED_RESOLUTION))
        yield* orDieUnlessUnavailable(sql`
          UPDATE app_grants SET last_used_at = ${new Date(now)}::timestamptz
          WHERE id = ${grant.id} AND status = 'active'
            AND (last_used_at IS NULL OR last_used_at < ${stale}::timestamptz)`)
        const organization = orgId === null || orgName === null || role === null ? null : { orgId, orgName, role }
        return { grant, organization }
      })

    /**
     * Issued by the calling identity for its active context. In an organization, a grant that may act needs
     * `connectApps` (Admins and the Owner); one that only reads needs what reading needs (`view`, every member).
     */
    const create = Effect.fn("AppGrants.create")(function* (appName: string, requested: ReadonlyArray<Scope> | undefined) {
        const manager = yield* CurrentIdentity
        const scopes = normalizeScopes(requested)
        yield* scopes.includes("account:act")
          ? requireActiveRole("connectApps", "Connecting an app that changes the account")
          : requireActiveRole("view", "Connecting an app")
        const token = generateAppGrantToken()
        const grant = yield* orDieAtRepository(
          SqlSchema.single({
            Request: Schema.Void,
            Result: GrantRow,
            execute: () => sql`
              WITH g AS (
                INSERT INTO app_grants (id, account_id, issued_by_cf_id, app_name, scopes, token_hash, token_prefix)
                VALUES (${generateAppGrantId()}, ${manager.accountId}::bigint, ${manager.cfId}, ${appName},
                  ARRAY(SELECT json_array_elements_text(${JSON.stringify(scopes)}::json)), ${token.hash}, ${token.prefix})
                RETURNING *
              )
              SELECT ${sql.literal(COLUMNS)} FROM g`
          })(undefined)
        )
        return { grant, token: token.raw }
      })

    /** Every grant of the active context's account, revoked ones included (as records). */
    const list = Effect.fn("AppGrants.list")(function* () {
      return yield* orDieAtRepository(ofAccount((yield* CurrentIdentity).accountId))
    })

    /**
     * Freeze, unfreeze or revoke: the grant's issuer always may; anyone else in an organization needs `connectApps`.
     * A grant of another account is 404; a revoked grant cannot be frozen or unfrozen (409); repeating an action
     * answers the grant as it stands.
     */
    const change = (id: string, action: GrantAction): Effect.Effect<AppGrantRecord, NotFound | Conflict | OrgRoleRequired, CurrentIdentity> =>
      Effect.flatMap(CurrentIdentity, (manager) => transaction(
        Effect.gen(function* () {
          const found = yield* orDieAtRepository(byId({ accountId: manager.accountId, id }))
          if (Option.isNone(found)) return yield* new NotFound({ message: `No app grant ${id} on this account.` })
          const grant = found.value
          if (grant.issuedByCfId !== manager.cfId) yield* requireActiveRole("connectApps", "Managing another member's app grant")
          const next = grantTransition(grant.status, action)
          if (next._tag === "Revoked") {
            return yield* new Conflict({ message: `App grant ${id} is revoked: it is kept as a record and cannot change.` })
          }
          if (next._tag === "Unchanged") return grant
          return yield* orDieAtRepository(updateStatus(id, next.status, new Date(yield* Clock.currentTimeMillis)))
        })
      ))

    const updateStatus = (id: string, status: AppGrantStatus, now: Date) =>
      SqlSchema.single({
        Request: Schema.Void,
        Result: GrantRow,
        execute: () => sql`
          WITH g AS (
            UPDATE app_grants
            SET status = ${status},
                frozen_at = CASE WHEN ${status} = 'frozen' THEN ${now}::timestamptz END,
                revoked_at = CASE WHEN ${status} = 'revoked' THEN ${now}::timestamptz END
            WHERE id = ${id}
            RETURNING *
          )
          SELECT ${sql.literal(COLUMNS)} FROM g`
      })(undefined)

    return {
      authenticate,
      create,
      list,
      freeze: Effect.fn("AppGrants.freeze")(function* (id: string) {
        return yield* change(id, "freeze")
      }),
      unfreeze: Effect.fn("AppGrants.unfreeze")(function* (id: string) {
        return yield* change(id, "unfreeze")
      }),
      revoke: Effect.fn("AppGrants.revoke")(function* (id: string) {
        return yield* change(id, "revoke")
      })
    } as const
  })
}) {}
