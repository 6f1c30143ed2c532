/**
 * The public price-index oracle (SPEC "Oracle endpoints"): free, unauthenticated, read-only, under /v1/oracle.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound, RateLimited, ValidationFailed } from "../../domain/errors.ts"
import { errorWire } from "../http/errorEnvelope.ts"
import * as S from "../../domain/oracle/schemas.ts"
import { reportAllIssues } from "./shared.ts"

const NoConfirmedRevision = HttpApiSchema.Empty(204).annotations({ description: "No revision has been confirmed yet" })

const Csv = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })).annotations({
  description: "RFC 4180 CSV with a header row; sent when the request has `Accept: text/csv`"
})

const Markdown = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/markdown" })).annotations({
  description: "The whole reconstitution log as a Markdown attachment"
})

const IsoInstant = Schema.String.annotations({ description: "ISO-8601 date (YYYY-MM-DD) or instant with offset" })

const HistoryQuery = reportAllIssues(
  Schema.Struct({
    from: Schema.optional(IsoInstant),
    to: Schema.optional(IsoInstant),
    granularity: Schema.optional(S.Granularity),
    limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 10_000)))
  })
)

const keyParam = HttpApiSchema.param(
  "key",
  Schema.String.annotations({ description: "`<vendor>/<model>` (separator as %2F) or the bare model name; case-insensitive" })
)
const revisionParam = HttpApiSchema.param("revision", Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))
const hashParam = HttpApiSchema.param("metadataHash", Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{64}$/)))
const versionParam = HttpApiSchema.param("version", Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))

const rateLimited = errorWire(RateLimited)
const get = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.get(name, path).addError(rateLimited).annotate(OpenApi.Summary, summary)

export class OracleGroup extends HttpApiGroup.make("oracle")
  .add(get("scu", "/v1/oracle/scu", "The SCU now, with its family representatives").addSuccess(S.ScuResponse).addSuccess(NoConfirmedRevision))
  .add(get("models", "/v1/oracle/models", "Basket members and retired ex-members").addSuccess(S.ModelsResponse))
  .add(
    HttpApiEndpoint.get("model")`/v1/oracle/models/${keyParam}`
      .addSuccess(S.ModelEntry)
      .addError(errorWire(NotFound))
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "One basket member or retired ex-member")
  )
  .add(
    HttpApiEndpoint.get("priceHistory")`/v1/oracle/models/${keyParam}/price-history`
      .setUrlParams(HistoryQuery)
      .addSuccess(S.PriceHistoryResponse)
      .addSuccess(Csv)
      .addError(errorWire(NotFound))
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "A model's price over time, each point from the manifest or the catalog")
  )
  .add(
    HttpApiEndpoint.get("priceAt")`/v1/oracle/models/${keyParam}/price-at`
      .setUrlParams(reportAllIssues(Schema.Struct({ date: IsoInstant })))
      .addSuccess(S.PriceAtResponse)
      .addError(errorWire(NotFound))
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "A model's price at an instant (cached 60 s)")
  )
  .add(
    HttpApiEndpoint.get("resolveOne")`/v1/oracle/resolve/${keyParam}`
      .addSuccess(S.ResolveResult)
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "Resolve a model name to its canonical key and prices (unknown models are off-basket)")
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
      .setUrlParams(reportAllIssues(Schema.Struct({ date: Schema.String.annotations({ description: "ISO-8601 instant with offset" }) })))
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
      .addError(errorWire(NotFound))
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "One confirmed revision")
  )
  .add(get("latest", "/v1/oracle/latest", "The latest confirmed revision, summarised").addSuccess(S.LatestResponse).addSuccess(NoConfirmedRevision))
  .add(get("health", "/v1/oracle/health", "Sync state and freshness").addSuccess(S.HealthResponse))
  .add(get("contractMetadata", "/v1/oracle/contract-metadata", "The registry contract (cached 5 minutes)").addSuccess(S.ContractMetadata))
  .add(
    HttpApiEndpoint.get("manifest")`/v1/oracle/manifest/${hashParam}`
      .addSuccess(S.Manifest)
      .addError(errorWire(NotFound))
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "A confirmed revision's manifest, by its metadataHash")
  )
  .add(get("stats", "/v1/oracle/stats", "Aggregate protocol statistics").addSuccess(S.StatsResponse))
  .add(
    get("activity", "/v1/oracle/activity", "Protocol events, newest first (limit 1-100, default 20; offset 0-100000)")
      .setUrlParams(
        reportAllIssues(
          Schema.Struct({
            limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))),
            offset: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 100_000)))
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
      .addError(errorWire(NotFound))
      .addError(errorWire(ValidationFailed))
      .addError(rateLimited)
      .annotate(OpenApi.Summary, "One methodology record")
  )
  .annotate(OpenApi.Title, "Oracle")
  .annotate(
    OpenApi.Description,
    "The Standard Compute Unit price index: free and read-only. Every response except 429 carries X-Methodology-Version."
  ) {}
