/**
 * App grants without crypto (SPEC "App grant", "States and transitions"; COMPAT.md "App grants"): the token and id
 * formats, the scopes and the state rules. The HTTP API's definitions and the console import these, and the API
 * modules are bundled for the browser, so nothing here may reach `node:*`; generating and hashing tokens is
 * appGrants.ts, for the services.
 */

export const APP_GRANT_PREFIX = "cfa_live_"

/** Well-formed: the prefix and at least 256 bits of base64url. Anything else is refused without a lookup. */
const WELL_FORMED = /^cfa_live_[A-Za-z0-9_-]{43,}$/

export const isWellFormedAppGrant = (raw: string): boolean => WELL_FORMED.test(raw)

/** `app_` and 16 hex characters: the id the paths use. */
export const APP_GRANT_ID_PATTERN = /^app_[0-9a-f]{16}$/

export const SCOPES = ["account:read", "account:act"] as const
export type Scope = (typeof SCOPES)[number]

/**
 * The stored scopes of a grant asked for with `requested`: reading is always held (an app that may act must see what
 * it acts on), duplicates collapse, in the order of SCOPES.
 */
export const normalizeScopes = (requested: ReadonlyArray<Scope> | undefined): ReadonlyArray<Scope> => {
  const wanted = new Set<Scope>(["account:read", ...(requested ?? [])])
  return SCOPES.filter((scope) => wanted.has(scope))
}

/** The refusal text of a call that needs `scope` (COMPAT.md: `needs account:act access (held: account:read)`). */
export const missingScope = (held: ReadonlyArray<Scope>, scope: Scope): string | undefined =>
  held.includes(scope) ? undefined : `needs ${scope} access (held: ${held.join(", ")})`

export type AppGrantStatus = "active" | "frozen" | "revoked"
export type GrantAction = "freeze" | "unfreeze" | "revoke"
export const GRANT_ACTIONS: ReadonlyArray<GrantAction> = ["freeze", "unfreeze", "revoke"]

/**
 * What an action does to a grant in `status`: the new status, nothing (already there: answered as it stands), or a
 * refusal (a revoked grant is a record that never changes). Revoking is permanent from any live state.
 */
export const grantTransition = (
  status: AppGrantStatus,
  action: GrantAction
): { readonly _tag: "To"; readonly status: AppGrantStatus } | { readonly _tag: "Unchanged" } | { readonly _tag: "Revoked" } => {
  if (status === "revoked") return action === "revoke" ? { _tag: "Unchanged" } : { _tag: "Revoked" }
  const target: AppGrantStatus = action === "freeze" ? "frozen" : action === "unfreeze" ? "active" : "revoked"
  return target === status ? { _tag: "Unchanged" } : { _tag: "To", status: target }
}

/** The actions that move a grant in `status` somewhere: what a client offers (the others would change nothing). */
export const grantActionsFor = (status: AppGrantStatus): ReadonlyArray<GrantAction> =>
  GRANT_ACTIONS.filter((action) => grantTransition(status, action)._tag === "To")
