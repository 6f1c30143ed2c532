/**
 * The members with their roles (the API masks e-mails for Members) and their removal, offered where the caller's
 * role may remove that member's role. Removal revokes the member's keys on the organization: the confirmation says so.
 */
import type { MemberView } from "../../../src/api/OrgsApi.ts"
import { actionOverRole, can } from "../../../domain/accounts/roles.ts"
import { utc } from "../../shared/format.ts"
import { type Loaded, Status } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { ActionError, Confirm, useActions } from "./actions.tsx"
import { type Organization, ROLE_NAMES } from "./memberships.ts"

export type Member = typeof MemberView.Type

export const MembersSection = (props: {
  readonly org: Organization
  readonly members: Loaded<{ readonly data: ReadonlyArray<Member> }>
  readonly me: string
  readonly refresh: () => void
}) => {
  const actions = useActions()
  const { org, members } = props
  const mayRemove = (m: Member) => {
    const action = actionOverRole(m.role)
    return action !== undefined && m.cfId !== props.me && can(org.role, action)
  }
  const remove = (m: Member) =>
    actions.run(`remove-${m.cfId}`, async () => {
      await call((c) => c.orgs.removeMember({ path: { id: org.id, cfId: m.cfId } }))
      props.refresh()
    })

  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <Status of={members} what="the members" />
      {members.state === "ready" && (
        <div class="table-scroll">
          <table data-testid="members-table">
            <caption class="visually-hidden">Members of {org.name} with their roles</caption>
            <thead>
              <tr><th scope="col">Name</th><th scope="col">CF ID</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Joined (UTC)</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>
              {members.value.data.map((m) => (
                <tr key={m.cfId} data-member={m.cfId}>
                  <td>{m.displayName}{m.cfId === props.me ? " (you)" : ""}</td>
                  <td class="hash">{m.cfId}</td>
                  <td>{m.email ?? "none"}</td>
                  <td data-testid="member-role">{ROLE_NAMES[m.role]}</td>
                  <td>{utc(m.joinedAt)}</td>
                  <td>
                    {mayRemove(m) && (
                      <Confirm
                        label="Remove"
                        confirm="Yes, remove"
                        disabled={actions.busy}
                        question={<>Remove <strong>{m.displayName}</strong> from {org.name}? They lose access at once, and every API key they issued or hold on this organization is revoked (a revoked key cannot be restored).</>}
                        onConfirm={() => remove(m)}
                      />
                    )}
                    <ActionError of={actions} at={`remove-${m.cfId}`} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {members.state === "ready" && members.value.data.length === 1 && (
        <p class="empty">Nobody else is in it yet{can(org.role, "manageMembers") ? ": invite someone by e-mail below." : "."}</p>
      )}
    </section>
  )
}
