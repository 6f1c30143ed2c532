/**
 * Serves the API documents with the caching SPEC.md asks of them: public, five minutes, revalidated with
 * a weak ETag (304 on If-None-Match), readable from any origin.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { ServerApi } from "../api/ServerApi.ts"
import type { ApiDocuments, ServedBody } from "../http/apiDocuments.ts"
import { ApiDocumentsService } from "../http/ApiDocumentsService.ts"

const weakMatch = (ifNoneMatch: string | undefined, etag: string): boolean => {
  if (ifNoneMatch === undefined) return false
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "")
  return ifNoneMatch.split(",").some((candidate) => candidate.trim() === "*" || opaque(candidate) === opaque(etag))
}

const serve = (pick: (documents: ApiDocuments) => ServedBody) =>
  Effect.gen(function* () {
    const documents = yield* ApiDocumentsService
    const request = yield* HttpServerRequest.HttpServerRequest
    const document = pick(documents)
    const headers = {
      "cache-control": "public, max-age=300, must-revalidate",
      etag: document.etag,
      "access-control-allow-origin": "*",
      // The viewers' pages carry their Content-Security-Policy and frame refusal (src/http/securityHeaders.ts).
      ...document.headers
    }
    if (weakMatch(request.headers["if-none-match"], document.etag)) {
      return HttpServerResponse.empty({ status: 304, headers })
    }
    return HttpServerResponse.text(document.body, { contentType: document.contentType, headers })
  })

export const DocsHandlers = HttpApiBuilder.group(ServerApi, "docs", (handlers) =>
  handlers
    .handle("publicYaml", () => serve((d) => d.publicYaml))
    .handle("publicYamlAlias", () => serve((d) => d.publicYaml))
    .handle("publicJson", () => serve((d) => d.publicJson))
    .handle("publicJsonAlias", () => serve((d) => d.publicJson))
    .handle("inferenceYaml", () => serve((d) => d.inferenceYaml))
    .handle("inferenceJson", () => serve((d) => d.inferenceJson))
    .handle("publicUi", () => serve((d) => d.publicUi()))
    .handle("publicUiAlias", () => serve((d) => d.publicUi()))
    .handle("inferenceUi", () => serve((d) => d.inferenceUi()))
)
