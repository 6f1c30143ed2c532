/**
 * `/console/orgs/:id`: one organization. What shows follows the caller's role as the API reports it
 * (`GET /v1/orgs/{id}` carries it) through the one role matrix (domain/accounts/roles.ts `can`): a control the role
 * does not allow is not offered, and whatever the server still refuses shows its message beside the control.
 */
import { useSignal } from "@preact/signals"
import { useLocation, useRoute } from "preact-iso"
import type { OrgId } from "../../../domain/accounts/ids.ts"
import { can } from "../../../domain/accounts/roles.ts"
import { utc } from "../../shared/format.ts"
import { Status, useRead } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { identity } from "../session.ts"
import { ActionError, Confirm, useActions } from "./actions.tsx"
import { CreditsSection } from "./CreditsSection.tsx"
import { InvitationsSection } from "./InvitationsSection.tsx"
import { consolePath, afterMembershipChange, ROLE_NAMES, switchContext } from "./memberships.ts"
import { MembersSection } from "./MembersSection.tsx"
import { PoolsSection } from "./PoolsSection.tsx"

export const OrgPage = () => {
  const { params } = useRoute()
  const { route } = useLocation()
  // From the address bar, unchecked: the server judges it, and a malformed one is its 422 like any unknown one's 404.
  const orgId = (params["id"] ?? "") as OrgId
  const version = useSignal(0)
  const refresh = () => void (version.value += 1)
  const org = useRead(() => call((c) => c.orgs.getOrganization({ path: { id: orgId } })), [orgId, version.value])
  const members = useRead(() => call((c) => c.orgs.listMembers({ path: { id: orgId } })), [orgId, version.value])
  const actions = useActions()
  const who = identity.value
  const acting = who?.active_context.type === "organization" && who.active_context.org_id === orgId

  const gone = async () => {
    await afterMembershipChange()
    route(consolePath("console/orgs"))
  }

  return (
    <section aria-labelledby="org" class="orgs">
      <p><a href="console/orgs">All organizations</a></p>
      {org.state !== "ready" ? (
        <>
          <h1 id="org">Organization</h1>
          <Status of={org} what="the organization" />
        </>
      ) : (
        <>
          <h1 id="org">{org.value.name}</h1>
          <dl class="figures">
            <div><dt>Your role</dt><dd data-testid="my-role">{ROLE_NAMES[org.value.role]}</dd></div>
            <div><dt>Members</dt><dd>{org.value.members}</dd></div>
            <div><dt>Created</dt><dd>{utc(org.value.createdAt)}</dd></div>
            <div><dt>Id</dt><dd class="hash">{org.value.id}</dd></div>
          </dl>
          {acting ? (
            <p role="status">You are acting in this organization: the overview, keys and limits are its own.</p>
          ) : (
            <p>
              <button type="button" disabled={actions.busy} onClick={() => actions.run("switch", () => switchContext(orgId))}>Act in this organization</button>{" "}
              to see its balance, keys and limits on the other pages.
            </p>
          )}
          <ActionError of={actions} at="switch" />

          <MembersSection org={org.value} members={members} me={who?.cf_id ?? ""} refresh={refresh} />
          {can(org.value.role, "manageMembers") ? (
            <InvitationsSection org={org.value} refresh={refresh} />
          ) : (
            <section aria-labelledby="invitations"><h2 id="invitations">Invitations</h2><p>Owners and Admins invite new members.</p></section>
          )}
          <PoolsSection org={org.value} members={members} version={version.value} />
          <CreditsSection org={org.value} acting={acting} />

          <section aria-labelledby="leave-delete">
            <h2 id="leave-delete">{can(org.value.role, "deleteOrganization") ? "Delete the organization" : "Leave the organization"}</h2>
            {can(org.value.role, "deleteOrganization") ? (
              <>
                <p>Remove every other member and move its credit out first. Its keys are revoked with it.</p>
                <Confirm
                  label="Delete organization"
                  confirm="Yes, delete it"
                  disabled={actions.busy}
                  question={<>Delete <strong>{org.value.name}</strong> for good? This cannot be undone: its API keys are revoked and it disappears for everyone.</>}
                  onConfirm={() => actions.run("delete", async () => {
                    await call((c) => c.orgs.deleteOrganization({ path: { id: orgId } }))
                    await gone()
                  })}
                />
                <ActionError of={actions} at="delete" />
              </>
            ) : (
              <>
                <p>You can leave at any time; you then act in your personal account.</p>
                <Confirm
                  label="Leave organization"
                  confirm="Yes, leave"
                  disabled={actions.busy}
                  question={<>Leave <strong>{org.value.name}</strong>? You lose access at once, and every API key you issued or hold on it is revoked.</>}
                  onConfirm={() => actions.run("leave", async () => {
                    await call((c) => c.orgs.leaveOrganization({ path: { id: orgId } }))
                    await gone()
                  })}
                />
                <ActionError of={actions} at="leave" />
              </>
            )}
          </section>
        </>
      )}
    </section>
  )
}
