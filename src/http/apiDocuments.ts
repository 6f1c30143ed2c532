/**
 * The OpenAPI documents, generated once at start from the HttpApi definitions, and the bytes served for
 * each format (aliases share the same bytes, so they are byte-identical by construction).
 */
import { OpenApi } from "@effect/platform"
import { Option } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { stringify as toYaml } from "yaml"
import { InferenceApi } from "../api/InferenceApi.ts"
import { PublicApi } from "../api/PublicApi.ts"
import { isPublicPath } from "./cors.ts"
import { ORACLE_CACHE_CONTROL } from "./hotReads.ts"
import { isOraclePath } from "./paths.ts"
import { pageSecurityHeaders } from "./securityHeaders.ts"

type Json = Record<string, any>

export const SERVICE_DESC_LINK = '</v1/openapi.yaml>; rel="service-desc"; type="text/yaml"'

/** Paths of the documentation itself, which carry no service-desc link. */
export const isDocumentationPath = (path: string): boolean =>
  /^\/(v1\/)?openapi(\.[a-z.]+)?$/.test(path) || path === "/v1/docs" || path.startsWith("/v1/docs/")

export interface ServedBody {
  readonly body: string
  readonly contentType: string
  /** Weak validator: the bytes may be re-serialized identically by another replica. */
  readonly etag: string
  /** Headers beyond the caching ones: an HTML page's security headers (src/http/securityHeaders.ts). */
  readonly headers?: Readonly<Record<string, string>>
}

const served = (body: string, contentType: string): ServedBody => ({
  body,
  contentType,
  etag: `W/"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`
})

const headerDoc = (description: string) => ({ description, schema: { type: "string" } })

/** Removes the platform's built-in decode-error shape: decode failures are answered as 422 envelopes. */
const dropPlatformDecodeError = (doc: Json) => {
  const ref = "#/components/schemas/HttpApiDecodeError"
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      const responses: Json = operation.responses ?? {}
      for (const [status, response] of Object.entries<Json>(responses)) {
        const schema = response.content?.["application/json"]?.schema
        if (schema?.$ref === ref) {
          delete responses[status]
        } else if (Array.isArray(schema?.anyOf)) {
          schema.anyOf = schema.anyOf.filter((member: Json) => member.$ref !== ref)
          if (schema.anyOf.length === 1) response.content["application/json"].schema = schema.anyOf[0]
        }
      }
    }
  }
  delete doc.components?.schemas?.HttpApiDecodeError
}

const referencedSchemas = (node: unknown, found: Set<string>): Set<string> => {
  if (Array.isArray(node)) node.forEach((item) => referencedSchemas(item, found))
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.add(value.replace("#/components/schemas/", ""))
      else referencedSchemas(value, found)
    }
  }
  return found
}

/** Drops component schemas nothing refers to any more (what only the removed decode error used), and empty sections. */
const pruneComponents = (doc: Json) => {
  const schemas: Json = doc.components?.schemas ?? {}
  for (;;) {
    const used = referencedSchemas({ paths: doc.paths, schemas: Object.values(schemas) }, new Set())
    const unused = Object.keys(schemas).filter((name) => !used.has(name))
    if (unused.length === 0) break
    for (const name of unused) delete schemas[name]
  }
  for (const [section, value] of Object.entries<Json>(doc.components ?? {})) {
    if (Object.keys(value).length === 0) delete doc.components[section]
  }
}

const oracleHeaders = (path: string, status: string) => ({
  ...(status === "429"
    ? { "Retry-After": { description: "Seconds until the client may try again", schema: { type: "integer" } } }
    : { "X-Methodology-Version": { description: "The methodology in force now (integer >= 1); never on 429", schema: { type: "integer" } } }),
  "X-RateLimit-Limit": { description: "Requests allowed in the tightest of the per-IP buckets", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in that bucket", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "When that bucket resets (Unix seconds)", schema: { type: "integer" } },
  ...(ORACLE_CACHE_CONTROL[path] !== undefined && status.startsWith("2") ? { "Cache-Control": headerDoc(ORACLE_CACHE_CONTROL[path]!) } : {})
})

/** Documents the headers our middleware adds to every response. */
const documentCommonHeaders = (doc: Json) => {
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        response.headers = {
          ...response.headers,
          ...(isOraclePath(path) ? oracleHeaders(path, status) : {}),
          "X-Request-Id": headerDoc("Echo of the request's X-Request-Id, or an id the server assigned"),
          ...(isDocumentationPath(path)
            ? {
                "Cache-Control": headerDoc("public, max-age=300, must-revalidate"),
                ETag: headerDoc("Weak validator; send it back in If-None-Match to get 304")
              }
            : { Link: headerDoc(`RFC 8631 service description: ${SERVICE_DESC_LINK}`) }),
          ...(isPublicPath(path)
            ? { "Access-Control-Allow-Origin": headerDoc("* (readable from any origin, without credentials)") }
            : {})
        }
      }
    }
  }
}

/**
 * The schema generator marks `unknown`/`object` schemas with a placeholder `$id` ("/schemas/unknown"); repeated
 * across a document it is a duplicate identifier, which JSON Schema forbids. The schemas mean the same without it.
 */
const dropPlaceholderIds = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(dropPlaceholderIds)
  if (typeof node !== "object" || node === null) return
  const record = node as Json
  if (typeof record.$id === "string" && record.$id.startsWith("/schemas/")) delete record.$id
  Object.values(record).forEach(dropPlaceholderIds)
}

/** Endpoints that answer CSV on `Accept: text/csv` beside JSON (two 200 bodies, which the generator merges). */
const CSV_ENDPOINTS = ["/v1/oracle/history", "/v1/oracle/models/{key}/price-history"]

/**
 * The generator merges the JSON and the CSV 200 into one `anyOf` under application/json. Generated clients then type
 * the body as "resource or string": the JSON content keeps the resource alone, and CSV is its own content.
 */
const documentCsvAlternatives = (doc: Json) => {
  for (const path of CSV_ENDPOINTS) {
    const ok = doc.paths?.[path]?.get?.responses?.["200"]
    if (ok === undefined) continue
    const json = ok.content?.["application/json"]
    if (Array.isArray(json?.schema?.anyOf)) {
      const resources = json.schema.anyOf.filter((member: Json) => member.type !== "string")
      if (resources.length === 1) json.schema = resources[0]
    }
    ok.content = {
      ...ok.content,
      "text/csv": { schema: { type: "string", description: "RFC 4180 CSV with a header row, sent for Accept: text/csv" } }
    }
  }
}

/** Path parameters with a real value to show (and for interactive viewers to pre-fill). */
const PARAMETER_EXAMPLES: Record<string, string> = { key: "openai/gpt-5.5" }

const documentParameterExamples = (doc: Json) => {
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      for (const parameter of operation.parameters ?? []) {
        const example = PARAMETER_EXAMPLES[parameter.name]
        if (parameter.in === "path" && example !== undefined) parameter.example = example
      }
    }
  }
}

const finalize = (doc: OpenApi.OpenAPISpec, publicBaseUrl: Option.Option<string>): Json => {
  const copy: Json = structuredClone(doc)
  dropPlaceholderIds(copy)
  dropPlatformDecodeError(copy)
  pruneComponents(copy)
  documentCsvAlternatives(copy)
  documentParameterExamples(copy)
  documentCommonHeaders(copy)
  // Always present: without it a client resolves paths against the document's own URL, and linters refuse the
  // document. Relative ("/") until PUBLIC_BASE_URL names the public origin.
  copy.servers = [{ url: Option.getOrElse(publicBaseUrl, () => "/") }]
  return copy
}

const swaggerAssets = (() => {
  let cached: { js: string; css: string } | undefined
  return () => {
    if (cached === undefined) {
      const dir = Path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))
      cached = {
        js: Fs.readFileSync(Path.join(dir, "swagger-ui-bundle.js"), "utf8"),
        css: Fs.readFileSync(Path.join(dir, "swagger-ui.css"), "utf8")
      }
    }
    return cached
  }
})()

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** JSON inside <script> must not be able to close the element. */
const scriptSafeJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c")

/** The viewer's start, inline in its page. */
const SWAGGER_START = `
window.onload = function () {
  window.ui = SwaggerUIBundle({
    spec: JSON.parse(document.getElementById("api-document").textContent),
    dom_id: "#swagger-ui",
    deepLinking: true
  });
};
`

/**
 * A self-contained page: the viewer's code and styles are inline, so it works with no internet access. Its
 * Content-Security-Policy allows exactly those inline elements, by the hashes of their text, and nothing else inline.
 */
const swaggerPage = (doc: Json): ServedBody => {
  const { js, css } = swaggerAssets()
  const bundle = js.replace(/<\/script/gi, "<\\/script")
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${escapeHtml(String(doc.info?.title ?? "API"))} documentation</title>
<style>${css}</style>
</head>
<body>
<div id="swagger-ui"></div>
<script id="api-document" type="application/json">${scriptSafeJson(doc)}</script>
<script>${bundle}</script>
<script>${SWAGGER_START}</script>
</body>
</html>
`
  return { ...served(html, "text/html; charset=utf-8"), headers: pageSecurityHeaders({ scripts: [bundle, SWAGGER_START], styles: [css] }) }
}

export interface ApiDocuments {
  readonly publicDocument: Json
  readonly inferenceDocument: Json
  readonly publicYaml: ServedBody
  readonly publicJson: ServedBody
  readonly inferenceYaml: ServedBody
  readonly inferenceJson: ServedBody
  readonly publicUi: () => ServedBody
  readonly inferenceUi: () => ServedBody
}

const lazy = <A>(make: () => A): (() => A) => {
  let value: A | undefined
  return () => (value ??= make())
}

export const makeApiDocuments = (options: { readonly publicBaseUrl: Option.Option<string> }): ApiDocuments => {
  const publicDocument = finalize(OpenApi.fromApi(PublicApi), options.publicBaseUrl)
  const inferenceDocument = finalize(OpenApi.fromApi(InferenceApi), options.publicBaseUrl)
  const yaml = (doc: Json) => served(toYaml(doc, { aliasDuplicateObjects: false, lineWidth: 0 }), "text/yaml; charset=utf-8")
  const json = (doc: Json) => served(`${JSON.stringify(doc, null, 2)}\n`, "application/json; charset=utf-8")
  return {
    publicDocument,
    inferenceDocument,
    publicYaml: yaml(publicDocument),
    publicJson: json(publicDocument),
    inferenceYaml: yaml(inferenceDocument),
    inferenceJson: json(inferenceDocument),
    publicUi: lazy(() => swaggerPage(publicDocument)),
    inferenceUi: lazy(() => swaggerPage(inferenceDocument))
  }
}
