/**
 * Documentation endpoints (SPEC "Documentation endpoints"): the public and the inference OpenAPI
 * documents in YAML and JSON, and the interactive UIs (the site root `/` is the public index page: PagesApi.ts).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { HtmlPage, JsonDocument, NotModified, YamlDocument } from "./shared.ts"

export const DOCS_PATH = "/v1/docs"

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
  .annotate(OpenApi.Title, "Documentation")
  .annotate(OpenApi.Description, "Machine-readable API documents and their interactive viewers.") {}
