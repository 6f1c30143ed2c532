/**
 * The wire form of every error, built once from domain/errors.ts: `{error:{message,type,code,param?,details?,issues?}}`.
 * Endpoints declare these schemas (so the OpenAPI documents show the envelope) and `renderError` is the only
 * code that turns a failure into a response body.
 */
import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Schema } from "effect"
import {
  type ApiError,
  type ApiErrorClass,
  ErrorTable,
  errorSpec,
  MethodNotAllowed,
  RateLimited,
  ValidationFailed,
  ValidationIssue
} from "../../domain/errors.ts"

/** The encoded envelope, as every client sees it. */
export interface ErrorEnvelope {
  readonly error: {
    readonly message: string
    readonly type: string
    readonly code: string
    readonly param?: string
    readonly details?: unknown
    readonly issues?: ReadonlyArray<ValidationIssue>
  }
}

const makeWireSchema = (cls: ApiErrorClass): Schema.Schema<ApiError, ErrorEnvelope> => {
  const spec = ErrorTable[cls._tag]
  const isValidation = cls._tag === ValidationFailed._tag
  const envelope = Schema.Struct({
    error: Schema.Struct({
      message: Schema.String,
      type: isValidation ? Schema.Literal("validation_error", "invalid_request_error") : Schema.Literal(spec.type),
      code: Schema.Literal(spec.code),
      param: Schema.optional(Schema.String),
      details: cls.fields.details,
      ...(isValidation ? { issues: Schema.optional(Schema.Array(ValidationIssue)) } : {})
    })
  })

  const transformed = Schema.transform(envelope, Schema.typeSchema(cls as Schema.Schema<ApiError, unknown>), {
    strict: false,
    decode: ({ error }) => new (cls as unknown as new (props: unknown) => ApiError)(error),
    encode: (failure: ApiError) => {
      const { code, type } = errorSpec(failure)
      const { details, issues, param } = failure as { details?: unknown; issues?: unknown; param?: string }
      return {
        error: {
          message: failure.message,
          type,
          code,
          ...(param === undefined ? {} : { param }),
          ...(details === undefined ? {} : { details }),
          ...(issues === undefined ? {} : { issues })
        }
      }
    }
  })
  return transformed.annotations({
    identifier: cls._tag,
    description: `${spec.code}: ${spec.when}`,
    // The class carries its status from the table (domain/errors.ts); the wire form answers with the same one.
    ...HttpApiSchema.annotations({ status: HttpApiSchema.getStatusError(cls) })
  }) as unknown as Schema.Schema<
    ApiError,
    ErrorEnvelope
  >
}

const wireSchemas = new Map<string, Schema.Schema<ApiError, ErrorEnvelope>>()

/** The wire schema of one error class: declare it on endpoints with `.addError(errorWire(NotFound))`. */
export const errorWire = <C extends ApiErrorClass>(cls: C): Schema.Schema<InstanceType<C>, ErrorEnvelope> => {
  let schema = wireSchemas.get(cls._tag)
  if (schema === undefined) {
    schema = makeWireSchema(cls)
    wireSchemas.set(cls._tag, schema)
  }
  return schema as unknown as Schema.Schema<InstanceType<C>, ErrorEnvelope>
}

/**
 * The wire schemas of several classes as one union, each member keeping its own status: a set of errors that several
 * endpoints of a group answer (not all of them, else it belongs on the group) is named once and declared with
 * `.addError(errorsWire(NotFound, ValidationFailed))`.
 */
export const errorsWire = <const C extends ReadonlyArray<ApiErrorClass>>(
  ...classes: C
): Schema.Schema<InstanceType<C[number]>, ErrorEnvelope> =>
  Schema.Union(...classes.map(errorWire)) as unknown as Schema.Schema<InstanceType<C[number]>, ErrorEnvelope>

/** Headers some codes carry beside the body. */
const headersFor = (error: ApiError): Record<string, string> => {
  if (error instanceof MethodNotAllowed) return { allow: error.details.allow.join(", ") }
  if (error instanceof RateLimited) {
    const retryAfter = { "retry-after": String(Math.max(1, Math.ceil(error.details.retryAfterSeconds))) }
    const { limit, resetEpochSeconds } = error.details
    return limit === undefined || resetEpochSeconds === undefined
      ? retryAfter
      : { ...retryAfter, "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(resetEpochSeconds) }
  }
  return {}
}

/** An error answer as plain data: status, headers (besides Content-Type: application/json) and the envelope's JSON text. */
export interface RenderedError {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * The one place a failure becomes an answer. Writers outside the Effect stack (the Node server's own refusals, written
 * on the raw socket before a request exists) send exactly these bytes; `renderError` wraps them for the stack.
 */
export const renderErrorParts = (error: ApiError): RenderedError => {
  const cls = error.constructor as ApiErrorClass
  return {
    status: errorSpec(error).status,
    headers: { "cache-control": "no-store", ...headersFor(error) },
    body: JSON.stringify(Schema.encodeSync(errorWire(cls))(error))
  }
}

/** The one place a failure becomes a response. */
export const renderError = (error: ApiError): HttpServerResponse.HttpServerResponse => {
  const { body, headers, status } = renderErrorParts(error)
  return HttpServerResponse.text(body, { status, headers, contentType: "application/json" })
}
