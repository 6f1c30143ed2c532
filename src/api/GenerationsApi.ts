/**
 * The account's request log and activity (DESIGN section 11 account paths; docs/decisions.md "Console: logs and
 * activity"): the stored bills listed newest first with server-side filters, one bill in full (and, for a
 * `/v1/responses` request, the response it stored with its input items), and spend and tokens per UTC day split by
 * model, key or member. Readable with an API key or app grant (its account) or by a session or a
 * signed request (the active context's account), so the console and a script read the same routes.
 * Browser-safe: the console's client is built from this module.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { RequestId } from "../../domain/accounts/ids.ts"
import { WeiDigits } from "../../domain/accounts/ledger.ts"
import { NotFound, ValidationFailed } from "../../domain/errors.ts"
import { ACTIVITY_MAX_DAYS, LOG_PAGE_DEFAULT, LOG_PAGE_MAX } from "../../domain/exchange/logs.ts"
import { ResponseObject, StoredInputItem } from "../../domain/exchange/wire/openaiResponsesReply.ts"
import { CurrentReader } from "../../services/accounts/CurrentIdentity.ts"
import { errorWire } from "../http/errorEnvelope.ts"
import { credentialBearer, CredentialFailure } from "./ApiKeyAuth.ts"
import { sessionCookie, SessionAuthFailure } from "./SessionAuth.ts"
import { reportAllIssues } from "./shared.ts"


/**
 * A bearer credential (API key or app grant: reading needs only `account:read`, which every grant holds) or a
 * session (cookie or signed request). A bearer token is judged as such; without one, the session decides.
 */
export class AccountReadAuth extends HttpApiMiddleware.Tag<AccountReadAuth>()("AccountReadAuth", {
  provides: CurrentReader,
  failure: Schema.Union(CredentialFailure, SessionAuthFailure),
  security: { bearer: credentialBearer, session: sessionCookie }
}) {}

const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant (UTC)", jsonSchema: { type: "string", format: "date-time" } })

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/
const Instant = Schema.String.pipe(
  Schema.pattern(ISO_INSTANT, { message: () => "expected an ISO-8601 date or instant with its offset, e.g. 2026-11-25 or 2026-11-25T10:00:00Z" }),
  Schema.compose(Schema.DateFromString),
  Schema.validDate({ message: () => "not a valid date" })
).annotations({ jsonSchema: { type: "string", format: "date-time" } })

const Leg = Schema.Struct({
  kind: Schema.String,
  tokens: Schema.Int,
  rateUsd18PerMillion: Schema.String.annotations({ description: "USD per million tokens, scaled by 10^18" }),
  provenance: Schema.String,
  pricedAs: Schema.String.annotations({ description: "The price component whose rate was used (a cache kind a model does not price is billed at input)" })
})

const UsageView = Schema.Struct({
  freshInput: Schema.NullOr(Schema.Int),
  cacheRead: Schema.NullOr(Schema.Int),
  cacheWrite5m: Schema.NullOr(Schema.Int),
  cacheWrite1h: Schema.NullOr(Schema.Int),
  output: Schema.NullOr(Schema.Int),
  reasoning: Schema.NullOr(Schema.Int),
  source: Schema.Literal("vendor", "partly_estimated")
}).annotations({ description: "Tokens per disjoint bucket (output includes reasoning); null: not reported" })

export const GenerationView = Schema.Struct({
  id: RequestId,
  object: Schema.Literal("generation"),
  createdAt: Schema.String,
  settledAt: Schema.String,
  status: Schema.Literal("completed", "interrupted"),
  stream: Schema.Boolean,
  format: Schema.Literal("chat", "messages", "responses", "embeddings"),
  modelRequested: Schema.String,
  modelUsed: Schema.String,
  provider: Schema.String,
  chooser: Schema.NullOr(Schema.String),
  usage: UsageView,
  bill: Schema.Struct({
    legs: Schema.Array(Leg),
    tierFromInputTokens: Schema.NullOr(Schema.Int),
    subtotalUsd18: Schema.String,
    markup: Schema.Struct({ numerator: Schema.Int, denominator: Schema.Int }),
    pegUsd18: Schema.String,
    priceEffectiveFrom: Schema.String,
    priceObservedAt: Schema.String,
    revision: Schema.NullOr(Schema.Struct({ revisionVersion: Schema.Int, metadataHash: Schema.String })),
    chargeWei: Schema.String,
    holdWei: Schema.String
  }),
  attempts: Schema.Array(
    Schema.Struct({
      model: Schema.String,
      provider: Schema.String,
      key: Schema.NullOr(Schema.String),
      outcome: Schema.String,
      status: Schema.NullOr(Schema.Int),
      message: Schema.NullOr(Schema.String),
      ms: Schema.Int
    })
  )
}).annotations({ identifier: "Generation" })

export const GenerationSummary = Schema.Struct({
  id: RequestId.annotations({ description: "The request id (X-Request-Id); `GET /v1/generations/{id}` has its whole bill" }),
  createdAt: Timestamp,
  status: Schema.Literal("completed", "interrupted"),
  stream: Schema.Boolean,
  format: Schema.Literal("chat", "messages", "responses", "embeddings"),
  modelRequested: Schema.String,
  modelUsed: Schema.String,
  fallback: Schema.Boolean.annotations({ description: "Served by another model than the first one asked for" }),
  provider: Schema.String,
  keyId: Schema.NullOr(Schema.String).annotations({ description: "The API key (`key_...`) or app grant (`app_...`) it was sent with" }),
  usage: UsageView,
  chargeWei: WeiDigits
}).annotations({ identifier: "GenerationSummary" })

export const GenerationPage = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(GenerationSummary),
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next (older) page; null on the last" })
}).annotations({ identifier: "GenerationPage" })

export const GenerationResponse = Schema.Struct({
  response: ResponseObject.annotations({ description: "The stored Response object, as `GET /v1/responses/{id}` answers it" }),
  inputItems: Schema.Array(StoredInputItem).annotations({
    description: "Every input item of the request, in request order, each with its id (as `GET /v1/responses/{id}/input_items` lists them)"
  })
}).annotations({ identifier: "GenerationResponse" })

const PAGE_DESCRIPTION = `Page size, 1-${LOG_PAGE_MAX} (default ${LOG_PAGE_DEFAULT})`

export const GenerationsQuery = reportAllIssues(
  Schema.Struct({
    limit: Schema.optional(
      Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, LOG_PAGE_MAX)).annotations({
        description: PAGE_DESCRIPTION,
        jsonSchema: { type: "integer", minimum: 1, maximum: LOG_PAGE_MAX, description: PAGE_DESCRIPTION }
      })
    ),
    cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(200))).annotations({ description: "`nextCursor` of the previous page (opaque)" }),
    model: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).annotations({
      description: "Only requests that asked for or were served by this model key (`<vendor>/<model>`)"
    }),
    key: Schema.optional(
      Schema.String.pipe(Schema.pattern(/^(key|app)_[0-9a-f]{16}$/, { message: () => "expected an API key id (key_...) or app grant id (app_...)" }))
    ).annotations({ description: "Only requests sent with this API key or app grant id" }),
    status: Schema.optional(Schema.Literal("completed", "interrupted")).annotations({
      description: "completed, or interrupted (the stream failed after its first byte; billed for what was produced)"
    }),
    from: Schema.optional(Instant).annotations({ description: "Only requests at or after this instant" }),
    to: Schema.optional(Instant).annotations({ description: "Only requests before this instant" })
  })
)

export class GenerationsGroup extends HttpApiGroup.make("generations")
  .add(
    HttpApiEndpoint.get("listGenerations", "/v1/generations")
      .setUrlParams(GenerationsQuery)
      .addSuccess(GenerationPage)
      .annotate(OpenApi.Summary, "The account's requests, newest first, filtered on the server; paged by an opaque cursor")
  )
  .add(
    HttpApiEndpoint.get("generation", "/v1/generations/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(GenerationView)
      .addError(errorWire(NotFound))
      .annotate(OpenApi.Summary, "The stored bill of one request (id = its X-Request-Id): counts, rates, provenance, tier, markup, peg, revision, attempts")
  )
  .add(
    HttpApiEndpoint.get("generationResponse", "/v1/generations/:id/response")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(GenerationResponse)
      .addError(errorWire(NotFound))
      .annotate(OpenApi.Summary, "The stored response of a /v1/responses request (id = its X-Request-Id) with the request's input items")
      .annotate(
        OpenApi.Description,
        "404 when the request kept none: not a /v1/responses request, sent with `store: false`, deleted, or past its 30 days."
      )
  )
  // Both reads take parameters the server validates.
  .addError(errorWire(ValidationFailed))
  .middleware(AccountReadAuth)
  .annotate(OpenApi.Title, "Generations")
  .annotate(OpenApi.Description, "Readable with an API key or app grant of the account, or signed in (the active context's account).") {}

export const ActivitySplit = Schema.Literal("model", "key", "member")

const DAYS_DESCRIPTION = `Whole UTC days ending today, 1-${ACTIVITY_MAX_DAYS} (default 30); not with from/to`

export const ActivityQuery = reportAllIssues(
  Schema.Struct({
    by: Schema.optional(ActivitySplit).annotations({
      description: "Split by the model that served, the key (or app grant) sent with, or the member the key belongs to (default model)"
    }),
    days: Schema.optional(
      Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, ACTIVITY_MAX_DAYS)).annotations({
        description: DAYS_DESCRIPTION,
        jsonSchema: { type: "integer", minimum: 1, maximum: ACTIVITY_MAX_DAYS, description: DAYS_DESCRIPTION }
      })
    ),
    from: Schema.optional(Instant).annotations({ description: "Window start (inclusive)" }),
    to: Schema.optional(Instant).annotations({ description: `Window end (exclusive, default now); at most ${ACTIVITY_MAX_DAYS} days after from` })
  })
)

const figures = {
  requests: Schema.Int,
  chargeWei: WeiDigits.annotations({ description: "Charged, exact" }),
  inputTokens: Schema.Int.annotations({ description: "Fresh input tokens" }),
  outputTokens: Schema.Int.annotations({ description: "Output tokens, reasoning included" }),
  cacheReadTokens: Schema.Int,
  cacheWriteTokens: Schema.Int.annotations({ description: "Cache writes, both lifetimes" }),
  reasoningTokens: Schema.Int
}

const Group = Schema.NullOr(Schema.String).annotations({
  description: "The model key, the key or grant id, or the member's CF ID; null for requests sent with no credential of this account"
})

export const ActivityView = Schema.Struct({
  object: Schema.Literal("activity"),
  by: ActivitySplit,
  from: Timestamp,
  to: Timestamp,
  days: Schema.Array(Schema.Struct({ day: Schema.String, ...figures })).annotations({
    description: "Every UTC day of the window (YYYY-MM-DD), oldest first, with its totals (zero on a day without requests)"
  }),
  groups: Schema.Array(Schema.Struct({ group: Group, label: Schema.NullOr(Schema.String), ...figures })).annotations({
    description: "Totals of each group over the window, biggest spend first; label: the key's label or app name, or the member's display name"
  }),
  series: Schema.Array(Schema.Struct({ day: Schema.String, group: Group, ...figures })).annotations({
    description: "Each (UTC day, group) with requests, in day order"
  })
}).annotations({ identifier: "Activity" })

export class ActivityGroup extends HttpApiGroup.make("activity")
  .add(
    HttpApiEndpoint.get("activity", "/v1/account/activity")
      .setUrlParams(ActivityQuery)
      .addSuccess(ActivityView)
      .addError(errorWire(ValidationFailed))
      .annotate(OpenApi.Summary, "Spend and tokens per UTC day over a window, split by model, key or member")
  )
  .middleware(AccountReadAuth)
  .annotate(OpenApi.Title, "Activity") {}
