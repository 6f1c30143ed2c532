/**
 * The public oracle endpoints: decode, call OracleReads, encode. Every answer comes from the in-memory snapshot;
 * the hot reads (src/http/hotReads.ts) are its pre-serialized bodies, served exactly as the fast path serves them.
 * A read of one model's pricing (the model, its price-at and its price history) sent with a session cookie is also
 * handed to Points as an oracle interaction; those routes are never hot reads, so the fast path does not see them.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { historyCsv, priceHistoryCsv } from "../../domain/oracle/render.ts"
import * as S from "../../domain/oracle/schemas.ts"
import { Points } from "../../services/accounts/Points.ts"
import { SESSION_COOKIE } from "../../services/accounts/Sessions.ts"
import { ContractMetadata } from "../../services/oracle/ContractMetadata.ts"
import { OracleReads } from "../../services/oracle/OracleReads.ts"
import type { BodyName } from "../../services/oracle/OracleSnapshot.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { cacheHeaders, hotReadOf, wantsCsv } from "../http/hotReads.ts"

const utf8 = new TextEncoder()

const json = (body: Uint8Array, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.uint8Array(body, { contentType: "application/json", headers })

/** A value encoded through its wire schema: the compiler checks the value is what the schema accepts. */
const encoded = <A, I>(schema: Schema.Schema<A, I>, value: A, headers: Readonly<Record<string, string>> = {}) =>
  json(utf8.encode(JSON.stringify(Schema.encodeSync(schema)(value))), headers)

const csv = (text: string) => HttpServerResponse.text(text, { contentType: "text/csv; charset=utf-8" })

const noContent = HttpServerResponse.empty({ status: 204 })

export const OracleHandlers = HttpApiBuilder.group(ServerApi, "oracle", (handlers) =>
  Effect.gen(function* () {
    const reads = yield* OracleReads
    const contract = yield* ContractMetadata

    /** A pre-serialized body with its table headers, or 204 while there is none. */
    const body = (name: BodyName, headers: Readonly<Record<string, string>> = {}) =>
      Effect.map(reads.body(name), (bytes) => (bytes === undefined ? noContent : json(bytes, headers)))

    /** The handler of an endpoint that is one hot read: its body with the table's headers. */
    const served = (target: string) => {
      const read = hotReadOf(target)
      if (read === undefined) throw new Error(`${target} is not in the hot-read table`)
      return () => body(read.body, read.headers)
    }

    /** The request, when it names a hot read exactly and wants JSON: what the fast path would have answered. */
    const hotRequest = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      wantsCsv(request.headers["accept"]) ? undefined : hotReadOf(request.url)
    )
    const acceptsCsv = Effect.map(HttpServerRequest.HttpServerRequest, (request) => wantsCsv(request.headers["accept"]))

    const points = yield* Points
    /** A model's pricing was read: an oracle interaction when a session cookie came with it (anonymous reads: nothing). */
    const viewed = (modelKey: string) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const token = request.headers["cookie"] === undefined ? undefined : request.cookies[SESSION_COOKIE]
        return token === undefined ? Effect.void : points.recordModelView(token, modelKey)
      })

    return handlers
      .handle("scu", served("/v1/oracle/scu"))
      .handle("basket", served("/v1/oracle/basket"))
      .handle("latest", served("/v1/oracle/latest"))
      .handle("baseline", served("/v1/oracle/baseline"))
      .handle("models", served("/v1/oracle/models"))
      .handle("catalog", served("/v1/oracle/catalog"))
      .handle("pricing", served("/v1/oracle/pricing"))
      .handle("reconstitutions", served("/v1/oracle/reconstitutions"))
      .handle("stats", served("/v1/oracle/stats"))
      .handle("methodology", served("/v1/oracle/methodology"))
      .handle("reconstitutionsExport", () =>
        Effect.map(reads.body("reconstitutionsMarkdown"), (bytes) =>
          HttpServerResponse.uint8Array(bytes ?? new Uint8Array(), {
            contentType: "text/markdown; charset=utf-8",
            headers: { "content-disposition": 'attachment; filename="scu-reconstitutions.md"' }
          })
        )
      )
      .handle("history", ({ urlParams }) =>
        Effect.gen(function* () {
          const hot = yield* hotRequest
          if (hot !== undefined) return yield* body(hot.body, hot.headers)
          const view = yield* reads.history(urlParams)
          return (yield* acceptsCsv) ? csv(historyCsv(view)) : encoded(S.HistoryResponse, view)
        })
      )
      .handle("scuAt", ({ urlParams }) =>
        Effect.map(reads.scuAt(urlParams.date), (view) => (view === undefined ? noContent : encoded(S.ScuAtResponse, view)))
      )
      .handle("model", ({ path }) =>
        reads.model(path.key).pipe(
          Effect.tap((entry) => viewed(entry.id)),
          Effect.map((entry) => encoded(S.ModelEntry, entry))
        )
      )
      .handle("priceAt", ({ path, urlParams }) =>
        reads.priceAt(path.key, urlParams.date).pipe(
          Effect.tap((view) => viewed(view.modelKey)),
          Effect.map((view) => encoded(S.PriceAtResponse, view, cacheHeaders("/v1/oracle/models/{key}/price-at")))
        )
      )
      .handle("priceHistory", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const view = yield* reads.priceHistory(path.key, urlParams)
          yield* viewed(view.modelKey)
          return (yield* acceptsCsv) ? csv(priceHistoryCsv(view)) : encoded(S.PriceHistoryResponse, view)
        })
      )
      .handle("resolveOne", ({ path }) => Effect.map(reads.resolveOne(path.key), (result) => encoded(S.ResolveResult, result)))
      .handle("resolveMany", ({ urlParams }) => Effect.map(reads.resolveMany(urlParams.keys), (batch) => encoded(S.ResolveBatch, batch)))
      .handle("revision", ({ path }) => Effect.map(reads.revision(path.revision), (view) => encoded(S.RevisionResponse, view)))
      .handle("manifest", ({ path }) =>
        Effect.map(reads.manifest(path.metadataHash), (text) =>
          json(utf8.encode(text), cacheHeaders("/v1/oracle/manifest/{metadataHash}"))
        )
      )
      .handle("health", () => Effect.map(reads.health, (view) => encoded(S.HealthResponse, view)))
      .handle("contractMetadata", () =>
        Effect.map(contract.current, (view) => encoded(S.ContractMetadata, view, cacheHeaders("/v1/oracle/contract-metadata")))
      )
      .handle("activity", ({ urlParams }) => Effect.map(reads.activity(urlParams), (page) => encoded(S.ActivityPage, page)))
      .handle("methodologyVersion", ({ path }) =>
        Effect.map(reads.methodologyVersion(path.version), (record) => encoded(S.MethodologyEntry, record))
      )
  })
)
