/**
 * Request targets: the path without its query, and which part of the API a path belongs to.
 */

/** The path of a request target, without the query. */
export const pathOf = (target: string): string => {
  const queryAt = target.indexOf("?")
  return queryAt === -1 ? target : target.slice(0, queryAt)
}

export const ORACLE_PATH_PREFIX = "/v1/oracle/"

export const isOraclePath = (path: string): boolean => path.startsWith(ORACLE_PATH_PREFIX)

/** The quote endpoint, limited per source IP like the oracle (SPEC "Limits"). */
export const ESTIMATE_PATH = "/v1/inference/estimate"

/** The exchange's routes: inference, the model lists, the quote and the stored bills. */
const EXCHANGE_PATHS = ["/v1/chat/completions", "/v1/messages", "/v1/models", ESTIMATE_PATH]

export const isExchangePath = (path: string): boolean =>
  path === "/v1/generations" || path.startsWith("/v1/generations/") || EXCHANGE_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))
