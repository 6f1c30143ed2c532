/**
 * API keys (SPEC "API key"; DESIGN section 11 paths): issued, listed and managed by the signed-in owner (a session or
 * a signed request). The raw key is in the issue answer only.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { MAX_ALLOWED_MODELS } from "../../domain/accounts/formats.ts"
import { CfId, KeyId } from "../../domain/accounts/ids.ts"
import { PositiveWei, WeiDigits } from "../../domain/accounts/ledger.ts"
import { Conflict, NotFound, OrgRoleRequired, ValidationFailed } from "../../domain/errors.ts"
import { errorsWire } from "../http/errorEnvelope.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { reportAllIssues, withoutNul } from "./shared.ts"

const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant", jsonSchema: { type: "string", format: "date-time" } })

export const ApiKeyView = Schema.Struct({
  id: KeyId,
  prefix: Schema.String.annotations({ description: "The key's first characters, to recognize it in the list" }),
  label: Schema.NullOr(Schema.String),
  holderCfId: Schema.NullOr(CfId).annotations({
    description: "The member the key's spending counts for (their spending pool applies); its issuer unless issued for another member"
  }),
  status: Schema.Literal("active", "frozen", "revoked"),
  frozenBy: Schema.NullOr(Schema.Literal("owner", "admin")),
  dailyLimitWei: Schema.NullOr(WeiDigits),
  monthlyLimitWei: Schema.NullOr(WeiDigits),
  allowedModels: Schema.Array(Schema.String).annotations({ description: "`<vendor>/<model>` keys; empty: any model" }),
  createdAt: Timestamp,
  frozenAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "ApiKey" })

export const IssuedApiKey = Schema.Struct({
  key: ApiKeyView,
  secret: Schema.String.annotations({ description: "The raw key `ct_live_...`: shown this once, never again" })
}).annotations({ identifier: "IssuedApiKey" })

const ApiKeyList = Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(ApiKeyView) }).annotations({ identifier: "ApiKeyList" })

const Label = Schema.String.pipe(withoutNul, Schema.maxLength(100))
const AllowedModels = Schema.Array(Schema.String.pipe(withoutNul, Schema.minLength(1), Schema.maxLength(200))).pipe(
  // Duplicate spellings collapse before the limit applies; this only bounds what is read.
  Schema.maxItems(MAX_ALLOWED_MODELS * 4)
)

/** Every field optional (SPEC: issuance never requires anything). */
export const NewApiKey = reportAllIssues(
  Schema.Struct({
    holderCfId: Schema.optional(
      Schema.String.pipe(Schema.pattern(/^cf_[a-z2-7]{12}$/)).annotations({
        description: "In an organization: the member the key is for (default: you). Its spending counts for them; it is revoked when they leave"
      })
    ),
    label: Schema.optional(Label),
    dailyLimitWei: Schema.optional(PositiveWei),
    monthlyLimitWei: Schema.optional(PositiveWei),
    allowedModels: Schema.optional(AllowedModels)
  })
)

/** Editable: label and caps (null clears), and the allowed models. */
export const ApiKeyChanges = reportAllIssues(
  Schema.Struct({
    label: Schema.optional(Schema.NullOr(Label)),
    dailyLimitWei: Schema.optional(Schema.NullOr(PositiveWei)),
    monthlyLimitWei: Schema.optional(Schema.NullOr(PositiveWei)),
    allowedModels: Schema.optional(AllowedModels)
  })
)

const keyId = HttpApiSchema.param("id", KeyId)

/**
 * What a change to one existing key answers besides the group's errors: no such key here (404), a revoked one (409),
 * a role too low in the organization (403), a malformed id or body (422). Issuing and listing name no key.
 */
const OneKeyErrors = errorsWire(NotFound, Conflict, OrgRoleRequired, ValidationFailed)

const action = <const Name extends string>(name: Name, verb: string, summary: string) =>
  HttpApiEndpoint.post(name, `/v1/keys/:id/${verb}`)
    .setPath(reportAllIssues(Schema.Struct({ id: KeyId })))
    .addSuccess(ApiKeyView)
    .addError(OneKeyErrors)
    .annotate(OpenApi.Summary, summary)

export class KeysGroup extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("issueKey", "/v1/keys")
      .setPayload(NewApiKey)
      .addSuccess(IssuedApiKey, { status: 201 })
      .addError(errorsWire(OrgRoleRequired, ValidationFailed))
      .annotate(OpenApi.Summary, "Issue an API key (the raw key is returned this once)")
  )
  .add(HttpApiEndpoint.get("listKeys", "/v1/keys").addSuccess(ApiKeyList).annotate(OpenApi.Summary, "Every key of the account, revoked ones included"))
  .add(
    HttpApiEndpoint.patch("updateKey")`/v1/keys/${keyId}`
      .setPayload(ApiKeyChanges)
      .addSuccess(ApiKeyView)
      .addError(OneKeyErrors)
      .annotate(OpenApi.Summary, "Edit a key's label, caps or allowed models (not a revoked key: 409)")
  )
  .add(action("freezeKey", "freeze", "Freeze a key: refused from its next request"))
  .add(action("reactivateKey", "reactivate", "Lift the owner's freeze (a freeze by an administrator: 403, contact support)"))
  .add(action("revokeKey", "revoke", "Revoke a key for good; it stays listed"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "API keys") {}
