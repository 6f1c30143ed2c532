/**
 * SPEC "Documentation endpoints" and "Versioning": the two OpenAPI 3.1 documents, their aliases and
 * caching, the offline interactive UIs, and the match between what is served and what is documented.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { Either, Option, ParseResult, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import * as OracleSchemas from "../domain/oracle/schemas.ts"
import { AdminApi } from "../src/api/AdminApi.ts"
import { PagesApi } from "../src/api/PagesApi.ts"
import { InferenceApi } from "../src/api/InferenceApi.ts"
import { OracleGroup } from "../src/api/OracleApi.ts"
import { PublicApi } from "../src/api/PublicApi.ts"
import { ServerApi } from "../src/api/ServerApi.ts"
import { JsonDocument } from "../src/api/shared.ts"
import { makeApiDocuments } from "../src/http/apiDocuments.ts"
import { makeRouteTable } from "../src/http/routeTable.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

let database: TestDatabase
let server: TestServer

beforeAll(async () => {
  database = await createTestDatabase()
  server = await startTestServer({ DATABASE_URL: database.url })
})

afterAll(async () => {
  await server?.close()
  await database?.close()
})

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.baseUrl}${path}`, { headers })

type Json = Record<string, any>

const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

describe("the public document", () => {
  it("is served at the canonical path and its aliases, byte-identical per format", async () => {
    const [yaml, yamlAlias, json, jsonAlias] = await Promise.all(
      ["/v1/openapi.yaml", "/openapi.yaml", "/v1/openapi.json", "/openapi.json"].map(async (path) => {
        const response = await get(path)
        expect(response.status).toBe(200)
        return { type: response.headers.get("content-type"), bytes: Buffer.from(await response.arrayBuffer()) }
      })
    )
    expect(yaml!.type).toMatch(/^text\/yaml/)
    expect(json!.type).toMatch(/^application\/json/)
    expect(yamlAlias!.bytes.equals(yaml!.bytes)).toBe(true)
    expect(jsonAlias!.bytes.equals(json!.bytes)).toBe(true)
    expect(parseYaml(yaml!.bytes.toString("utf8"))).toEqual(JSON.parse(json!.bytes.toString("utf8")))
  })

  it("is a valid OpenAPI 3.1 document reporting version 1.0", async () => {
    const document = (await (await get("/v1/openapi.json")).json()) as Json
    expect(document.openapi).toBe("3.1.0")
    expect(document.info.version).toBe("1.0")
    const validator = new Validator()
    const result = await validator.validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("shows the error envelope, never the platform's own error shapes", async () => {
    const text = await (await get("/v1/openapi.json")).text()
    expect(text).not.toContain("HttpApiDecodeError")
    const document = JSON.parse(text) as Json
    // Nothing left over from the platform's shapes: every component is referenced.
    const components = Object.keys(document.components.schemas)
    expect(components).toEqual(expect.arrayContaining(["InternalError", "ServiceUnavailable", "RateLimited", "NotFound", "ValidationFailed"]))
    for (const leftover of ["HttpApiDecodeError", "Issue", "PropertyKey"]) expect(components).not.toContain(leftover)
    expect(document.paths["/v1/status"].get.responses["503"].description).toBe(
      "service_unavailable: a required dependency is unreachable, or no model has capacity"
    )
    const internal = document.components.schemas.InternalError
    expect(internal.required).toEqual(["error"])
    expect(internal.properties.error.properties.code.enum).toEqual(["internal_error"])
    expect(Object.keys(internal.properties.error.properties).sort()).toEqual(["code", "details", "message", "param", "type"])
    for (const item of Object.values<Json>(document.paths)) {
      for (const operation of Object.values<Json>(item)) {
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["500", "503"]))
      }
    }
  })
})

describe("documented errors", () => {
  it("every operation that takes parameters or a body documents its 422 envelope", async () => {
    for (const path of ["/v1/openapi.json", "/v1/openapi.inference.json"]) {
      const document = (await (await get(path)).json()) as Json
      for (const [route, item] of Object.entries<Json>(document.paths ?? {})) {
        for (const [method, operation] of Object.entries<Json>(item)) {
          if ((operation.parameters ?? []).length === 0 && operation.requestBody === undefined) continue
          const schema = operation.responses["422"]?.content?.["application/json"]?.schema
          expect(schema?.$ref, `${method.toUpperCase()} ${route}`).toBe("#/components/schemas/ValidationFailed")
        }
      }
    }
  })
})

describe("the inference document", () => {
  it("is separate, valid OpenAPI 3.1, in YAML and JSON", async () => {
    const json = (await (await get("/v1/openapi.inference.json")).json()) as Json
    const yaml = parseYaml(await (await get("/v1/openapi.inference.yaml")).text()) as Json
    expect(yaml).toEqual(json)
    expect(json.info.title).toBe("Compute Exchange Inference API")
    const result = await new Validator().validate(json)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    const publicDocument = (await (await get("/v1/openapi.json")).json()) as Json
    expect(Object.keys(json.paths ?? {}).filter((path) => path in publicDocument.paths)).toEqual([])
  })
})

describe("served routes and documented routes", () => {
  it("documents every route the server serves, in the document of its API, and nothing else", async () => {
    const publicDocument = (await (await get("/v1/openapi.json")).json()) as Json
    const inferenceDocument = (await (await get("/v1/openapi.inference.json")).json()) as Json
    const documented = (document: Json) =>
      Object.entries<Json>(document.paths ?? {}).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)
      )
    const served = (routes: ReadonlyArray<{ method: string; path: string }>) =>
      routes.map((route) => `${route.method} ${openApiPath(route.path)}`)

    expect(documented(publicDocument).sort()).toEqual(served(makeRouteTable(PublicApi).routes).sort())
    expect(documented(inferenceDocument).sort()).toEqual(served(makeRouteTable(InferenceApi).routes).sort())
    expect(documented(inferenceDocument)).toEqual(expect.arrayContaining([
      "POST /v1/chat/completions", "POST /v1/messages", "POST /v1/messages/count_tokens", "POST /v1/responses",
      "POST /v1/responses/input_tokens", "GET /v1/responses/{id}", "DELETE /v1/responses/{id}", "GET /v1/responses/{id}/input_items"
    ]))
    // The server serves exactly the two documented APIs plus the maintainer API, which is private by design, and
    // the public web pages, which are pages, not API.
    const privateRoutes = served(makeRouteTable(AdminApi).routes)
    expect(privateRoutes.every((route) => route.includes(" /v1/admin/"))).toBe(true)
    const pageRoutes = served(makeRouteTable(PagesApi).routes)
    expect(pageRoutes.sort()).toEqual([
      "GET /",
      "GET /assets/{file}",
      "GET /console",
      "GET /console/*",
      "GET /methodology",
      "GET /models",
      "GET /models/*",
      "GET /revisions",
      "GET /revisions/*",
      "GET /robots.txt",
      "GET /sitemap.xml"
    ])
    expect(served(makeRouteTable(ServerApi).routes).sort()).toEqual(
      [...documented(publicDocument), ...documented(inferenceDocument), ...privateRoutes, ...pageRoutes].sort()
    )
    expect(JSON.stringify([publicDocument, inferenceDocument])).not.toContain("/v1/admin")
    // Every documented route is served (nothing answers 404 or 405 for its documented method).
    for (const line of [...documented(publicDocument), ...documented(inferenceDocument)]) {
      const [method, path] = line.split(" ")
      if (method !== "GET") continue
      const status = (await get(path!.replace(/\{[^}]+\}/g, "1"))).status
      expect([404, 405].includes(status) && !path!.includes("{"), `${line} answered ${status}`).toBe(false)
    }
  })
})

describe("caching and cross-origin reads", () => {
  it.each(["/v1/openapi.yaml", "/v1/openapi.json", "/openapi.json", "/v1/openapi.inference.yaml"])(
    "%s is cacheable, revalidated by a weak ETag, and readable from any origin",
    async (path) => {
      const first = await get(path, { origin: "https://dashboard.example" })
      expect(first.headers.get("cache-control")).toBe("public, max-age=300, must-revalidate")
      expect(first.headers.get("access-control-allow-origin")).toBe("*")
      const etag = first.headers.get("etag")!
      expect(etag).toMatch(/^W\/".+"$/)

      const again = await get(path, { "if-none-match": etag })
      expect(again.status).toBe(304)
      expect(again.headers.get("etag")).toBe(etag)
      expect(await again.text()).toBe("")

      const strongForm = await get(path, { "if-none-match": `"other", ${etag.slice(2)}` })
      expect(strongForm.status).toBe(304)

      const stale = await get(path, { "if-none-match": 'W/"stale"' })
      expect(stale.status).toBe(200)
    }
  )

  it("aliases share the ETag of their canonical document", async () => {
    const canonical = (await get("/v1/openapi.json")).headers.get("etag")
    expect((await get("/openapi.json")).headers.get("etag")).toBe(canonical)
  })
})

describe("interactive documentation", () => {
  it.each([
    ["/openapi", "Compute Exchange API"],
    ["/v1/docs", "Compute Exchange API"],
    ["/v1/docs/inference", "Compute Exchange Inference API"]
  ])("%s is a self-contained Swagger UI page for %s", async (path, title) => {
    const response = await get(path)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/html/)
    const html = await response.text()
    expect(html).toContain(`<title>${title} documentation</title>`)
    expect(html).toContain("SwaggerUIBundle(")
    expect(html).toContain('"openapi":"3.1.0"')
    // Works with no internet access: no script or stylesheet is fetched from anywhere.
    expect(html).not.toMatch(/<script[^>]+src=/i)
    expect(html).not.toMatch(/<link[^>]+href=/i)
  })
})

describe("the service-desc link (RFC 8631)", () => {
  it("is sent by resource endpoints, not by the documents themselves", async () => {
    const link = '</v1/openapi.yaml>; rel="service-desc"; type="text/yaml"'
    expect((await get("/v1/status")).headers.get("link")).toBe(link)
    expect((await get("/v1/no-such-thing")).headers.get("link")).toBe(link)
    expect((await get("/v1/openapi.yaml")).headers.get("link")).toBeNull()
    expect((await get("/openapi.json")).headers.get("link")).toBeNull()
  })
})

describe("the oracle in the public document", () => {
  it("describes every oracle endpoint with its headers and its 429", async () => {
    const document = (await (await get("/v1/openapi.json")).json()) as Json
    const oraclePaths = Object.keys(document.paths).filter((p) => p.startsWith("/v1/oracle/"))
    expect(oraclePaths.length).toBeGreaterThanOrEqual(24)
    for (const path of oraclePaths) {
      const responses = document.paths[path].get.responses
      expect(responses["429"], path).toBeDefined()
      expect(responses["429"].headers["Retry-After"], path).toBeDefined()
      expect(responses["429"].headers["X-Methodology-Version"], path).toBeUndefined()
      const success = Object.keys(responses).find((s) => s.startsWith("2"))!
      expect(responses[success].headers["X-Methodology-Version"], path).toBeDefined()
      expect(responses[success].headers["X-RateLimit-Remaining"], path).toBeDefined()
    }
    expect(document.paths["/v1/oracle/catalog"].get.responses["200"].headers["Cache-Control"].schema).toBeDefined()
    expect(document.paths["/v1/oracle/scu"].get.responses["204"]).toBeDefined()
    expect(Object.keys(document.paths["/v1/oracle/history"].get.responses["200"].content).sort()).toEqual(["application/json", "text/csv"])
  })
})

/** A `$ref` resolved against the document's components. */
const resolve = (document: Json, schema: Json | undefined): Json | undefined =>
  typeof schema?.$ref === "string" ? document.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema

/** The response schema modules, by the identifier the document uses for them. */
const responseSchemas: Record<string, Schema.Schema.Any> = Object.fromEntries(
  Object.entries({ ...OracleSchemas, OpenApiDocument: JsonDocument }).filter(([, value]) => Schema.isSchema(value))
) as Record<string, Schema.Schema.Any>

describe("what generated clients read (COMPAT.md)", () => {
  const publicDocument = async () => (await (await get("/v1/openapi.json")).json()) as Json
  const operations = (document: Json) =>
    Object.entries<Json>(document.paths).flatMap(([path, item]) =>
      Object.entries<Json>(item).map(([method, operation]) => ({ path, method, operation }))
    )

  it("names every oracle operation as the existing clients call it", async () => {
    const document = await publicDocument()
    const idOf = (path: string) => document.paths[path].get.operationId
    expect({
      basket: idOf("/v1/oracle/basket"),
      model: idOf("/v1/oracle/models/{key}"),
      scu: idOf("/v1/oracle/scu"),
      reconstitutions: idOf("/v1/oracle/reconstitutions"),
      history: idOf("/v1/oracle/history"),
      priceHistory: idOf("/v1/oracle/models/{key}/price-history"),
      catalog: idOf("/v1/oracle/catalog"),
      priceAt: idOf("/v1/oracle/models/{key}/price-at"),
      baseline: idOf("/v1/oracle/baseline"),
      scuAt: idOf("/v1/oracle/scu-at"),
      methodology: idOf("/v1/oracle/methodology")
    }).toEqual({
      basket: "OraclePublicController_getBasket",
      model: "OraclePublicController_getModel",
      scu: "OraclePublicController_getScu",
      reconstitutions: "OraclePublicController_getReconstitutions",
      history: "OraclePublicController_getHistory",
      priceHistory: "OraclePublicController_getModelPriceHistory",
      catalog: "OraclePublicController_getCatalog",
      priceAt: "OraclePublicController_getModelPriceAt",
      baseline: "OraclePublicController_getBaseline",
      scuAt: "OraclePublicController_getScuAt",
      methodology: "MethodologyPublicController_getChangelog"
    })
    const oracle = operations(document).filter(({ path }) => path.startsWith("/v1/oracle/"))
    for (const { operation, path } of oracle) {
      expect(operation.operationId, path).toMatch(/^(OraclePublicController|MethodologyPublicController)_get[A-Z][A-Za-z]*$/)
    }
    const ids = operations(document).map(({ operation }) => operation.operationId)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("publishes numeric query and path parameters as integers with their bounds", async () => {
    const document = await publicDocument()
    const parameter = (path: string, name: string) =>
      (document.paths[path].get.parameters as Array<Json>).find((p) => p.name === name)?.schema
    expect(parameter("/v1/oracle/activity", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    expect(parameter("/v1/oracle/activity", "offset")).toMatchObject({ type: "integer", minimum: 0, maximum: 100_000 })
    expect(parameter("/v1/oracle/history", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 10_000 })
    expect(parameter("/v1/oracle/models/{key}/price-history", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 10_000 })
    expect(parameter("/v1/oracle/revisions/{revision}", "revision")).toMatchObject({ type: "integer", minimum: 1 })
    expect(parameter("/v1/oracle/methodology/{version}", "version")).toMatchObject({ type: "integer", minimum: 1 })
    for (const { operation, path } of operations(document)) {
      for (const p of operation.parameters ?? []) {
        if (["limit", "offset", "revision", "version"].includes(p.name)) expect(p.schema.type, `${path} ${p.name}`).toBe("integer")
      }
    }
  })

  it("still refuses what is not a whole number in range, naming the parameter", () => {
    type Endpoint = { readonly urlParamsSchema: Option.Option<unknown>; readonly pathSchema: Option.Option<unknown> }
    const endpoints = OracleGroup.endpoints as unknown as Record<string, Endpoint>
    const decode = (schema: Option.Option<unknown>, input: unknown) =>
      Schema.decodeUnknownEither(Option.getOrThrow(schema) as Schema.Schema<unknown, unknown>, { errors: "all" })(input)
    const activity = endpoints.activity!.urlParamsSchema
    for (const limit of ["abc", "1.5", "0", "101", ""]) {
      const result = decode(activity, { limit })
      expect(Either.isLeft(result), limit).toBe(true)
      if (Either.isLeft(result)) expect(ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => i.path[0])).toContain("limit")
    }
    expect(decode(activity, { limit: "20", offset: "0" })).toEqual(Either.right({ limit: 20, offset: 0 }))
    expect(Either.isLeft(decode(endpoints.revision!.pathSchema, { revision: "1.5" }))).toBe(true)
    expect(decode(endpoints.revision!.pathSchema, { revision: "3" })).toEqual(Either.right({ revision: 3 }))
  })

  it("types the JSON 200 of history and price-history as the resource alone, with CSV beside it", async () => {
    const document = await publicDocument()
    for (const [path, resource] of [
      ["/v1/oracle/history", "HistoryResponse"],
      ["/v1/oracle/models/{key}/price-history", "PriceHistoryResponse"]
    ] as const) {
      const content = document.paths[path].get.responses["200"].content
      expect(content["application/json"].schema, path).toEqual({ $ref: `#/components/schemas/${resource}` })
      expect(content["text/csv"].schema.type, path).toBe("string")
    }
  })

  it("marks instants as date-time and counts, versions and token figures as integers", async () => {
    const document = await publicDocument()
    const schemas = document.components.schemas
    const property = (component: string, ...path: Array<string>) => {
      let node: Json | undefined = schemas[component]
      for (const key of path) node = resolve(document, node?.properties?.[key] ?? node?.items?.properties?.[key])
      const nonNull = (node?.anyOf as Array<Json> | undefined)?.find((member) => member.type !== "null")
      return resolve(document, nonNull ?? node)
    }
    for (const [component, ...path] of [
      ["ScuResponse", "updatedAt"],
      ["LatestResponse", "publishedAt"],
      ["LatestResponse", "confirmedAt"],
      ["HistoryResponse", "from"],
      ["HistoryResponse", "data", "date"],
      ["PriceHistoryResponse", "data", "date"],
      ["CatalogResponse", "generatedAt"],
      ["EmbeddingCatalogEntry", "priceHistory", "effectiveFrom"],
      ["ActivityEvent", "occurredAt"],
      ["HealthResponse", "lastSyncAt"]
    ]) {
      expect(property(component!, ...path)?.format, `${component}.${path.join(".")}`).toBe("date-time")
    }
    expect(property("BaselineResponse", "date")?.format).toBe("date")
    for (const [component, ...path] of [
      ["LatestResponse", "revisionVersion"],
      ["LatestResponse", "methodologyVersion"],
      ["LatestResponse", "basketSize"],
      ["LatestResponse", "workload", "inputTokens"],
      ["ScuResponse", "breakdown", "methodologyVersion"],
      ["HistoryResponse", "count"],
      ["RevisionResponse", "publishedBlock"],
      ["ContractMetadata", "chainId"],
      ["ActivityPage", "total"],
      ["ActivityPage", "limit"],
      ["StatsResponse", "catalog", "models"],
      ["HealthResponse", "latestRevisionVersion"],
      ["MethodologyChangelog", "activeVersion"],
      ["CatalogEntry", "maxInputTokens"],
      ["EmbeddingCatalogEntry", "dimensions"],
      ["EmbeddingCatalogEntry", "dimensionOptions"],
      ["EmbeddingCatalogEntry", "maxBatchInputs"],
      ["PriceHistoryResponse", "unavailableRevisions"]
    ]) {
      const schema = property(component!, ...path)
      expect(schema?.type === "array" ? resolve(document, schema.items)?.type : schema?.type, `${component}.${path.join(".")}`).toBe(
        "integer"
      )
    }
  })

  it("shows a real example of the model key and of every JSON response body, and each example decodes", async () => {
    const document = await publicDocument()
    for (const path of ["/v1/oracle/models/{key}", "/v1/oracle/resolve/{key}"]) {
      const key = (document.paths[path].get.parameters as Array<Json>).find((p) => p.name === "key")
      expect(key?.example, path).toBe("openai/gpt-5.5")
    }
    const documented = operations(document).filter(({ path }) => path.startsWith("/v1/oracle/") || path.startsWith("/v1/openapi"))
    let checked = 0
    for (const { operation, path } of documented) {
      const schema = operation.responses["200"]?.content?.["application/json"]?.schema
      if (schema === undefined) continue
      const name = String(schema.$ref ?? "").replace("#/components/schemas/", "")
      const examples = resolve(document, schema)?.examples as Array<unknown> | undefined
      expect(examples?.length ?? 0, `${path}: ${name || "inline schema"} has no example`).toBeGreaterThan(0)
      expect(responseSchemas[name], `${path}: ${name}`).toBeDefined()
      for (const example of examples ?? []) {
        const decoded = Schema.decodeUnknownEither(responseSchemas[name] as Schema.Schema<unknown, unknown>)(example)
        expect(Either.isRight(decoded) ? "decodes" : String(decoded.left), `${path}: ${name}`).toBe("decodes")
      }
      checked++
    }
    expect(checked).toBeGreaterThanOrEqual(24)
  })

  it("always names a server: relative without PUBLIC_BASE_URL, the public origin with it", async () => {
    expect((await publicDocument()).servers).toEqual([{ url: "/" }])
    expect(((await (await get("/v1/openapi.inference.json")).json()) as Json).servers).toEqual([{ url: "/" }])
    const configured = makeApiDocuments({ publicBaseUrl: Option.some("https://api.example.com") })
    expect(configured.publicDocument.servers).toEqual([{ url: "https://api.example.com" }])
    expect(configured.inferenceDocument.servers).toEqual([{ url: "https://api.example.com" }])
  })
})
