/**
 * The public price-index oracle (SPEC "Oracle endpoints"): free, unauthenticated, read-only, under /v1/oracle.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound, RateLimited, ValidationFailed } from "../../domain/errors.ts"
import { errorWire, errorsWire } from "../http/errorEnvelope.ts"
import { DateOrInstantParam, InstantParam } from "../../domain/dates.ts"
import { ModelKeyParam } from "../../domain/oracle/keys.ts"
import * as S from "../../domain/oracle/schemas.ts"
import { reportAllIssues } from "./shared.ts"

const NoConfirmedRevision = HttpApiSchema.Empty(204).annotations({ description: "No revision has been confirmed yet" })

const Csv = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })).annotations({
  description: "RFC 4180 CSV with a header row; sent when the request has `Accept: text/csv`"
})

const Markdown = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/markdown" })).annotations({
  description: "The whole reconstitution log as a Markdown attachment"
})


/**
 * A whole number in a query or path. It travels as text and is decoded from it, so the generator would publish the
 * text (`string`); the override publishes what clients send, an integer with its bounds (COMPAT.md).
 */
const integerText = (
  schema: Schema.Schema<number, string>,
  bounds: { readonly minimum: number; readonly maximum?: number },
  description: string
) => schema.annotations({ description, jsonSchema: { type: "integer", ...bounds, description } })

const HistoryQuery = reportAllIssues(
  Schema.Struct({
    from: Schema.optional(DateOrInstantParam),
    to: Schema.optional(DateOrInstantParam),
    granularity: Schema.optional(S.Granularity),
    limit: Schema.optional(
      integerText(
        Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 10_000)),
        { minimum: 1, maximum: 10_000 },
        "Keep at most this many points, the newest (default 10000)"
      )
    )
  })
)

const keyParam = HttpApiSchema.param("key", ModelKeyParam)
const revisionParam = HttpApiSchema.param(
  "revision",
  integerText(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), { minimum: 1 }, "Revision version")
)
const hashParam = HttpApiSchema.param("metadataHash", Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{64}$/)))
const versionParam = HttpApiSchema.param(
  "version",
  integerText(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), { minimum: 1 }, "Methodology version")
)

/**
 * Operation ids: the ones COMPAT.md lists are what existing generated clients call; the rest follow their scheme.
 * The single methodology record sits with the other oracle reads (COMPAT.md: "the other oracle operations follow
 * `OraclePublicController_get<Thing>`"); only the changelog keeps its controller's name.
 */
export const ORACLE_OPERATION_IDS = {
  scu: "OraclePublicController_getScu",
  models: "OraclePublicController_getModels",
  model: "OraclePublicController_getModel",
  priceHistory: "OraclePublicController_getModelPriceHistory",
  priceAt: "OraclePublicController_getModelPriceAt",
  resolveOne: "OraclePublicController_getResolve",
  resolveMany: "OraclePublicController_getResolveBatch",
  catalog: "OraclePublicController_getCatalog",
  basket: "OraclePublicController_getBasket",
  baseline: "OraclePublicController_getBaseline",
  scuAt: "OraclePublicController_getScuAt",
  history: "OraclePublicController_getHistory",
  reconstitutions: "OraclePublicController_getReconstitutions",
  reconstitutionsExport: "OraclePublicController_getReconstitutionsExport",
  revision: "OraclePublicController_getRevision",
  latest: "OraclePublicController_getLatest",
  health: "OraclePublicController_getHealth",
  contractMetadata: "OraclePublicController_getContractMetadata",
  manifest: "OraclePublicController_getManifest",
  stats: "OraclePublicController_getStats",
  activity: "OraclePublicController_getActivity",
  pricing: "OraclePublicController_getPricing",
  methodology: "MethodologyPublicController_getChangelog",
  methodologyVersion: "OraclePublicController_getMethodologyVersion"
} as const
type OperationName = keyof typeof ORACLE_OPERATION_IDS

const rateLimited = errorWire(RateLimited)
/** A read of one item named in the path (a model, a revision, a manifest, a methodology version): none such (404), a malformed name (422). */
const NamedItemErrors = errorsWire(NotFound, ValidationFailed)
const get = <const Name extends OperationName>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.get(name, path)
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS[name])

export class OracleGroup extends HttpApiGroup.make("oracle")
  .add(get("scu", "/v1/oracle/scu", "The SCU now, with its family representatives").addSuccess(S.ScuResponse).addSuccess(NoConfirmedRevision))
  .add(get("models", "/v1/oracle/models", "Basket members and retired ex-members").addSuccess(S.ModelsResponse))
  .add(
    HttpApiEndpoint.get("model")`/v1/oracle/models/${keyParam}`
      .addSuccess(S.ModelEntry)
      .addError(NamedItemErrors)
      .annotate(OpenApi.Summary, "One basket member or retired ex-member")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.model)
  )
  .add(
    HttpApiEndpoint.get("priceHistory")`/v1/oracle/models/${keyParam}/price-history`
      .setUrlParams(HistoryQuery)
      .addSuccess(S.PriceHistoryResponse)
      .addSuccess(Csv)
      .addError(NamedItemErrors)
      .annotate(OpenApi.Summary, "A model's price over time, each point from the manifest or the catalog")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.priceHistory)
  )
  .add(
    HttpApiEndpoint.get("priceAt")`/v1/oracle/models/${keyParam}/price-at`
      .setUrlParams(reportAllIssues(Schema.Struct({ date: DateOrInstantParam })))
      .addSuccess(S.PriceAtResponse)
      .addError(NamedItemErrors)
      .annotate(OpenApi.Summary, "A model's price at an instant (cached 60 s)")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.priceAt)
  )
  .add(
    HttpApiEndpoint.get("resolveOne")`/v1/oracle/resolve/${keyParam}`
      .addSuccess(S.ResolveResult)
      .addError(errorWire(ValidationFailed))
      .annotate(OpenApi.Summary, "Resolve a model name to its canonical key and prices (unknown models are off-basket)")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.resolveOne)
  )
  .add(
    get("resolveMany", "/v1/oracle/resolve", "Resolve up to 100 names at once, in order, each on its own")
      .setUrlParams(reportAllIssues(Schema.Struct({ keys: Schema.String.annotations({ description: "comma-separated names" }) })))
      .addSuccess(S.ResolveBatch)
      .addError(errorWire(ValidationFailed))
  )
  .add(get("catalog", "/v1/oracle/catalog", "Every priced model, with cache, reasoning and context-tier prices").addSuccess(S.CatalogResponse))
  .add(get("basket", "/v1/oracle/basket", "The current basket").addSuccess(S.BasketResponse).addSuccess(NoConfirmedRevision))
  .add(get("baseline", "/v1/oracle/baseline", "The frozen baseline (the SCU of revision 1)").addSuccess(S.BaselineResponse).addSuccess(NoConfirmedRevision))
  .add(
    get("scuAt", "/v1/oracle/scu-at", "The SCU in force at an instant (step function)")
      .setUrlParams(reportAllIssues(Schema.Struct({ date: InstantParam })))
      .addSuccess(S.ScuAtResponse)
      .addSuccess(HttpApiSchema.Empty(204).annotations({ description: "The date precedes the genesis revision" }))
      .addError(errorWire(ValidationFailed))
  )
  .add(
    get("history", "/v1/oracle/history", "The SCU series")
      .setUrlParams(HistoryQuery)
      .addSuccess(S.HistoryResponse)
      .addSuccess(Csv)
      .addError(errorWire(ValidationFailed))
  )
  .add(get("reconstitutions", "/v1/oracle/reconstitutions", "The reconstitution log").addSuccess(S.ReconstitutionLog))
  .add(get("reconstitutionsExport", "/v1/oracle/reconstitutions/export", "The reconstitution log as Markdown").addSuccess(Markdown))
  .add(
    HttpApiEndpoint.get("revision")`/v1/oracle/revisions/${revisionParam}`
      .addSuccess(S.RevisionResponse)
      .addError(NamedItemErrors)
      .annotate(OpenApi.Summary, "One confirmed revision")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.revision)
  )
  .add(get("latest", "/v1/oracle/latest", "The latest confirmed revision, summarised").addSuccess(S.LatestResponse).addSuccess(NoConfirmedRevision))
  .add(get("health", "/v1/oracle/health", "Sync state and freshness").addSuccess(S.HealthResponse))
  .add(get("contractMetadata", "/v1/oracle/contract-metadata", "The registry contract (cached 5 minutes)").addSuccess(S.ContractMetadata))
  .add(
    HttpApiEndpoint.get("manifest")`/v1/oracle/manifest/${hashParam}`
      .addSuccess(S.Manifest)
      .addError(NamedItemErrors)
      .annotate(OpenApi.Summary, "A confirmed revision's manifest, by its metadataHash")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.manifest)
  )
  .add(get("stats", "/v1/oracle/stats", "Aggregate protocol statistics").addSuccess(S.StatsResponse))
  .add(
    get("activity", "/v1/oracle/activity", "Protocol events, newest first (limit 1-100, default 20; offset 0-100000)")
      .setUrlParams(
        reportAllIssues(
          Schema.Struct({
            limit: Schema.optional(
              integerText(
                Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)),
                { minimum: 1, maximum: 100 },
                "Page size (default 20)"
              )
            ),
            offset: Schema.optional(
              integerText(
                Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 100_000)),
                { minimum: 0, maximum: 100_000 },
                "Events to skip (default 0)"
              )
            )
          })
        )
      )
      .addSuccess(S.ActivityPage)
      .addError(errorWire(ValidationFailed))
  )
  .add(get("pricing", "/v1/oracle/pricing", "Prices as billed (5% routing markup)").addSuccess(S.PricingResponse))
  .add(get("methodology", "/v1/oracle/methodology", "Every methodology version and the active one").addSuccess(S.MethodologyChangelog))
  .add(
    HttpApiEndpoint.get("methodologyVersion")`/v1/oracle/methodology/${versionParam}`
      .addSuccess(S.MethodologyEntry)
      .addError(NamedItemErrors)
      .annotate(OpenApi.Summary, "One methodology record")
      .annotate(OpenApi.Identifier, ORACLE_OPERATION_IDS.methodologyVersion)
  )
  // Every oracle read is rate limited per client (SPEC "Limits").
  .addError(rateLimited)
  .annotate(OpenApi.Title, "Oracle")
  .annotate(
    OpenApi.Description,
    "The Standard Compute Unit price index: free and read-only. Every response except 429 carries X-Methodology-Version."
  ) {}
