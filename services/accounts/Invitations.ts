/**
 * Invitations to an organization (SPEC.md "Organization and invitation", "States and transitions", "Organization
 * rules"): invite, list, resend and revoke by a member whose role may hand out the invited role; the public page of a
 * link; accept by the signed-in identity whose confirmed e-mail is the invited one, which admits exactly one member
 * (a losing race gets invitation_already_accepted) and switches it into the organization. Mailed through the Mailer.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { InvitationId, normalizeEmail, OrgId } from "../../domain/accounts/ids.ts"
import {
  INVITATION_TTL_MS,
  invitationMessage,
  invitationState,
  type InvitationState,
  invitationToken,
  MAX_PENDING_INVITATIONS,
  tokenHash
} from "../../domain/accounts/invitations.ts"
import { actionOverRole } from "../../domain/accounts/roles.ts"
import {
  Conflict,
  Forbidden,
  InvitationAlreadyAccepted,
  InvitationExpired,
  InvitationRevoked,
  NotFound,
  OrganizationRole
} from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { CurrentIdentity, currentCfId } from "./CurrentIdentity.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { decodedRows } from "../platform/RepositoryBoundary.ts"
import { Mailer } from "./Mailer.ts"
import { type ContextView, Organizations } from "./Organizations.ts"

export interface InvitationView {
  readonly id: InvitationId
  readonly email: string
  readonly role: "admin" | "member"
  readonly state: InvitationState
  readonly invitedBy: string
  readonly createdAt: string
  readonly expiresAt: string
}

/** What the link's page shows: everything while pending, only the state otherwise (SPEC). */
export type InvitationPage =
  | { readonly state: "pending"; readonly organization: string; readonly role: "admin" | "member"; readonly invitedBy: string; readonly expiresAt: string }
  | { readonly state: "accepted"; readonly enter: { readonly orgId: string; readonly name: string } }
  | { readonly state: Exclude<InvitationState, "pending"> }

/** An invitation as ROW reads it; a row that does not decode is a defect at the boundary. */
const Row = Schema.Struct({
  id: InvitationId,
  accountId: Schema.String,
  email: Schema.String,
  role: Schema.Literal("admin", "member"),
  status: Schema.Literal("pending", "accepted", "revoked"),
  invitedBy: Schema.String,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  organization: Schema.String,
  orgId: OrgId,
  acceptedByCfId: Schema.NullOr(Schema.String)
})
type Row = typeof Row.Type

const ROW = (sql: SqlClient.SqlClient) => sql`
  SELECT v.id, v.account_id::text AS account_id, v.email, v.role, v.status, i.display_name AS invited_by, v.created_at, v.expires_at,
    o.name AS organization, o.id AS org_id, v.accepted_by_cf_id
  FROM organization_invitations v
  JOIN identities i ON i.cf_id = v.invited_by_cf_id
  JOIN organizations o ON o.account_id = v.account_id`

const newId = () => `inv_${randomBytes(8).toString("hex")}`

export class Invitations extends Effect.Service<Invitations>()("Invitations", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const mailer = yield* Mailer
    const orgs = yield* Organizations
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(sql.withTransaction(effect))
    const base = Option.getOrElse(config.publicBaseUrl, () => `http://${config.host}:${config.port}`).replace(/\/+$/, "")

    const view = (row: Row, now: Date): InvitationView => ({
      id: row.id,
      email: row.email,
      role: row.role,
      state: invitationState(row.status, row.expiresAt, now),
      invitedBy: row.invitedBy,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString()
    })

    /** The calling identity's membership, and the right to hand out (resend, revoke) `role`. */
    const authorised = (orgId: OrgId, role: "admin" | "member", what: string) => orgs.authorised(orgId, actionOverRole(role)!, what)

    // The link opens the console's invitation page, which reads GET /v1/invitations/{token} and accepts once signed in.
    const mail = (row: { email: string; role: "admin" | "member"; expiresAt: Date }, token: string, organization: string, inviter: string) =>
      mailer.send(row.email, invitationMessage({ organization, inviter, role: row.role, link: `${base}/console/invitations/${token}`, expiresAt: row.expiresAt }))

    const rowById = (accountId: string, id: string) =>
      Effect.flatMap(decodedRows(Row, sql`${ROW(sql)} WHERE v.account_id = ${accountId}::bigint AND v.id = ${id} FOR UPDATE OF v`), (rows) =>
        rows[0] === undefined ? Effect.fail(new NotFound({ message: `No invitation ${id} in this organization.` })) : Effect.succeed(rows[0])
      )

    /** Invites `email` with `role`; an address whose invitation expired gets it replaced, with a new link. */
    const invite = Effect.fn("Invitations.invite")(function* (orgId: OrgId, rawEmail: string, role: "admin" | "member") {
        const cfId = yield* currentCfId
        const email = normalizeEmail(rawEmail)
        const m = yield* authorised(orgId, role, `Inviting ${role === "admin" ? "an admin" : "a member"}`)
        const token = invitationToken(randomBytes(32))
        const now = new Date(yield* Clock.currentTimeMillis)
        const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS)
        const created = yield* transaction(
          Effect.gen(function* () {
            // Serialises the organization's invitations: the pending count below stays true until commit.
            yield* sql`SELECT account_id FROM organizations WHERE account_id = ${m.accountId}::bigint FOR UPDATE`
            const [member] = yield* sql`
              SELECT 1 FROM organization_members om JOIN identities i ON i.cf_id = om.cf_id
              WHERE om.account_id = ${m.accountId}::bigint AND i.email = ${email}`
            if (member !== undefined) return yield* new Conflict({ message: `${email} is already a member.` })
            const [open] = yield* decodedRows(Schema.Struct({ id: Schema.String, expiresAt: Schema.DateFromSelf }), sql`
              SELECT id, expires_at FROM organization_invitations
              WHERE account_id = ${m.accountId}::bigint AND email = ${email} AND status = 'pending'`)
            if (open !== undefined && open.expiresAt > now) {
              return yield* new Conflict({ message: `${email} has a pending invitation already; resend it instead.` })
            }
            const [pending] = yield* decodedRows(Schema.Struct({ n: Schema.Int }), sql`
              SELECT count(*)::int AS n FROM organization_invitations
              WHERE account_id = ${m.accountId}::bigint AND status = 'pending' AND expires_at > ${now}`)
            if ((pending?.n ?? 0) >= MAX_PENDING_INVITATIONS) {
              return yield* new Conflict({ message: `The organization has ${MAX_PENDING_INVITATIONS} pending invitations, the most allowed.` })
            }
            const id = open?.id ?? newId()
            if (open !== undefined) {
              yield* sql`
                UPDATE organization_invitations
                SET role = ${role}, token_hash = ${tokenHash(token)}, invited_by_cf_id = ${cfId}, created_at = ${now}, expires_at = ${expiresAt}
                WHERE id = ${id}`
            } else {
              yield* sql`
                INSERT INTO organization_invitations (id, account_id, email, role, token_hash, invited_by_cf_id, created_at, expires_at)
                VALUES (${id}, ${m.accountId}::bigint, ${email}, ${role}, ${tokenHash(token)}, ${cfId}, ${now}, ${expiresAt})`
            }
            return yield* rowById(m.accountId, id)
          })
        )
        yield* mail(created, token, m.name, created.invitedBy)
        return view(created, now)
      })

    /** Every invitation of the organization, newest first (Owners and Admins). */
    const list = Effect.fn("Invitations.list")(function* (orgId: OrgId) {
        const m = yield* orgs.authorised(orgId, "manageMembers", "Seeing invitations")
        const rows = yield* decodedRows(Row, sql`${ROW(sql)} WHERE v.account_id = ${m.accountId}::bigint ORDER BY v.created_at DESC, v.id`)
        const now = new Date(yield* Clock.currentTimeMillis)
        return rows.map((row) => view(row, now))
      })

    /** A new link and expiry for a pending or expired invitation; the old link stops working. */
    const resend = Effect.fn("Invitations.resend")(function* (orgId: OrgId, id: InvitationId) {
        const m = yield* orgs.membership(orgId)
        const token = invitationToken(randomBytes(32))
        const now = new Date(yield* Clock.currentTimeMillis)
        const row = yield* transaction(
          Effect.gen(function* () {
            const row = yield* rowById(m.accountId, id)
            yield* authorised(orgId, row.role, `Resending ${row.role === "admin" ? "an admin's" : "a member's"} invitation`)
            if (row.status !== "pending") return yield* new Conflict({ message: `The invitation is ${row.status}; it cannot be resent.` })
            yield* sql`
              UPDATE organization_invitations SET token_hash = ${tokenHash(token)}, expires_at = ${new Date(now.getTime() + INVITATION_TTL_MS)}
              WHERE id = ${id}`
            return yield* rowById(m.accountId, id)
          })
        )
        yield* mail(row, token, m.name, row.invitedBy)
        return view(row, now)
      })

    /** Revokes a pending invitation: its page stays readable, it can never be accepted; an accepted one is refused. */
    const revoke = Effect.fn("Invitations.revoke")(function* (orgId: OrgId, id: InvitationId) {
        const m = yield* orgs.membership(orgId)
        return yield* transaction(
          Effect.gen(function* () {
            const row = yield* rowById(m.accountId, id)
            yield* authorised(orgId, row.role, `Revoking ${row.role === "admin" ? "an admin's" : "a member's"} invitation`)
            if (row.status === "accepted") return yield* new Conflict({ message: "An accepted invitation cannot be revoked; remove the member instead." })
            const now = new Date(yield* Clock.currentTimeMillis)
            if (row.status === "pending") yield* sql`UPDATE organization_invitations SET status = 'revoked', revoked_at = ${now}::timestamptz WHERE id = ${id}`
            return view(yield* rowById(m.accountId, id), now)
          })
        )
      })

    const byToken = (token: string, lock: boolean) =>
      Effect.map(decodedRows(Row, sql`${ROW(sql)} WHERE v.token_hash = ${tokenHash(token)} ${lock ? sql`FOR UPDATE OF v` : sql``}`), (rows) => rows[0])

    /**
     * The link's page: the invitation while pending, only its state otherwise; except that the member it admitted,
     * opening it again while signed in (`viewerCfId`) and still a member, is led into the organization (SPEC "States and
     * transitions"): the page names it, for the client to enter with `POST /v1/orgs/context`.
     */
    const page = Effect.fn("Invitations.page")(function* (token: string, viewerCfId: string | undefined): Effect.fn.Return<InvitationPage, NotFound> {
        const row = yield* orDieUnlessUnavailable(byToken(token, false))
        if (row === undefined) return yield* new NotFound({ message: "No invitation has this link." })
        const state = invitationState(row.status, row.expiresAt, new Date(yield* Clock.currentTimeMillis))
        if (state === "pending") {
          return { state, organization: row.organization, role: row.role, invitedBy: row.invitedBy, expiresAt: row.expiresAt.toISOString() }
        }
        if (state === "accepted" && viewerCfId !== undefined && viewerCfId === row.acceptedByCfId) {
          const member = yield* Effect.either(orgs.membershipOf(viewerCfId, row.orgId))
          if (member._tag === "Right") return { state, enter: { orgId: row.orgId, name: row.organization } }
        }
        return { state }
      })

    /**
     * Accepts for the calling identity when its confirmed e-mail is the invited address: one transaction that locks the
     * invitation, admits the member and switches it into the organization.
     */
    const accept = Effect.fn("Invitations.accept")(function* (
      token: string
    ): Effect.fn.Return<ContextView, NotFound | Forbidden | InvitationAlreadyAccepted | InvitationExpired | InvitationRevoked, CurrentIdentity> {
      const cfId = yield* currentCfId
      return yield* transaction(
        Effect.gen(function* () {
          const row = yield* byToken(token, true)
          if (row === undefined) return yield* new NotFound({ message: "No invitation has this link." })
          const [me] = yield* decodedRows(Schema.Struct({ email: Schema.NullOr(Schema.String) }), sql`SELECT email FROM identities WHERE cf_id = ${cfId}`)
          // Accepted before, or by the accept that won a race: exactly one admission per invitation.
          if (row.status === "accepted") return yield* new InvitationAlreadyAccepted({ message: "This invitation was accepted already." })
          if (row.status === "revoked") return yield* new InvitationRevoked({ message: "This invitation was revoked." })
          const now = yield* Clock.currentTimeMillis
          if (row.expiresAt.getTime() <= now) return yield* new InvitationExpired({ message: "This invitation has expired; ask for a new one." })
          if (me?.email !== row.email) {
            return yield* new Forbidden({ message: "This invitation is for another e-mail address; sign in with the invited address (confirmed)." })
          }
          yield* sql`
            UPDATE organization_invitations SET status = 'accepted', accepted_at = ${new Date(now)}::timestamptz, accepted_by_cf_id = ${cfId}
            WHERE id = ${row.id}`
          yield* sql`
            INSERT INTO organization_members (account_id, cf_id, role) VALUES (${row.accountId}::bigint, ${cfId}, ${row.role})
            ON CONFLICT (account_id, cf_id) DO NOTHING`
          return yield* enter(cfId, row)
        })
      )
    })

    const enter = (cfId: string, row: Row) =>
      Effect.gen(function* () {
        const [member] = yield* decodedRows(Schema.Struct({ role: OrganizationRole }), sql`
          SELECT role FROM organization_members WHERE account_id = ${row.accountId}::bigint AND cf_id = ${cfId}`)
        if (member === undefined) return yield* new NotFound({ message: "You are no longer a member of this organization." })
        yield* sql`UPDATE identities SET active_account_id = ${row.accountId}::bigint WHERE cf_id = ${cfId}`
        return { type: "organization" as const, orgId: row.orgId, name: row.organization, role: member.role } satisfies ContextView
      })

    return { invite, list, resend, revoke, page, accept } as const
  })
}) {}
