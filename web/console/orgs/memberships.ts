/**
 * The organizations the signed-in user belongs to (`GET /v1/orgs`), shared by the header's context switcher and the
 * organization pages, and the switch of the active context (`POST /v1/orgs/context`). A switch re-reads `/v1/me`,
 * whose `active_context` keys the console's pages: the page open re-reads everything in the new context.
 */
import { signal } from "@preact/signals"
import { OrgId } from "../../../domain/accounts/ids.ts"
import type { OrganizationView } from "../../../src/api/OrgsApi.ts"
import type { Loaded } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { refreshIdentity } from "../session.ts"

export type Organization = typeof OrganizationView.Type
export type Role = Organization["role"]

export const organizations = signal<Loaded<ReadonlyArray<Organization>>>({ state: "loading" })

let asked = 0
/** Reads the list again; an older answer arriving after a newer one is dropped. */
export const refreshOrganizations = async (): Promise<void> => {
  const mine = ++asked
  try {
    const list = await call((c) => c.orgs.listOrganizations())
    if (mine === asked) organizations.value = { state: "ready", value: list.data }
  } catch (failure) {
    if (mine === asked) organizations.value = { state: "failed", message: (failure as Error).message }
  }
}

/** Acts in `orgId`, or in the personal account for null; rejects with the API's refusal. */
export const switchContext = async (orgId: string | null): Promise<void> => {
  await call((c) => c.orgs.setContext({ payload: { orgId: orgId === null ? null : OrgId.make(orgId) } }))
  await refreshIdentity()
}

/** After joining, leaving or deleting an organization: the list and the context (the server may have changed it). */
export const afterMembershipChange = () => Promise.all([refreshOrganizations(), refreshIdentity()])

export const ROLE_NAMES: Record<Role, string> = { owner: "Owner", admin: "Admin", member: "Member" }

/**
 * A console route as the router wants it: the absolute path of `console/...` under the service's root (the shell's
 * pinned `<base>`), so a path prefix in front of the service keeps working.
 */
export const consolePath = (relative: string): string => new URL(relative, document.baseURI).pathname
