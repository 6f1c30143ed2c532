/**
 * Maintainer operations on revisions (SPEC "Authentication" 8) and on accounts (granting credits): not part of the public interface, not in either
 * published document, and refused without the maintainer token (MAINTAINER_TOKEN) as a Bearer credential.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, ContractError, NotFound, Unauthorized, ValidationFailed } from "../../domain/errors.ts"
import { errorWire, errorsWire } from "../http/errorEnvelope.ts"
import { PositiveWei, WeiDigits } from "../../domain/accounts/ledger.ts"
import { AlwaysPossibleErrors, reportAllIssues } from "./shared.ts"

export class MaintainerAuth extends HttpApiMiddleware.Tag<MaintainerAuth>()("MaintainerAuth", {
  failure: errorWire(Unauthorized),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const AdminRevision = Schema.Struct({
  revisionVersion: Schema.Number,
  status: Schema.Literal("PENDING", "BROADCAST", "CONFIRMED", "DISCARDED"),
  methodologyVersion: Schema.Number,
  scuUsd18: Schema.String,
  contentHash: Schema.String,
  metadataHash: Schema.String,
  summary: Schema.String,
  requiresApproval: Schema.Boolean,
  txHash: Schema.NullOr(Schema.String),
  publishedAt: Schema.NullOr(Schema.String),
  confirmedAt: Schema.NullOr(Schema.String),
  failureReason: Schema.NullOr(Schema.String),
  failureMessage: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AdminRevision" })

const PublishResult = Schema.Struct({ revision: Schema.NullOr(AdminRevision) })

const ScanResult = Schema.Struct({
  scanId: Schema.String,
  outcome: Schema.String,
  catalogChanges: Schema.Number,
  basketChanges: Schema.Array(Schema.Struct({ type: Schema.String, family: Schema.String, modelKey: Schema.String, description: Schema.String }))
})

/** The answer to a grant: what was credited, to whom, and the balance after it. */
export const CreditGrant = Schema.Struct({
  cfId: Schema.String,
  accountId: Schema.String,
  entryId: Schema.String,
  amountWei: WeiDigits,
  balanceWei: WeiDigits,
  note: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "CreditGrant" })

const CreditGrantRequest = reportAllIssues(
  Schema.Struct({
    amountWei: PositiveWei,
    note: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)))
  })
)

/** A CF ID names its personal account; an organization's id names the organization's. */
const cfIdParam = HttpApiSchema.param(
  "cfId",
  Schema.String.pipe(
    Schema.pattern(/^(cf|org)_[a-z2-7]{12}$/, {
      message: () => "expected a CF ID (cf_ and 12 characters a-z, 2-7) or an organization's id (org_ and 12 of the same)"
    })
  )
)

const revisionParam = HttpApiSchema.param("revision", Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))

// Publish, approve, discard, refork and scan hold the job lock the schedule uses: while that job is running (here
// or on another replica) they answer 409 conflict, to be retried, rather than race it.
/** The operator's `auto` preference list (DESIGN.md section 11, operator row). */
export const AutoRoutingList = Schema.Struct({
  models: Schema.Array(Schema.String).annotations({ description: "Catalog model keys in the order auto prefers them; empty: the engine chooses" }),
  updatedAt: Schema.NullOr(Schema.String).annotations({ description: "ISO-8601 instant the list was last set; null when empty" })
}).annotations({ identifier: "AutoRoutingList" })

export const AutoRoutingListRequest = Schema.Struct({
  models: Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).pipe(Schema.maxItems(64))
}).annotations({ identifier: "AutoRoutingListRequest" })

/** A command of the operator command line (src/operator/commandLine.ts), as its words: `["accounts", "grant", ...]`. */
export const OperatorCommandRequest = reportAllIssues(
  Schema.Struct({
    args: Schema.Array(Schema.String.pipe(Schema.maxLength(1000))).pipe(Schema.minItems(1), Schema.maxItems(100))
  })
).annotations({ identifier: "OperatorCommandRequest" })


/** Publishing or re-forking a revision on the chain: the call reverted or went unconfirmed (500), the same job already running here or on another replica (409). */
const RevisionWriteErrors = errorsWire(ContractError, Conflict)

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(HttpApiEndpoint.get("revisions", "/v1/admin/revisions").addSuccess(Schema.Struct({ revisions: Schema.Array(AdminRevision) })))
  .add(
    HttpApiEndpoint.post("publish", "/v1/admin/revisions/publish")
      .addSuccess(PublishResult)
      .addError(RevisionWriteErrors)
  )
  .add(
    HttpApiEndpoint.post("approve")`/v1/admin/revisions/${revisionParam}/approve`
      .addSuccess(AdminRevision)
      .addError(errorsWire(NotFound, ContractError, ValidationFailed, Conflict))
  )
  .add(
    HttpApiEndpoint.post("discard")`/v1/admin/revisions/${revisionParam}/discard`
      .addSuccess(AdminRevision)
      .addError(errorsWire(NotFound, ValidationFailed, Conflict))
  )
  .add(
    HttpApiEndpoint.post("refork", "/v1/admin/revisions/refork")
      .addSuccess(PublishResult)
      .addError(RevisionWriteErrors)
  )
  .add(HttpApiEndpoint.post("scan", "/v1/admin/scan").addSuccess(ScanResult).addError(errorWire(Conflict)))
  .add(
    HttpApiEndpoint.post("grantCredits")`/v1/admin/accounts/${cfIdParam}/credits`
      .setPayload(CreditGrantRequest)
      .addSuccess(CreditGrant)
      .addError(errorsWire(NotFound, ValidationFailed))
  )
  .add(
    HttpApiEndpoint.post("freezeKey", "/v1/admin/keys/:id/freeze")
      .setPath(Schema.Struct({ id: Schema.String.pipe(Schema.pattern(/^key_[0-9a-f]{16}$/)) }))
      .addSuccess(Schema.Struct({ id: Schema.String, status: Schema.Literal("active", "frozen", "revoked"), frozenBy: Schema.NullOr(Schema.String) }))
      .addError(errorsWire(NotFound, Conflict, ValidationFailed))
  )
  .add(HttpApiEndpoint.get("autoRoutingList", "/v1/admin/routing/auto").addSuccess(AutoRoutingList))
  .add(
    HttpApiEndpoint.put("setAutoRoutingList", "/v1/admin/routing/auto")
      .setPayload(AutoRoutingListRequest)
      .addSuccess(AutoRoutingList)
      .addError(errorWire(ValidationFailed))
  )
  .add(
    HttpApiEndpoint.post("command", "/v1/admin/commands")
      .setPayload(OperatorCommandRequest)
      .addSuccess(
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-ndjson" })).annotations({
          description: "Newline-delimited OperatorCommandEvent objects, streamed while the command runs: each line it prints, then {exit, error?}"
        })
      )
      .addError(errorWire(ValidationFailed))
  )
  .middleware(MaintainerAuth) {}

export class AdminApi extends HttpApi.make("admin")
  .add(AdminGroup)
  .addError(AlwaysPossibleErrors[0])
  .addError(AlwaysPossibleErrors[1])
  .annotate(OpenApi.Title, "Compute Exchange maintainer API (private)") {}

