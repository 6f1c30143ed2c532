/**
 * Organizations (SPEC.md "Organization and invitation", "Organization rules"; DESIGN.md sections 11-12): create (at
 * most 10 owned), list, read, delete (the owner, once every other member left and no credit is left in it), members
 * (e-mails masked for Members), removal and leaving (at once; every API key and app grant the member issued on the
 * organization's account is revoked in the same transaction), and the active context. Who may do what is domain/accounts/roles.ts.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { CfId, maskEmail, ORGANIZATION_ID_RANDOM_BYTES, OrgId, organizationIdFrom } from "../../domain/accounts/ids.ts"
import { type Action, actionOverRole, MAX_OWNED_ORGANIZATIONS, refusal, type Role } from "../../domain/accounts/roles.ts"
import { Conflict, NotFound, OrganizationRole } from "../../domain/errors.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { decodedRows } from "../platform/RepositoryBoundary.ts"
import { currentCfId } from "./CurrentIdentity.ts"
import { KeyCacheInvalidation } from "./KeyCacheInvalidation.ts"
import { requireAllowed } from "./Policy.ts"

export interface OrganizationView {
  readonly id: OrgId
  readonly name: string
  /** The caller's role in it. */
  readonly role: Role
  readonly ownerCfId: CfId
  readonly members: number
  readonly createdAt: string
}

export interface MemberView {
  readonly cfId: CfId
  readonly displayName: string
  /** Full for Owners and Admins, masked for Members (SPEC: masked, not refused); null when the member has none. */
  readonly email: string | null
  readonly role: Role
  readonly joinedAt: string
}

export type ContextView =
  | { readonly type: "personal" }
  | { readonly type: "organization"; readonly orgId: OrgId; readonly name: string; readonly role: Role }

/** The caller's membership of an organization, as the reads below select it. */
const Membership = Schema.Struct({
  accountId: Schema.String,
  id: OrgId,
  name: Schema.String,
  ownerCfId: CfId,
  role: OrganizationRole,
  createdAt: Schema.DateFromSelf
})
type Membership = typeof Membership.Type

const Count = Schema.Struct({ n: Schema.Int })

const MemberRow = Schema.Struct({
  cfId: CfId,
  displayName: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: OrganizationRole,
  joinedAt: Schema.DateFromSelf
})

const notFound = (orgId: string) => new NotFound({ message: `No organization ${orgId} of yours.` })

export class Organizations extends Effect.Service<Organizations>()("Organizations", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(sql.withTransaction(effect))
    const keyCache = yield* KeyCacheInvalidation
    /** A transaction that revoked keys: once it committed, this replica's key cache forgets them. */
    const revokingKeys = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tap(transaction(effect), () => keyCache.changed)

    /** The caller's membership of a live organization (locking its row when asked), or 404: never another's. */
    const membership = (cfId: string, orgId: string, lock = false) =>
      Effect.flatMap(
        decodedRows(Membership, sql`
          SELECT o.account_id::text AS account_id, o.id, o.name, o.owner_cf_id, m.role, o.created_at
          FROM organizations o JOIN organization_members m ON m.account_id = o.account_id AND m.cf_id = ${cfId}
          WHERE o.id = ${orgId} AND o.deleted_at IS NULL
          ${lock ? sql`FOR UPDATE OF o` : sql``}`),
        (rows) => (rows[0] === undefined ? Effect.fail(notFound(orgId)) : Effect.succeed(rows[0]))
      )

    const memberCount = (accountId: string) =>
      Effect.map(
        decodedRows(Count, sql`SELECT count(*)::int AS n FROM organization_members WHERE account_id = ${accountId}::bigint`),
        (rows) => rows[0]?.n ?? 0
      )

    const view = (m: Membership, members: number): OrganizationView => ({
      id: m.id,
      name: m.name,
      role: m.role,
      ownerCfId: m.ownerCfId,
      members,
      createdAt: m.createdAt.toISOString()
    })

    /** The calling identity's membership of `orgId`, refused unless its role there allows `action`. */
    const authorised = Effect.fn("Organizations.authorised")(function* (orgId: OrgId, action: Action, what: string) {
      const m = yield* membership(yield* currentCfId, orgId)
      yield* requireAllowed(m.role, action, what)
      return m
    })

    /** A new organization owned by the calling identity; its account starts empty. */
    const create = Effect.fn("Organizations.create")(function* (name: string) {
      const cfId = yield* currentCfId
      return yield* transaction(
        Effect.gen(function* () {
          // Serialises one owner's creations so that two at once cannot both be the tenth.
          yield* sql`SELECT cf_id FROM identities WHERE cf_id = ${cfId} FOR UPDATE`
          const [owned] = yield* decodedRows(Count, sql`
            SELECT count(*)::int AS n FROM organizations WHERE owner_cf_id = ${cfId} AND deleted_at IS NULL`)
          if ((owned?.n ?? 0) >= MAX_OWNED_ORGANIZATIONS) {
            return yield* new Conflict({ message: `You own ${MAX_OWNED_ORGANIZATIONS} organizations, the most one user may own.` })
          }
          const [account] = yield* decodedRows(Schema.Struct({ id: Schema.String }), sql`
            INSERT INTO accounts (owner_cf_id, kind) VALUES (${cfId}, 'organization') RETURNING id::text AS id`)
          const id = OrgId.make(organizationIdFrom(randomBytes(ORGANIZATION_ID_RANDOM_BYTES)))
          const [created] = yield* decodedRows(Schema.Struct({ createdAt: Schema.DateFromSelf }), sql`
            INSERT INTO organizations (account_id, id, name, owner_cf_id) VALUES (${account!.id}::bigint, ${id}, ${name}, ${cfId})
            RETURNING created_at`)
          yield* sql`INSERT INTO organization_members (account_id, cf_id, role) VALUES (${account!.id}::bigint, ${cfId}, 'owner')`
          return view({ accountId: account!.id, id, name, ownerCfId: CfId.make(cfId), role: "owner", createdAt: created!.createdAt }, 1)
        })
      )
    })

    /** The calling identity's organizations, oldest first. */
    const list = Effect.fn("Organizations.list")(function* () {
      const cfId = yield* currentCfId
      return yield* Effect.map(
        decodedRows(Schema.extend(Membership, Schema.Struct({ members: Schema.Int })), sql`
          SELECT o.account_id::text AS account_id, o.id, o.name, o.owner_cf_id, m.role, o.created_at,
            (SELECT count(*)::int FROM organization_members x WHERE x.account_id = o.account_id) AS members
          FROM organizations o JOIN organization_members m ON m.account_id = o.account_id AND m.cf_id = ${cfId}
          WHERE o.deleted_at IS NULL
          ORDER BY o.created_at, o.id`),
        (rows) => rows.map((row) => view(row, row.members))
      )
    })

    const read = Effect.fn("Organizations.read")(function* (orgId: OrgId) {
      const m = yield* membership(yield* currentCfId, orgId)
      return view(m, yield* memberCount(m.accountId))
    })

    /** The members, owner first; Members see the others' e-mails masked. */
    const members = Effect.fn("Organizations.members")(function* (orgId: OrgId) {
        const cfId = yield* currentCfId
        const m = yield* membership(cfId, orgId)
        const rows = yield* decodedRows(MemberRow, sql`
          SELECT i.cf_id, i.display_name, i.email, m.role, m.joined_at
          FROM organization_members m JOIN identities i ON i.cf_id = m.cf_id
          WHERE m.account_id = ${m.accountId}::bigint
          ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, m.joined_at, i.cf_id`)
        const full = refusal(m.role, "seeEmails", "Seeing e-mail addresses") === undefined
        return rows.map((row): MemberView => ({
          cfId: row.cfId,
          displayName: row.displayName,
          email: row.email === null ? null : full || row.cfId === cfId ? row.email : maskEmail(row.email),
          role: row.role,
          joinedAt: row.joinedAt.toISOString()
        }))
      })

    /**
     * Revokes the account's live keys (only those `member` issued or holds, when given). A revision bump makes every replica's
     * key cache drop them at once (services/accounts/ApiKeys.ts).
     */
    const revokeKeys = (accountId: string, now: Date, member?: string) => sql`
      UPDATE api_keys SET status = 'revoked', revoked_at = ${now}::timestamptz, frozen_by = NULL, frozen_at = NULL,
        revision = nextval('api_key_revision_seq')
      WHERE account_id = ${accountId}::bigint AND status <> 'revoked'
        ${member === undefined ? sql`` : sql`AND (issued_by_cf_id = ${member} OR holder_cf_id = ${member})`}`

    /**
     * Revokes the account's live app grants (only those `issuedBy` issued, when given): a grant acts as its issuer, who
     * no longer may (services/accounts/AppGrants.ts).
     */
    const revokeGrants = (accountId: string, now: Date, issuedBy?: string) => sql`
      UPDATE app_grants SET status = 'revoked', revoked_at = ${now}::timestamptz, frozen_at = NULL
      WHERE account_id = ${accountId}::bigint AND status <> 'revoked'
        ${issuedBy === undefined ? sql`` : sql`AND issued_by_cf_id = ${issuedBy}`}`

    /**
     * Takes `memberCfId` out: the membership row, their keys and app grants on the organization's account, their
     * context there. `now` stamps the revocations (read once from Clock by the operation).
     */
    const expel = (accountId: string, memberCfId: string, now: Date) =>
      Effect.gen(function* () {
        yield* sql`DELETE FROM organization_members WHERE account_id = ${accountId}::bigint AND cf_id = ${memberCfId}`
        yield* revokeKeys(accountId, now, memberCfId)
        yield* revokeGrants(accountId, now, memberCfId)
        yield* sql`UPDATE identities SET active_account_id = NULL WHERE cf_id = ${memberCfId} AND active_account_id = ${accountId}::bigint`
      })

    /** Removal by another member: Admins remove Members, the Owner removes Admins; the Owner is never removed. */
    const removeMember = Effect.fn("Organizations.removeMember")(function* (orgId: OrgId, memberCfId: CfId) {
      const cfId = yield* currentCfId
      return yield* revokingKeys(
        Effect.gen(function* () {
          const m = yield* membership(cfId, orgId, true)
          const [target] = yield* decodedRows(Schema.Struct({ role: OrganizationRole }), sql`
            SELECT role FROM organization_members WHERE account_id = ${m.accountId}::bigint AND cf_id = ${memberCfId}`)
          if (target === undefined) return yield* new NotFound({ message: `${memberCfId} is not a member of ${orgId}.` })
          if (target.role === "owner") return yield* new Conflict({ message: "The owner cannot be removed." })
          if (memberCfId === cfId) return yield* new Conflict({ message: "Use leave to take yourself out of an organization." })
          yield* requireAllowed(m.role, actionOverRole(target.role)!, `Removing ${target.role === "admin" ? "an admin" : "a member"}`)
          yield* expel(m.accountId, memberCfId, new Date(yield* Clock.currentTimeMillis))
          return { removed: memberCfId }
        })
      )
    })

    /** Leaving takes effect at once; the owner cannot leave (it deletes the organization instead). */
    const leave = Effect.fn("Organizations.leave")(function* (orgId: OrgId) {
      const cfId = yield* currentCfId
      return yield* revokingKeys(
        Effect.gen(function* () {
          const m = yield* membership(cfId, orgId, true)
          if (m.role === "owner") {
            return yield* new Conflict({ message: "The owner cannot leave; delete the organization once every other member has left." })
          }
          yield* expel(m.accountId, cfId, new Date(yield* Clock.currentTimeMillis))
          return { left: orgId }
        })
      )
    })

    /** The owner deletes it once every other member is gone and no credit is left in it; its keys are revoked. */
    const remove = Effect.fn("Organizations.remove")(function* (orgId: OrgId) {
      const cfId = yield* currentCfId
      return yield* revokingKeys(
        Effect.gen(function* () {
          const m = yield* membership(cfId, orgId, true)
          yield* requireAllowed(m.role, "deleteOrganization", "Deleting the organization")
          if ((yield* memberCount(m.accountId)) > 1) {
            return yield* new Conflict({ message: "Remove every other member before deleting the organization." })
          }
          const [account] = yield* decodedRows(Schema.Struct({ balanceWei: Schema.String, reservedWei: Schema.String }), sql`
            SELECT balance_wei::text AS balance_wei, reserved_wei::text AS reserved_wei FROM accounts WHERE id = ${m.accountId}::bigint FOR UPDATE`)
          if (BigInt(account!.balanceWei) !== 0n || BigInt(account!.reservedWei) !== 0n) {
            return yield* new Conflict({ message: "The organization still holds credits or live reservations; it can be deleted once it holds none." })
          }
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* expel(m.accountId, cfId, now)
          yield* sql`UPDATE organizations SET deleted_at = ${now}::timestamptz WHERE account_id = ${m.accountId}::bigint`
          yield* revokeKeys(m.accountId, now)
          yield* revokeGrants(m.accountId, now)
          return { deleted: orgId }
        })
      )
    })

    /** Switches the calling identity's active context: an organization it belongs to, or null for the personal account. */
    const setContext = Effect.fn("Organizations.setContext")(function* (orgId: OrgId | null) {
      const cfId = yield* currentCfId
      return yield* (orgId === null
        ? Effect.as(orDieUnlessUnavailable(sql`UPDATE identities SET active_account_id = NULL WHERE cf_id = ${cfId}`), { type: "personal" as const })
        : transaction(
          Effect.gen(function* () {
            const m = yield* membership(cfId, orgId)
            yield* sql`UPDATE identities SET active_account_id = ${m.accountId}::bigint WHERE cf_id = ${cfId}`
            return { type: "organization" as const, orgId: m.id, name: m.name, role: m.role }
          })
        ))
    })

    /** An identity's active context as it stands (a context whose membership ended reads as personal); sign-in reads it. */
    const context = (cfId: string): Effect.Effect<ContextView> =>
      Effect.map(
        decodedRows(Schema.Struct({ id: OrgId, name: Schema.String, role: OrganizationRole }), sql`
          SELECT o.id, o.name, m.role
          FROM identities i
          JOIN organizations o ON o.account_id = i.active_account_id AND o.deleted_at IS NULL
          JOIN organization_members m ON m.account_id = o.account_id AND m.cf_id = i.cf_id
          WHERE i.cf_id = ${cfId}`),
        (rows): ContextView => {
          const row = rows[0]
          return row === undefined ? { type: "personal" } : { type: "organization", orgId: row.id, name: row.name, role: row.role }
        }
      )

    return {
      create,
      list,
      read,
      members,
      removeMember,
      leave,
      remove,
      setContext,
      context,
      authorised,
      /** The calling identity's membership of `orgId` (404 when none: never another's organization). */
      membership: Effect.fn("Organizations.membership")(function* (orgId: OrgId) {
        return yield* membership(yield* currentCfId, orgId)
      }),
      /** `cfId`'s membership of `orgId` (404 when none): for a reader that is not the caller, such as an invitation's page. */
      membershipOf: (cfId: string, orgId: string) => membership(cfId, orgId)
    } as const
  })
}) {}
