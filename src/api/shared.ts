/**
 * Pieces every API definition shares: the error schemas declared on all operations, the e-mail address field, and
 * response schemas of the documentation endpoints.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { EMAIL_PATTERN, MAX_EMAIL_LENGTH } from "../../domain/accounts/ids.ts"
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

/**
 * Refuses text holding U+0000, which a PostgreSQL `text` or `jsonb` value cannot store: the field is refused (422 naming
 * it) rather than the statement failing (500). Every free-text field that is stored goes through it.
 */
export const withoutNul = <A extends string, I, R>(self: Schema.Schema<A, I, R>): Schema.filter<Schema.Schema<A, I, R>> =>
  self.pipe(Schema.filter((text) => !text.includes("\u0000") || "expected no NUL character (U+0000)", { title: "string without NUL" }))

/** An e-mail address as the API takes it: trimmed, at most 254 characters, one `@` and a dotted domain. */
export const Email = Schema.Trim.pipe(
  withoutNul,
  Schema.maxLength(MAX_EMAIL_LENGTH),
  Schema.pattern(EMAIL_PATTERN, { message: () => "expected an e-mail address" })
).annotations({ description: "E-mail address (compared case-insensitively)", examples: ["alice@example.com"] })

const LIMIT_DESCRIPTION = "Page size, 1-100 (default 20)"

/** `limit` and `cursor` of a newest-first list (the ledger, withdrawals, points history). */
export const PageQuery = reportAllIssues(
  Schema.Struct({
    limit: Schema.optional(
      Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)).annotations({
        description: LIMIT_DESCRIPTION,
        jsonSchema: { type: "integer", minimum: 1, maximum: 100, description: LIMIT_DESCRIPTION }
      })
    ),
    cursor: Schema.optional(
      Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,18}$/)).annotations({ description: "`nextCursor` of the previous page" })
    )
  })
)
