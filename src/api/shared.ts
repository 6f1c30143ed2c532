/**
 * Pieces every API definition shares: the error schemas declared on all operations, and response
 * schemas of the documentation endpoints.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { InternalError, ServiceUnavailable } from "../../domain/errors.ts"
import { errorWire } from "../http/errorEnvelope.ts"

/** Errors any operation can answer with. */
export const AlwaysPossibleErrors = [errorWire(InternalError), errorWire(ServiceUnavailable)] as const

export const YamlDocument = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/yaml" })
).annotations({ description: "OpenAPI 3.1 document (YAML)" })

export const JsonDocument = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "OpenApiDocument",
  description: "OpenAPI 3.1 document (JSON)",
  examples: [
    {
      openapi: "3.1.0",
      info: { title: "Compute Exchange API", version: "1.0" },
      servers: [{ url: "/" }],
      paths: { "/v1/oracle/scu": { get: { operationId: "OraclePublicController_getScu" } } }
    }
  ]
})

export const HtmlPage = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" })
).annotations({ description: "Interactive documentation (Swagger UI, served with its assets inline)" })

export const NotModified = HttpApiSchema.Empty(304).annotations({
  description: "The document is unchanged since the ETag sent in If-None-Match"
})

/**
 * Every request schema (payload, query, path) goes through this, so a 422 lists every offending field
 * rather than the first one the decoder met.
 */
export const reportAllIssues = <S extends Schema.Schema.Any>(schema: S): S =>
  schema.annotations({ parseOptions: { errors: "all" } }) as S
