/**
 * Documentation endpoints (SPEC "Documentation endpoints"): the public and the inference OpenAPI
 * documents in YAML and JSON, and the interactive UIs; `/` leads to them until the service has a console.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { HtmlPage, JsonDocument, NotModified, YamlDocument } from "./shared.ts"

export const DOCS_PATH = "/v1/docs"

const RedirectNotice = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain" })).annotations({
  description: `A one-line notice; the Location header points at ${DOCS_PATH}`
})

/** The generator does not document response headers: add the redirect's Location to the 302. */
const documentLocation = (operation: Record<string, any>) => {
  const found = operation.responses?.["302"]
  if (found !== undefined) {
    found.headers = { ...found.headers, Location: { description: DOCS_PATH, schema: { type: "string" } } }
  }
  return operation
}

const root = HttpApiEndpoint.get("root", "/")
  .addSuccess(RedirectNotice, { status: 302 })
  .annotate(OpenApi.Summary, `Redirects to the interactive documentation at ${DOCS_PATH}`)
  .annotate(OpenApi.Transform, documentLocation)

const yamlDocument = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.get(name, path)
    .addSuccess(YamlDocument)
    .addSuccess(NotModified)
    .annotate(OpenApi.Summary, summary)

const jsonDocument = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.get(name, path)
    .addSuccess(JsonDocument)
    .addSuccess(NotModified)
    .annotate(OpenApi.Summary, summary)

const page = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.get(name, path).addSuccess(HtmlPage).annotate(OpenApi.Summary, summary)

export class DocsGroup extends HttpApiGroup.make("docs")
  .add(yamlDocument("publicYaml", "/v1/openapi.yaml", "The public API document (canonical)"))
  .add(jsonDocument("publicJson", "/v1/openapi.json", "The public API document as JSON"))
  .add(yamlDocument("publicYamlAlias", "/openapi.yaml", "Alias of /v1/openapi.yaml"))
  .add(jsonDocument("publicJsonAlias", "/openapi.json", "Alias of /v1/openapi.json"))
  .add(yamlDocument("inferenceYaml", "/v1/openapi.inference.yaml", "The inference API document"))
  .add(jsonDocument("inferenceJson", "/v1/openapi.inference.json", "The inference API document as JSON"))
  .add(page("publicUi", DOCS_PATH, "Interactive documentation of the public API"))
  .add(page("publicUiAlias", "/openapi", "Alias of /v1/docs"))
  .add(page("inferenceUi", "/v1/docs/inference", "Interactive documentation of the inference API"))
  .add(root)
  .annotate(OpenApi.Title, "Documentation")
  .annotate(OpenApi.Description, "Machine-readable API documents and their interactive viewers.") {}
