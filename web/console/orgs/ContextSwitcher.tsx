/**
 * The header's active-context switcher: the personal account or an organization the user belongs to. The server
 * holds the context (`POST /v1/orgs/context`); the console follows `/v1/me`'s `active_context`, which keys the pages.
 */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"
import { identity } from "../session.ts"
import "./orgs.css"
import { organizations, refreshOrganizations, ROLE_NAMES, switchContext } from "./memberships.ts"

export const ContextSwitcher = () => {
  const who = identity.value
  const busy = useSignal(false)
  const error = useSignal<string | null>(null)
  const cfId = who?.cf_id
  useEffect(() => {
    if (cfId !== undefined) void refreshOrganizations()
  }, [cfId])
  if (who === null || who === undefined) return null

  const active = who.active_context.type === "organization" ? who.active_context : null
  const listed = organizations.value.state === "ready" ? organizations.value.value : []
  // The active organization shows even before the list has loaded (or if it failed to).
  const options = active === null || listed.some((o) => o.id === active.org_id)
    ? listed.map((o) => ({ id: o.id, name: o.name, role: o.role }))
    : [{ id: active.org_id, name: active.name, role: active.role }, ...listed]

  const change = async (event: Event) => {
    const select = event.target as HTMLSelectElement
    const orgId = select.value === "" ? null : select.value
    busy.value = true
    error.value = null
    try {
      await switchContext(orgId)
    } catch (failure) {
      error.value = (failure as Error).message
      select.value = active?.org_id ?? ""
      void refreshOrganizations()
    } finally {
      busy.value = false
    }
  }
  return (
    <div class="context-switcher">
      <label for="active-context">Acting as</label>{" "}
      <select id="active-context" value={active?.org_id ?? ""} disabled={busy.value} onChange={change} data-testid="active-context">
        <option value="">Personal account</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>{o.name} ({ROLE_NAMES[o.role]})</option>
        ))}
      </select>
      {error.value !== null && <p class="error" role="alert">{error.value}</p>}
    </div>
  )
}
