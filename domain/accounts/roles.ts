/**
 * The organization role matrix as data (SPEC.md "Organization rules", DESIGN.md section 12): one table of actions with
 * the least role each needs, and one `can(role, action)`. Handlers and services never compare roles themselves.
 */
import type { OrganizationRole } from "../errors.ts"
import { OrgRoleRequired } from "../errors.ts"

export type Role = typeof OrganizationRole.Type

/** Owner above Admin above Member. */
const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** Every action SPEC's table names, with the least role that may take it. */
export const ACTIONS = {
  /** Send inference requests paid from the organization's balance. */
  infer: "member",
  /** See keys, limits, pools, history, balance, and members with roles (Members see e-mails masked). */
  view: "member",
  /** Create, edit, freeze and revoke keys; set spending limits. */
  manageKeys: "admin",
  /** Create, edit and delete pools, and manage who is in them. */
  managePools: "admin",
  /** Connect apps that change the account. */
  connectApps: "admin",
  /** See full member e-mail addresses. */
  seeEmails: "admin",
  /** See pending invitations; invite, resend and revoke for Members; remove Members. */
  manageMembers: "admin",
  /** Invite, resend and revoke for Admins; remove Admins. */
  manageAdmins: "owner",
  /** Delete the organization (after every other member left). */
  deleteOrganization: "owner",
  // Not in SPEC's table (docs/decisions.md, "transfers"): credit reaches an organization only from its members.
  /** Move credit from one's personal account into the organization. */
  contributeCredits: "member",
  /** Move the organization's available credit to one's personal account (to empty it before deleting it). */
  withdrawOrganizationCredits: "owner"
} as const satisfies Record<string, Role>

export type Action = keyof typeof ACTIONS

export const can = (role: Role, action: Action): boolean => RANK[role] >= RANK[ACTIONS[action]]

/** The refusal of `action` to `role` (`details.minimumRole`, `details.actualRole`), or undefined when allowed. */
export const refusal = (role: Role, action: Action, what: string): OrgRoleRequired | undefined =>
  can(role, action)
    ? undefined
    : new OrgRoleRequired({
      message: `${what} needs the ${ACTIONS[action]} role in this organization; you are ${role === "admin" ? "an" : "a"} ${role}.`,
      details: { minimumRole: ACTIONS[action], actualRole: role }
    })

/** Handing out, resending, revoking or removing a role: Admins for Members, the Owner for Admins; never the Owner role. */
export const actionOverRole = (target: Role): Action | undefined =>
  target === "member" ? "manageMembers" : target === "admin" ? "manageAdmins" : undefined

/** SPEC "Organization rules": a user owns at most this many organizations. */
export const MAX_OWNED_ORGANIZATIONS = 10
