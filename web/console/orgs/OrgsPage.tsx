/**
 * `/console/orgs`: the organizations the user belongs to with their role in each, switching into one, and creating
 * one (a user owns at most 10; the server counts and refuses beyond).
 */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"
import { useLocation } from "preact-iso"
import { MAX_OWNED_ORGANIZATIONS } from "../../../domain/accounts/roles.ts"
import { utc } from "../../shared/format.ts"
import { Status } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { identity } from "../session.ts"
import { ActionError, Field, useActions } from "./actions.tsx"
import { consolePath, organizations, refreshOrganizations, ROLE_NAMES, switchContext } from "./memberships.ts"

export const OrgsPage = () => {
  const { route } = useLocation()
  const name = useSignal("")
  const actions = useActions()
  useEffect(() => void refreshOrganizations(), [])
  const list = organizations.value
  const who = identity.value
  const activeId = who?.active_context.type === "organization" ? who.active_context.org_id : null
  const owned = list.state === "ready" ? list.value.filter((o) => o.role === "owner").length : undefined

  const create = async (event: Event) => {
    event.preventDefault()
    await actions.run("create", async () => {
      const created = await call((c) => c.orgs.createOrganization({ payload: { name: name.value } }))
      name.value = ""
      await refreshOrganizations()
      route(consolePath(`console/orgs/${created.id}`))
    })
  }

  return (
    <section aria-labelledby="orgs" class="orgs">
      <h1 id="orgs">Organizations</h1>
      <p>An organization is an account its members share: requests made while acting in it are paid from its balance.</p>
      <Status of={list} what="your organizations" />
      {list.state === "ready" &&
        (list.value.length === 0 ? (
          <p class="empty">You belong to no organization yet. Create one below, or open the link of an invitation you were mailed.</p>
        ) : (
          <div class="table-scroll">
            <table data-testid="orgs-table">
              <caption class="visually-hidden">Your organizations</caption>
              <thead>
                <tr><th scope="col">Name</th><th scope="col">Your role</th><th scope="col" class="num">Members</th><th scope="col">Created (UTC)</th><th scope="col">Context</th></tr>
              </thead>
              <tbody>
                {list.value.map((o) => (
                  <tr key={o.id} data-org={o.id}>
                    <td><a href={`console/orgs/${o.id}`}>{o.name}</a></td>
                    <td>{ROLE_NAMES[o.role]}</td>
                    <td class="num">{o.members}</td>
                    <td>{utc(o.createdAt)}</td>
                    <td>
                      {o.id === activeId ? (
                        "Acting in it"
                      ) : (
                        <button type="button" disabled={actions.busy} onClick={() => actions.run(`switch-${o.id}`, () => switchContext(o.id))}>Act in it</button>
                      )}
                      <ActionError of={actions} at={`switch-${o.id}`} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <form onSubmit={create} aria-labelledby="new-org">
        <h2 id="new-org">Create an organization</h2>
        {owned !== undefined && <p>You own {owned} of at most {MAX_OWNED_ORGANIZATIONS} organizations.</p>}
        <Field id="org-name" label="Organization name" value={name.value} onInput={(v) => (name.value = v)} required />
        <button type="submit" disabled={actions.busy}>Create organization</button>
        <ActionError of={actions} at="create" />
      </form>
    </section>
  )
}
