/**
 * Every permission check of an account operation goes through here, over the role matrix of
 * domain/accounts/roles.ts: what the calling identity's role allows in its active context, and in an organization
 * it names. Services call these; handlers never check a role.
 */
import { Effect } from "effect"
import { type Action, refusal, type Role } from "../../domain/accounts/roles.ts"
import type { OrgRoleRequired } from "../../domain/errors.ts"
import { CurrentIdentity } from "./CurrentIdentity.ts"

/** Refuses `action` to `role` (403 `org_role_required` naming both); `what` is how the refusal names the action. */
export const requireAllowed = (role: Role, action: Action, what: string): Effect.Effect<void, OrgRoleRequired> => {
  const refused = refusal(role, action, what)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}

/**
 * Refuses an action the calling identity's role in its active organization does not allow; the personal context
 * allows everything (SPEC "Organization rules").
 */
export const requireActiveRole = (action: Action, what: string): Effect.Effect<void, OrgRoleRequired, CurrentIdentity> =>
  Effect.flatMap(CurrentIdentity, (identity) => (identity.organization === null ? Effect.void : requireAllowed(identity.organization.role, action, what)))
