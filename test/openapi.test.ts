/**
 * SPEC "Documentation endpoints" and "Versioning": the two OpenAPI 3.1 documents, their aliases and
 * caching, the offline interactive UIs, and the match between what is served and what is documented.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { AdminApi } from "../src/api/AdminApi.ts"
import { InferenceApi } from "../src/api/InferenceApi.ts"
import { PublicApi } from "../src/api/PublicApi.ts"
import { ServerApi } from "../src/api/ServerApi.ts"
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
    // The server serves exactly the two documented APIs plus the maintainer API, which is private by design.
    const privateRoutes = served(makeRouteTable(AdminApi).routes)
    expect(privateRoutes.every((route) => route.includes(" /v1/admin/"))).toBe(true)
    expect(served(makeRouteTable(ServerApi).routes).sort()).toEqual(
      [...documented(publicDocument), ...documented(inferenceDocument), ...privateRoutes].sort()
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
