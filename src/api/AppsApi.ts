/**
 * Connected apps (SPEC "App grant", DESIGN.md section 11 apps row, COMPAT.md "App grants"): grants are issued, listed,
 * frozen, unfrozen and revoked by the signed-in identity in its active context (a session or a signed request); an
 * app calls the account tools with its grant as `Authorization: Bearer cfa_live_...` (AppGrantAuth).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { SCOPES } from "../../domain/accounts/appGrantRules.ts"
import { CfId, GrantId } from "../../domain/accounts/ids.ts"
import { GrantContextView, ToolOutput, UpperRole } from "../../domain/accounts/accountToolsWire.ts"
import {
  AppGrantFrozen,
  AppGrantRevoked,
  Conflict,
  Forbidden,
  InvalidAppGrant,
  NotFound,
  OrgRoleRequired,
  ValidationFailed
} from "../../domain/errors.ts"
import type { AuthenticatedGrant } from "../../services/accounts/AppGrants.ts"
import { errorWire, errorsWire } from "../http/errorEnvelope.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { reportAllIssues, withoutNul } from "./shared.ts"

const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant", jsonSchema: { type: "string", format: "date-time" } })
const Scope = Schema.Literal(...SCOPES).annotations({
  description: "account:read: read balance, spend, limits and keys; account:act: change the account (caps, inference)"
})

export const AppGrantView = Schema.Struct({
  id: GrantId,
  appName: Schema.String,
  scopes: Schema.Array(Scope).annotations({ description: "account:read is always held; account:act implies it" }),
  prefix: Schema.String.annotations({ description: "The token's first characters, to recognize it in the list" }),
  status: Schema.Literal("active", "frozen", "revoked"),
  issuedByCfId: CfId.annotations({ description: "The member who connected the app: the grant acts with their role" }),
  createdAt: Timestamp,
  frozenAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp).annotations({ description: "The last call the app made with it (to the minute)" })
}).annotations({ identifier: "AppGrant" })

export const IssuedAppGrant = Schema.Struct({
  grant: AppGrantView,
  token: Schema.String.annotations({ description: "The grant token `cfa_live_...` for the app: shown this once, never again" })
}).annotations({ identifier: "IssuedAppGrant" })

const AppGrantList = Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(AppGrantView) }).annotations({
  identifier: "AppGrantList"
})

export const NewAppGrant = reportAllIssues(
  Schema.Struct({
    appName: Schema.Trim.pipe(withoutNul, Schema.minLength(1), Schema.maxLength(100)),
    scopes: Schema.optional(Schema.Array(Scope).pipe(Schema.minItems(1), Schema.maxItems(SCOPES.length))).annotations({
      description: "Default [\"account:read\"]; account:act needs the admin role in an organization"
    })
  })
)

/**
 * What a change to one existing grant answers besides the group's errors: none such here (404), not in a state that
 * allows it (409), a role too low in the organization (403), a malformed id (422). Creating and listing name no grant.
 */
const OneGrantErrors = errorsWire(NotFound, Conflict, OrgRoleRequired, ValidationFailed)

const action = <const Name extends string>(name: Name, verb: string, summary: string) =>
  HttpApiEndpoint.post(name, `/v1/apps/grants/:id/${verb}`)
    .setPath(reportAllIssues(Schema.Struct({ id: GrantId })))
    .addSuccess(AppGrantView)
    .addError(OneGrantErrors)
    .annotate(OpenApi.Summary, summary)

export class AppsGroup extends HttpApiGroup.make("apps")
  .add(
    HttpApiEndpoint.post("createAppGrant", "/v1/apps/grants")
      .setPayload(NewAppGrant)
      .addSuccess(IssuedAppGrant, { status: 201 })
      .addError(errorsWire(OrgRoleRequired, ValidationFailed))
      .annotate(OpenApi.Summary, "Connect an app: a grant for the active context (its token is returned this once)")
  )
  .add(
    HttpApiEndpoint.get("listAppGrants", "/v1/apps/grants")
      .addSuccess(AppGrantList)
      .annotate(OpenApi.Summary, "The active context's app grants, revoked ones included")
  )
  .add(action("freezeAppGrant", "freeze", "Freeze a grant: its app is refused (403 app_grant_frozen) until the freeze is lifted"))
  .add(action("unfreezeAppGrant", "unfreeze", "Lift a grant's freeze"))
  .add(action("revokeAppGrant", "revoke", "Revoke a grant for good (401 app_grant_revoked); it stays listed"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Connected apps") {}

/** The grant an account-tools request authenticated with, its context and its issuer's role there now. */
export class CurrentAppGrant extends Context.Tag("CurrentAppGrant")<CurrentAppGrant, AuthenticatedGrant>() {}

export class AppGrantAuth extends HttpApiMiddleware.Tag<AppGrantAuth>()("AppGrantAuth", {
  provides: CurrentAppGrant,
  failure: Schema.Union(errorWire(InvalidAppGrant), errorWire(AppGrantFrozen), errorWire(AppGrantRevoked)),
  security: {
    appGrant: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An app grant token `cfa_live_...`, acting in the context it was issued for")
    )
  }
}) {}


const ToolView = Schema.Struct({
  name: Schema.String.annotations({ examples: ["account.overview"] }),
  description: Schema.String,
  scope: Scope.annotations({ description: "The scope a grant must hold to call it" }),
  minimumOrgRole: Schema.NullOr(UpperRole).annotations({
    description: "The least role the issuer needs in the grant's organization; null for a personal grant"
  }),
  inputSchema: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "JSON Schema of `input`" })
}).annotations({ identifier: "AccountTool" })

export const ToolCatalog = Schema.Struct({
  appName: Schema.String,
  context: GrantContextView,
  tools: Schema.Array(ToolView)
}).annotations({ identifier: "AccountToolCatalog" })

export const ToolCall = reportAllIssues(
  Schema.Struct({
    tool: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)).annotations({ description: "A tool's name" }),
    input: Schema.optional(Schema.Unknown).annotations({ description: "What the tool's inputSchema describes (default {})" })
  })
)

export const ToolResult = Schema.Struct({
  tool: Schema.String,
  result: ToolOutput.annotations({ description: "The tool's answer (each tool's own shape)" })
}).annotations({ identifier: "AccountToolResult" })

export class AccountToolsGroup extends HttpApiGroup.make("accountTools")
  .add(
    HttpApiEndpoint.get("listAccountTools", "/v1/account-tools")
      .addSuccess(ToolCatalog)
      .annotate(
        OpenApi.Summary,
        "What the grant's app may call (only the tools its scopes and its issuer's role allow): each tool's description, scope, minimum role and JSON Schema"
      )
  )
  .add(
    HttpApiEndpoint.post("callAccountTool", "/v1/account-tools/call")
      .setPayload(ToolCall)
      .addSuccess(ToolResult)
      .addError(errorsWire(NotFound, Forbidden, OrgRoleRequired, ValidationFailed))
      .annotate(OpenApi.Summary, "Call one account tool in the grant's context")
      .annotate(
        OpenApi.Description,
        "Refusals: an unknown tool 404; a scope the grant lacks 403 `forbidden` naming it (`needs account:act access (held: " +
          "account:read)`); a role too low 403 `org_role_required`; an invalid input 422 naming `input.<field>`."
      )
  )
  .middleware(AppGrantAuth)
  .annotate(OpenApi.Title, "Account tools") {}
