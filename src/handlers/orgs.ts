/**
 * Organizations and their invitations: decode, call the service with the signed-in identity, encode; and the public
 * page of an invitation's link.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { Invitations } from "../../services/accounts/Invitations.ts"
import { OrganizationCredits, type TransferView } from "../../services/accounts/OrganizationCredits.ts"
import { Organizations } from "../../services/accounts/Organizations.ts"
import { SESSION_COOKIE, Sessions } from "../../services/accounts/Sessions.ts"
import { CurrentIdentity } from "../api/SessionAuth.ts"
import { ServerApi } from "../api/ServerApi.ts"

export const OrgsHandlers = HttpApiBuilder.group(ServerApi, "orgs", (handlers) =>
  Effect.gen(function* () {
    const orgs = yield* Organizations
    const invitations = yield* Invitations
    const credits = yield* OrganizationCredits
    const cfId = Effect.map(CurrentIdentity, (identity) => identity.cfId)
    const transferView = (t: TransferView) => ({
      transferId: t.transferId,
      amountWei: t.amountWei.toString(),
      personalBalanceWei: t.personalBalanceWei.toString(),
      organizationBalanceWei: t.organizationBalanceWei.toString()
    })
    return handlers
      .handle("createOrganization", ({ payload }) => Effect.flatMap(cfId, (id) => orgs.create(id, payload.name)))
      .handle("listOrganizations", () => Effect.map(Effect.flatMap(cfId, orgs.list), (data) => ({ object: "list" as const, data })))
      .handle("getOrganization", ({ path }) => Effect.flatMap(cfId, (id) => orgs.read(id, path.id)))
      .handle("deleteOrganization", ({ path }) => Effect.flatMap(cfId, (id) => orgs.remove(id, path.id)))
      .handle("listMembers", ({ path }) =>
        Effect.map(Effect.flatMap(cfId, (id) => orgs.members(id, path.id)), (data) => ({ object: "list" as const, data }))
      )
      .handle("removeMember", ({ path }) => Effect.flatMap(cfId, (id) => orgs.removeMember(id, path.id, path.cfId)))
      .handle("leaveOrganization", ({ path }) => Effect.flatMap(cfId, (id) => orgs.leave(id, path.id)))
      .handle("contributeCredits", ({ path, payload }) =>
        Effect.flatMap(CurrentIdentity, (me) => Effect.map(credits.contribute(me.cfId, me.personalAccountId, path.id, payload.amountWei), transferView))
      )
      .handle("withdrawCredits", ({ path, payload }) =>
        Effect.flatMap(CurrentIdentity, (me) => Effect.map(credits.withdraw(me.cfId, me.personalAccountId, path.id, payload.amountWei), transferView))
      )
      .handle("setContext", ({ payload }) => Effect.flatMap(cfId, (id) => orgs.setContext(id, payload.orgId)))
      .handle("invite", ({ path, payload }) => Effect.flatMap(cfId, (id) => invitations.invite(id, path.id, payload.email, payload.role)))
      .handle("listInvitations", ({ path }) =>
        Effect.map(Effect.flatMap(cfId, (id) => invitations.list(id, path.id)), (data) => ({ object: "list" as const, data }))
      )
      .handle("resendInvitation", ({ path }) => Effect.flatMap(cfId, (id) => invitations.resend(id, path.id, path.invitationId)))
      .handle("revokeInvitation", ({ path }) => Effect.flatMap(cfId, (id) => invitations.revoke(id, path.id, path.invitationId)))
      .handle("acceptInvitation", ({ payload }) => Effect.flatMap(cfId, (id) => invitations.accept(id, payload.token)))
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
