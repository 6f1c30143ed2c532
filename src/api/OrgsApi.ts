/**
 * Organizations (DESIGN.md section 11, orgs row; SPEC.md "Organization rules"): create, list, read, delete, members,
 * removal, leaving, and the active context. A session or a signed request (SessionAuth).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { INVITATION_TOKEN_PATTERN } from "../../domain/accounts/formats.ts"
import { CfId, InvitationId, OrgId } from "../../domain/accounts/ids.ts"
import { PositiveWei, WeiDigits } from "../../domain/accounts/ledger.ts"
import {
  Conflict,
  InsufficientBalance,
  InvitationAlreadyAccepted,
  InvitationExpired,
  InvitationRevoked,
  NotFound,
  OrganizationRole,
  OrgRoleRequired,
  ValidationFailed
} from "../../domain/errors.ts"
import { errorsWire } from "../http/errorEnvelope.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { Email, reportAllIssues, withoutNul } from "./shared.ts"

export const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant", jsonSchema: { type: "string", format: "date-time" } })

export const OrganizationView = Schema.Struct({
  id: OrgId,
  name: Schema.String,
  role: OrganizationRole.annotations({ description: "Your role in it" }),
  ownerCfId: CfId,
  members: Schema.Number.annotations({ description: "How many members it has, the owner included" }),
  createdAt: Timestamp
}).annotations({ identifier: "Organization" })

export const MemberView = Schema.Struct({
  cfId: CfId,
  displayName: Schema.String,
  email: Schema.NullOr(Schema.String).annotations({ description: "Masked (al***@example.com) when you are a Member; null when none" }),
  role: OrganizationRole,
  joinedAt: Timestamp
}).annotations({ identifier: "OrganizationMember" })

export const ContextView = Schema.Union(
  Schema.Struct({ type: Schema.Literal("personal") }),
  Schema.Struct({ type: Schema.Literal("organization"), orgId: OrgId, name: Schema.String, role: OrganizationRole })
).annotations({ identifier: "ActiveContext", description: "Where the session's requests act and are paid from" })

const CreateOrganization = reportAllIssues(
  Schema.Struct({ name: Schema.Trim.pipe(withoutNul, Schema.minLength(1), Schema.maxLength(100)) })
)
const ContextChange = reportAllIssues(Schema.Struct({ orgId: Schema.NullOr(OrgId) }))

const TransferRequest = reportAllIssues(Schema.Struct({ amountWei: PositiveWei }))
export const TransferView = Schema.Struct({
  transferId: Schema.String,
  amountWei: WeiDigits,
  personalBalanceWei: WeiDigits.annotations({ description: "Your personal balance after the move" }),
  organizationBalanceWei: WeiDigits
}).annotations({ identifier: "OrganizationTransfer" })

const InvitationState = Schema.Literal("pending", "expired", "accepted", "revoked")
const InvitedRole = Schema.Literal("admin", "member").annotations({ description: "The Owner role is never handed out" })

export const InvitationView = Schema.Struct({
  id: InvitationId,
  email: Schema.String,
  role: InvitedRole,
  state: InvitationState,
  invitedBy: Schema.String.annotations({ description: "The inviter's display name" }),
  createdAt: Timestamp,
  expiresAt: Timestamp
}).annotations({ identifier: "Invitation" })

export const InvitationPageView = Schema.Union(
  Schema.Struct({ state: Schema.Literal("pending"), organization: Schema.String, role: InvitedRole, invitedBy: Schema.String, expiresAt: Timestamp }),
  Schema.Struct({
    state: Schema.Literal("accepted"),
    enter: Schema.Struct({ orgId: OrgId, name: Schema.String }).annotations({
      description: "Only for the member it admitted, signed in and still a member: the organization to enter (POST /v1/orgs/context)"
    })
  }),
  Schema.Struct({ state: Schema.Literal("expired", "accepted", "revoked") })
).annotations({
  identifier: "InvitationPage",
  description: "A pending invitation in full; any other only its state, except that the member an accepted one admitted is led into the organization"
})

const Invite = reportAllIssues(
  Schema.Struct({
    email: Email,
    role: InvitedRole
  })
)
const Token = Schema.String.pipe(Schema.pattern(INVITATION_TOKEN_PATTERN)).annotations({ description: "The token of the invitation's link" })
const Accept = reportAllIssues(Schema.Struct({ token: Token }))

export const orgParam = HttpApiSchema.param("id", OrgId)
const invitationParam = HttpApiSchema.param("invitationId", InvitationId)
const tokenParam = HttpApiSchema.param("token", Token)
export const memberParam = HttpApiSchema.param("cfId", CfId)

/*
 * What the endpoints answer besides the group's errors (the session's, and the API's 500 and 503), declared once per
 * kind of action. None belongs on the group: creating and listing organizations name none (no 404), the list takes no
 * input (no 422), and reading, leaving, switching context and accepting need no role (no org_role_required).
 */
/** An organization named by id: not one of yours (404), a malformed id or body (422). */
const OneOrganizationErrors = errorsWire(NotFound, ValidationFailed)
/** An action some roles may take, refused in the organization's present state (409: its owner, a last member...). */
const ManagingErrors = errorsWire(NotFound, OrgRoleRequired, Conflict, ValidationFailed)
/** Moving credit between your account and the organization's. */
const TransferErrors = errorsWire(NotFound, OrgRoleRequired, InsufficientBalance, ValidationFailed)

export class OrgsGroup extends HttpApiGroup.make("orgs")
  .add(
    HttpApiEndpoint.post("createOrganization", "/v1/orgs")
      .setPayload(CreateOrganization)
      .addSuccess(OrganizationView, { status: 201 })
      .addError(errorsWire(Conflict, ValidationFailed))
      .annotate(OpenApi.Summary, "Create an organization you own (at most 10)")
  )
  .add(
    HttpApiEndpoint.get("listOrganizations", "/v1/orgs")
      .addSuccess(Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(OrganizationView) }))
      .annotate(OpenApi.Summary, "The organizations you belong to, with your role in each")
  )
  .add(
    HttpApiEndpoint.get("getOrganization")`/v1/orgs/${orgParam}`
      .addSuccess(OrganizationView)
      .addError(OneOrganizationErrors)
      .annotate(OpenApi.Summary, "One organization you belong to")
  )
  .add(
    HttpApiEndpoint.del("deleteOrganization")`/v1/orgs/${orgParam}`
      .addSuccess(Schema.Struct({ deleted: OrgId }))
      .addError(ManagingErrors)
      .annotate(OpenApi.Summary, "Delete an organization (the owner, once every other member left and it holds no credit)")
  )
  .add(
    HttpApiEndpoint.get("listMembers")`/v1/orgs/${orgParam}/members`
      .addSuccess(Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(MemberView) }))
      .addError(OneOrganizationErrors)
      .annotate(OpenApi.Summary, "The members with their roles (e-mails masked for Members)")
  )
  .add(
    HttpApiEndpoint.del("removeMember")`/v1/orgs/${orgParam}/members/${memberParam}`
      .addSuccess(Schema.Struct({ removed: CfId }))
      .addError(ManagingErrors)
      .annotate(OpenApi.Summary, "Remove a member at once (Admins remove Members, the Owner removes Admins); their keys here are revoked")
  )
  .add(
    HttpApiEndpoint.post("leaveOrganization")`/v1/orgs/${orgParam}/leave`
      .addSuccess(Schema.Struct({ left: OrgId }))
      .addError(errorsWire(NotFound, Conflict, ValidationFailed))
      .annotate(OpenApi.Summary, "Leave an organization at once (not its owner); your keys on it are revoked")
  )
  .add(
    HttpApiEndpoint.post("contributeCredits")`/v1/orgs/${orgParam}/credits`
      .setPayload(TransferRequest)
      .addSuccess(TransferView)
      .addError(TransferErrors)
      .annotate(OpenApi.Summary, "Move credit from your personal account into the organization (any member); requests made there are paid from it")
  )
  .add(
    HttpApiEndpoint.post("withdrawCredits")`/v1/orgs/${orgParam}/credits/withdraw`
      .setPayload(TransferRequest)
      .addSuccess(TransferView)
      .addError(TransferErrors)
      .annotate(OpenApi.Summary, "Move the organization's available credit to your personal account (the Owner)")
  )
  .add(
    HttpApiEndpoint.post("setContext", "/v1/orgs/context")
      .setPayload(ContextChange)
      .addSuccess(ContextView)
      .addError(OneOrganizationErrors)
      .annotate(OpenApi.Summary, "Switch the active context: an organization's id, or null for your personal account")
  )
  .add(
    HttpApiEndpoint.post("invite")`/v1/orgs/${orgParam}/invitations`
      .setPayload(Invite)
      .addSuccess(InvitationView, { status: 201 })
      .addError(ManagingErrors)
      .annotate(OpenApi.Summary, "Invite an address as Admin (the Owner) or Member (Owners and Admins); the link is mailed")
  )
  .add(
    HttpApiEndpoint.get("listInvitations")`/v1/orgs/${orgParam}/invitations`
      .addSuccess(Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(InvitationView) }))
      .addError(errorsWire(NotFound, OrgRoleRequired, ValidationFailed))
      .annotate(OpenApi.Summary, "The organization's invitations with their states (Owners and Admins)")
  )
  .add(
    HttpApiEndpoint.post("resendInvitation")`/v1/orgs/${orgParam}/invitations/${invitationParam}/resend`
      .addSuccess(InvitationView)
      .addError(ManagingErrors)
      .annotate(OpenApi.Summary, "Mail a new link with a new expiry; the old link stops working")
  )
  .add(
    HttpApiEndpoint.post("revokeInvitation")`/v1/orgs/${orgParam}/invitations/${invitationParam}/revoke`
      .addSuccess(InvitationView)
      .addError(ManagingErrors)
      .annotate(OpenApi.Summary, "Revoke a pending invitation (its page stays readable; an accepted one cannot be revoked)")
  )
  .add(
    HttpApiEndpoint.post("acceptInvitation", "/v1/invitations/accept")
      .setPayload(Accept)
      .addSuccess(ContextView)
      .addError(errorsWire(NotFound, InvitationAlreadyAccepted, InvitationExpired, InvitationRevoked, ValidationFailed))
      .annotate(OpenApi.Summary, "Accept an invitation addressed to your confirmed e-mail; you enter the organization")
  )
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Organizations") {}

/** The page of an invitation's link: public (the token is the secret). */
export class InvitationPageGroup extends HttpApiGroup.make("invitationPage")
  .add(
    HttpApiEndpoint.get("invitationPage")`/v1/invitations/${tokenParam}`
      .addSuccess(InvitationPageView)
      .addError(errorsWire(NotFound, ValidationFailed))
      .annotate(OpenApi.Summary, "What an invitation's link shows: the invitation while pending, only its state otherwise")
  )
  .annotate(OpenApi.Title, "Invitations") {}
