/**
 * `/console/invitations/:token`, where an invitation's e-mail links: the invitation while pending (who invites to
 * what, as which role, until when), only its state otherwise (SPEC "States and transitions"). Signed in, it is
 * accepted here; signed out, the sign-in shows beneath it and, the URL being unchanged, the visitor is back on this
 * page once signed in. The member an accepted link admitted is led into the organization.
 */
import { useLocation, useRoute } from "preact-iso"
import { INVITATION_TOKEN_PATTERN } from "../../../domain/accounts/formats.ts"
import { utc } from "../../shared/format.ts"
import { Status, useRead } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { identity } from "../session.ts"
import { SignIn } from "../SignIn.tsx"
import { ActionError, useActions } from "./actions.tsx"
import { afterMembershipChange, consolePath, ROLE_NAMES, switchContext } from "./memberships.ts"

const ENDED = {
  accepted: "This invitation was accepted. If it was you, sign in with the invited address to open the organization.",
  expired: "This invitation has expired. Ask whoever invited you to resend it: a new link comes by e-mail.",
  revoked: "This invitation was revoked and can no longer be accepted. Ask the organization for a new one if you still need it."
} as const

export const InvitationPage = () => {
  const { params } = useRoute()
  const { route } = useLocation()
  const token = params["token"] ?? ""
  const valid = INVITATION_TOKEN_PATTERN.test(token)
  const page = useRead(
    () => (valid ? call((c) => c.invitationPage.invitationPage({ path: { token } })) : Promise.reject(new Error("this is not an invitation link; check that it was copied whole."))),
    [token]
  )
  const actions = useActions()
  const who = identity.value
  const signedIn = who !== null && who !== undefined

  const entered = page.state === "ready" && "enter" in page.value ? page.value.enter : null
  const open = (orgId: string) =>
    actions.run("open", async () => {
      await switchContext(orgId)
      route(consolePath(`console/orgs/${orgId}`))
    })
  const accept = () =>
    actions.run("accept", async () => {
      const context = await call((c) => c.orgs.acceptInvitation({ payload: { token } }))
      if (context.type === "organization") route(consolePath(`console/orgs/${context.orgId}`))
      await afterMembershipChange()
    })

  return (
    <section aria-labelledby="invitation" class="narrow orgs">
      <h1 id="invitation">Invitation</h1>
      <Status of={page} what="the invitation" />
      {page.state === "ready" && page.value.state === "pending" && (
        <>
          <p data-testid="invitation-summary">
            <strong>{page.value.invitedBy}</strong> invited you to join <strong>{page.value.organization}</strong> as {ROLE_NAMES[page.value.role]}.
          </p>
          <p>The link works once, until {utc(page.value.expiresAt)}, for the e-mail address it was sent to.</p>
          {signedIn ? (
            <>
              <p>Signed in as {who.email ?? who.display_name}: accepting makes you a member and switches you into the organization.</p>
              <button type="button" disabled={actions.busy} onClick={accept}>Accept the invitation</button>
              <ActionError of={actions} at="accept" />
            </>
          ) : (
            <p>Sign in with the address the invitation was sent to; you come back here to accept it.</p>
          )}
        </>
      )}
      {page.state === "ready" && page.value.state !== "pending" && (
        entered !== null ? (
          <>
            <p role="status">You joined <strong>{entered.name}</strong> with this invitation.</p>
            <button type="button" disabled={actions.busy} onClick={() => open(entered.orgId)}>Open {entered.name}</button>
            <ActionError of={actions} at="open" />
          </>
        ) : (
          <p data-testid="invitation-ended">{ENDED[page.value.state]}</p>
        )
      )}
      {!signedIn && page.state === "ready" && (page.value.state === "pending" || page.value.state === "accepted") && <SignIn />}
    </section>
  )
}
