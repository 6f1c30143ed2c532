/**
 * Organizations and their invitations: decode, call the service (which acts for the CurrentIdentity), encode; and the public
 * page of an invitation's link.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { Invitations } from "../../services/accounts/Invitations.ts"
import { OrganizationCredits, type TransferView } from "../../services/accounts/OrganizationCredits.ts"
import { Organizations } from "../../services/accounts/Organizations.ts"
import { SESSION_COOKIE, Sessions } from "../../services/accounts/Sessions.ts"
import { ServerApi } from "../api/ServerApi.ts"

export const OrgsHandlers = HttpApiBuilder.group(ServerApi, "orgs", (handlers) =>
  Effect.gen(function* () {
    const orgs = yield* Organizations
    const invitations = yield* Invitations
    const credits = yield* OrganizationCredits
    const transferView = (t: TransferView) => ({
      transferId: t.transferId,
      amountWei: t.amountWei.toString(),
      personalBalanceWei: t.personalBalanceWei.toString(),
      organizationBalanceWei: t.organizationBalanceWei.toString()
    })
    return handlers
      .handle("createOrganization", ({ payload }) => orgs.create(payload.name))
      .handle("listOrganizations", () => Effect.map(orgs.list(), (data) => ({ object: "list" as const, data })))
      .handle("getOrganization", ({ path }) => orgs.read(path.id))
      .handle("deleteOrganization", ({ path }) => orgs.remove(path.id))
      .handle("listMembers", ({ path }) =>
        Effect.map(orgs.members(path.id), (data) => ({ object: "list" as const, data }))
      )
      .handle("removeMember", ({ path }) => orgs.removeMember(path.id, path.cfId))
      .handle("leaveOrganization", ({ path }) => orgs.leave(path.id))
      .handle("contributeCredits", ({ path, payload }) =>
        Effect.map(credits.contribute(path.id, payload.amountWei), transferView)
      )
      .handle("withdrawCredits", ({ path, payload }) =>
        Effect.map(credits.withdraw(path.id, payload.amountWei), transferView)
      )
      .handle("setContext", ({ payload }) => orgs.setContext(payload.orgId))
      .handle("invite", ({ path, payload }) => invitations.invite(path.id, payload.email, payload.role))
      .handle("listInvitations", ({ path }) =>
        Effect.map(invitations.list(path.id), (data) => ({ object: "list" as const, data }))
      )
      .handle("resendInvitation", ({ path }) => invitations.resend(path.id, path.invitationId))
      .handle("revokeInvitation", ({ path }) => invitations.revoke(path.id, path.invitationId))
      .handle("acceptInvitation", ({ payload }) => invitations.accept(payload.token))
  })
)

/** Public: the token is the secret. A session cookie, when one comes, only tells who is looking (never required). */
export const InvitationPageHandlers = HttpApiBuilder.group(ServerApi, "invitationPage", (handlers) =>
  Effect.gen(function* () {
    const invitations = yield* Invitations
    const sessions = yield* Sessions
    const viewer = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const token = request.headers["cookie"] === undefined ? undefined : request.cookies[SESSION_COOKIE]
      return token === undefined || token === "" ? Effect.succeed(undefined) : Effect.map(sessions.peek(token), Option.getOrUndefined)
    })
    return handlers.handle("invitationPage", ({ path }) => Effect.flatMap(viewer, (cfId) => invitations.page(path.token, cfId)))
  })
)
