/**
 * Spending pools of an organization (DESIGN.md section 11, "pools under /v1/orgs/{id}/pools (CRUD, members)"; SPEC.md
 * "Organization rules"): every member sees them, Owners and Admins create, edit and delete them and manage who is in
 * them. A session or a signed request (SessionAuth).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { MAX_POOL_NAME_LENGTH } from "../../domain/accounts/formats.ts"
import { CfId, PoolId } from "../../domain/accounts/ids.ts"
import { PositiveWei, WeiDigits } from "../../domain/accounts/ledger.ts"
import { Conflict, NotFound, OrgRoleRequired, ValidationFailed } from "../../domain/errors.ts"
import { errorWire, errorsWire } from "../http/errorEnvelope.ts"
import { memberParam, orgParam, Timestamp } from "./OrgsApi.ts"
import { SessionAuth } from "./SessionAuth.ts"
import { reportAllIssues, withoutNul } from "./shared.ts"

const poolParam = HttpApiSchema.param("poolId", PoolId)

const Caps = Schema.Struct({
  dailyWei: Schema.NullOr(WeiDigits),
  weeklyWei: Schema.NullOr(WeiDigits),
  monthlyWei: Schema.NullOr(WeiDigits)
}).annotations({ description: "The pool's caps per UTC day, week (from Monday) and month; null when not set" })

export const PoolView = Schema.Struct({
  id: PoolId,
  name: Schema.String,
  caps: Caps,
  used: Schema.Struct({ dailyWei: WeiDigits, weeklyWei: WeiDigits, monthlyWei: WeiDigits }).annotations({
    description: "What the pool's members charged in each window, plus their live holds: what a reservation is checked against"
  }),
  members: Schema.Array(Schema.Struct({ cfId: CfId, displayName: Schema.String, addedAt: Timestamp })),
  createdAt: Timestamp
}).annotations({ identifier: "SpendingPool" })

const PoolName = Schema.Trim.pipe(withoutNul, Schema.minLength(1), Schema.maxLength(MAX_POOL_NAME_LENGTH))
const CapField = Schema.optional(Schema.NullOr(PositiveWei))

const NewPool = reportAllIssues(
  Schema.Struct({ name: PoolName, dailyWei: CapField, weeklyWei: CapField, monthlyWei: CapField })
).annotations({ description: "Caps are optional; a cap not given is not set" })
const PoolChange = reportAllIssues(
  Schema.Struct({ name: Schema.optional(PoolName), dailyWei: CapField, weeklyWei: CapField, monthlyWei: CapField })
).annotations({ description: "A field not given keeps its value; a cap given as null is removed" })

/**
 * A change to a pool answers, besides the group's errors, a role too low (403) and a state that refuses it (409);
 * deleting a pool and removing a member answer only the former, reading pools neither.
 */
const PoolChangeErrors = errorsWire(OrgRoleRequired, Conflict)

export class PoolsGroup extends HttpApiGroup.make("pools")
  .add(
    HttpApiEndpoint.post("createPool")`/v1/orgs/${orgParam}/pools`
      .setPayload(NewPool)
      .addSuccess(PoolView, { status: 201 })
      .addError(PoolChangeErrors)
      .annotate(OpenApi.Summary, "Create a spending pool with optional daily, weekly and monthly caps (Owners and Admins)")
  )
  .add(
    HttpApiEndpoint.get("listPools")`/v1/orgs/${orgParam}/pools`
      .addSuccess(Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(PoolView) }))
      .annotate(OpenApi.Summary, "The organization's spending pools with their caps, use and members")
  )
  .add(
    HttpApiEndpoint.get("getPool")`/v1/orgs/${orgParam}/pools/${poolParam}`
      .addSuccess(PoolView)
      .annotate(OpenApi.Summary, "One spending pool")
  )
  .add(
    HttpApiEndpoint.patch("updatePool")`/v1/orgs/${orgParam}/pools/${poolParam}`
      .setPayload(PoolChange)
      .addSuccess(PoolView)
      .addError(PoolChangeErrors)
      .annotate(OpenApi.Summary, "Rename a spending pool or change its caps (Owners and Admins); caps bind from the next request")
  )
  .add(
    HttpApiEndpoint.del("deletePool")`/v1/orgs/${orgParam}/pools/${poolParam}`
      .addSuccess(Schema.Struct({ deleted: PoolId }))
      .addError(errorWire(OrgRoleRequired))
      .annotate(OpenApi.Summary, "Delete a spending pool (Owners and Admins); its members then count against no pool")
  )
  .add(
    HttpApiEndpoint.put("addPoolMember")`/v1/orgs/${orgParam}/pools/${poolParam}/members/${memberParam}`
      .addSuccess(PoolView)
      .addError(PoolChangeErrors)
      .annotate(OpenApi.Summary, "Put a member in the pool (Owners and Admins); a member is in at most one pool")
  )
  .add(
    HttpApiEndpoint.del("removePoolMember")`/v1/orgs/${orgParam}/pools/${poolParam}/members/${memberParam}`
      .addSuccess(PoolView)
      .addError(errorWire(OrgRoleRequired))
      .annotate(OpenApi.Summary, "Take a member out of the pool (Owners and Admins)")
  )
  // Every pool operation names an organization (and most a pool or a member): each may be unknown or malformed.
  .addError(errorsWire(NotFound, ValidationFailed))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Spending pools") {}
