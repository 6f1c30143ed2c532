/**
 * Invitations (shown to the roles that may see them): invite an address as Member, or as Admin where the caller's
 * role may hand that out; the list with each invitation's state; resend (a new link and expiry, the old link stops
 * working) and revoke. The link itself is mailed, never shown here.
 */
import { useSignal } from "@preact/signals"
import type { InvitationId } from "../../../domain/accounts/ids.ts"
import { actionOverRole, can } from "../../../domain/accounts/roles.ts"
import { utc } from "../../shared/format.ts"
import { Status, useRead } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { ActionError, Field, useActions } from "./actions.tsx"
import { type Organization, ROLE_NAMES } from "./memberships.ts"

type Invited = "admin" | "member"

export const InvitationsSection = (props: { readonly org: Organization; readonly refresh: () => void }) => {
  const { org } = props
  const version = useSignal(0)
  const list = useRead(() => call((c) => c.orgs.listInvitations({ path: { id: org.id } })), [org.id, version.value])
  const email = useSignal("")
  const role = useSignal<Invited>("member")
  const sent = useSignal<string | null>(null)
  const actions = useActions()
  const roles: ReadonlyArray<Invited> = (["member", "admin"] as const).filter((r) => can(org.role, actionOverRole(r)!))
  const mayHandOut = (r: Invited) => can(org.role, actionOverRole(r)!)

  const invite = async (event: Event) => {
    event.preventDefault()
    sent.value = null
    await actions.run("invite", async () => {
      const invitation = await call((c) => c.orgs.invite({ path: { id: org.id }, payload: { email: email.value.trim(), role: role.value } }))
      sent.value = `Invitation mailed to ${invitation.email} as ${ROLE_NAMES[invitation.role]}; the link is valid until ${utc(invitation.expiresAt)}.`
      email.value = ""
      version.value += 1
    })
  }
  const act = (id: InvitationId, what: "resendInvitation" | "revokeInvitation") =>
    actions.run(`${what}-${id}`, async () => {
      await call((c) => c.orgs[what]({ path: { id: org.id, invitationId: id } }))
      version.value += 1
      props.refresh()
    })

  return (
    <section aria-labelledby="invitations">
      <h2 id="invitations">Invitations</h2>
      <form onSubmit={invite} aria-labelledby="invite">
        <h3 id="invite">Invite someone</h3>
        <Field id="invite-email" type="email" label="E-mail address to invite" value={email.value} onInput={(v) => (email.value = v)} required />
        <label for="invite-role">Role</label>
        <select id="invite-role" value={role.value} onChange={(e) => (role.value = (e.target as HTMLSelectElement).value as Invited)}>
          {roles.map((r) => <option key={r} value={r}>{ROLE_NAMES[r]}</option>)}
        </select>
        <button type="submit" disabled={actions.busy}>Send invitation</button>
        <ActionError of={actions} at="invite" />
        {sent.value !== null && <p role="status">{sent.value}</p>}
      </form>
      <Status of={list} what="the invitations" />
      {list.state === "ready" &&
        (list.value.data.length === 0 ? (
          <p class="empty">No invitation yet: invite someone above. They accept from the link in the e-mail, signed in with that address, within 7 days.</p>
        ) : (
          <div class="table-scroll">
            <table data-testid="invitations-table">
              <caption class="visually-hidden">Invitations to {org.name}</caption>
              <thead>
                <tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Invited by</th><th scope="col">Expires (UTC)</th><th scope="col">Actions</th></tr>
              </thead>
              <tbody>
                {list.value.data.map((i) => (
                  <tr key={i.id} data-invitation={i.id}>
                    <td>{i.email}</td>
                    <td>{ROLE_NAMES[i.role]}</td>
                    <td data-testid="invitation-state">{i.state}</td>
                    <td>{i.invitedBy}</td>
                    <td>{utc(i.expiresAt)}</td>
                    <td>
                      {mayHandOut(i.role) && (i.state === "pending" || i.state === "expired") && (
                        <button type="button" disabled={actions.busy} onClick={() => act(i.id, "resendInvitation")}>Resend</button>
                      )}{" "}
                      {mayHandOut(i.role) && i.state === "pending" && (
                        <button type="button" disabled={actions.busy} onClick={() => act(i.id, "revokeInvitation")}>Revoke</button>
                      )}
                      <ActionError of={actions} at={`resendInvitation-${i.id}`} />
                      <ActionError of={actions} at={`revokeInvitation-${i.id}`} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
    </section>
  )
}
