/**
 * The oracle's hot reads: the requests answered from a pre-serialized snapshot body, with the headers SPEC fixes
 * for them. One table serves the fast path (src/http/fastPath.ts), the handlers (which answer the same requests
 * when the fast path is off or cannot decide) and the documents (the cache lifetimes they publish).
 */
import type { BodyName } from "../../services/oracle/OracleSnapshot.ts"
import { pathOf } from "./paths.ts"

/**
 * Cache lifetimes SPEC fixes, by route (OpenAPI path template). Every other oracle answer carries no Cache-Control.
 */
export const ORACLE_CACHE_CONTROL: Readonly<Record<string, string>> = {
  "/v1/oracle/catalog": "public, max-age=60",
  "/v1/oracle/contract-metadata": "public, max-age=300",
  "/v1/oracle/models/{key}/price-at": "public, max-age=60",
  // Content-addressed: a manifest never changes.
  "/v1/oracle/manifest/{metadataHash}": "public, max-age=31536000, immutable"
}

/** The headers a route's successful answer carries beyond the common ones. */
export const cacheHeaders = (route: string): Record<string, string> => {
  const value = ORACLE_CACHE_CONTROL[route]
  return value === undefined ? {} : { "cache-control": value }
}

export interface HotRead {
  /** The request target exactly as the client sends it (path and query). */
  readonly target: string
  /** The route (OpenAPI path template) it belongs to. */
  readonly route: string
  readonly body: BodyName
  readonly headers: Readonly<Record<string, string>>
}

const hot = (target: string, body: BodyName): HotRead => {
  const route = pathOf(target)
  return { target, route, body, headers: cacheHeaders(route) }
}

export const HOT_READS: ReadonlyArray<HotRead> = [
  hot("/v1/oracle/scu", "scu"),
  hot("/v1/oracle/basket", "basket"),
  hot("/v1/oracle/latest", "latest"),
  hot("/v1/oracle/baseline", "baseline"),
  hot("/v1/oracle/models", "models"),
  hot("/v1/oracle/catalog", "catalog"),
  hot("/v1/oracle/pricing", "pricing"),
  hot("/v1/oracle/reconstitutions", "reconstitutions"),
  hot("/v1/oracle/stats", "stats"),
  hot("/v1/oracle/methodology", "methodology"),
  hot("/v1/oracle/history", "historyDefault"),
  hot("/v1/oracle/history?granularity=daily", "historyDailyDefault")
]

const byTarget = new Map(HOT_READS.map((read) => [read.target, read]))

/** The hot read a request target names, if it names one exactly. */
export const hotReadOf = (target: string): HotRead | undefined => byTarget.get(target)

/** A client asking for CSV is answered by the handlers, never from a JSON body. */
export const wantsCsv = (accept: string | undefined): boolean => /\btext\/csv\b/i.test(accept ?? "")
