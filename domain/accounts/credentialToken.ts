/**
 * The one reading of the token a request authenticates with, for every way in (the HttpApi security middlewares, the
 * inference route ahead of the router, the optional key of `/v1/models/availability`). An `Authorization` header is
 * read by its scheme, which RFC 9110 makes case-insensitive (`Bearer`, `bearer`), followed by one or more spaces; the
 * token is trimmed. Anthropic's clients send `x-api-key` instead, which the Messages endpoints take when no bearer
 * token is there.
 */

const BEARER = /^bearer +(\S.*)$/i

/** The bearer token of an `Authorization` header; undefined when there is none or the header names another scheme. */
export const bearerTokenOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const token = BEARER.exec(authorization)?.[1]?.trim()
  return token === undefined || token === "" ? undefined : token
}

/** The request's credential token: its bearer token, else (where the endpoint takes it) its `x-api-key`. */
export const credentialTokenOf = (
  headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined },
  takesApiKeyHeader: boolean
): string | undefined => {
  const authorization = headers["authorization"]
  const bearer = bearerTokenOf(typeof authorization === "string" ? authorization : undefined)
  if (bearer !== undefined || !takesApiKeyHeader) return bearer
  const apiKey = headers["x-api-key"]
  const token = typeof apiKey === "string" ? apiKey.trim() : undefined
  return token === "" ? undefined : token
}
