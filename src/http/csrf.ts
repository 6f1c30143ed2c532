/**
 * Cross-site request forgery (DESIGN section 13 "Security"): a request authenticated by the `cf_session` cookie whose
 * method changes state (anything but GET, HEAD, OPTIONS) is refused (403 `forbidden`) when the browser says it comes
 * from another site (`Sec-Fetch-Site: cross-site | same-site`, or an `Origin` that is not this service's own), or when
 * it carries neither a same-origin `Origin` nor the console's custom header `X-CF-Console: 1`. A page on another site
 * cannot send a custom header without a CORS preflight, which this service never grants off its public read paths.
 *
 * The rule is applied where "cookie-authenticated" is known: the session middleware (`SessionAuthLive`, once it has
 * decided the request is not wallet-signed and a cookie was sent) and logout, which reads the cookie itself. Bearer
 * keys, app grants and signed requests never reach it.
 *
 * Browser-safe on purpose (no imports at all): the console imports the header's name and value from here.
 */

/** The console's custom header: the console sends it on every request, and so do the README's curl examples. */
export const CONSOLE_HEADER = "X-CF-Console"
export const CONSOLE_HEADER_VALUE = "1"
/** Ready to spread into a request's headers. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ [CONSOLE_HEADER]: CONSOLE_HEADER_VALUE })

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/** Whether a request with this method may change state (and so falls under the rule). */
export const isUnsafeMethod = (method: string): boolean => !SAFE_METHODS.has(method.toUpperCase())

/** `scheme://host[:port]` in the form browsers send in `Origin` (lower case, default port dropped), or undefined. */
export const originOf = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined
    return parsed.origin
  } catch {
    return undefined
  }
}

/** The first value of a header a proxy may have sent as a comma-separated list. */
const firstOf = (value: string | undefined): string | undefined => {
  const first = value?.split(",")[0]?.trim()
  return first === undefined || first === "" ? undefined : first
}

/**
 * The origins this request reached the service at:
 * - `http://` + the `Host` header (the service itself speaks plain HTTP);
 * - with TRUST_PROXY on, the proxy's `X-Forwarded-Proto` (else http) + `X-Forwarded-Host` (else Host), first values;
 * - PUBLIC_BASE_URL's origin when it is set (the address the operator says the service is at, e.g. behind TLS).
 */
export const ownOrigins = (input: {
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly trustProxy: boolean
  readonly publicBaseUrl: string | undefined
}): ReadonlySet<string> => {
  const origins = new Set<string>()
  const add = (url: string | undefined) => {
    const origin = url === undefined ? undefined : originOf(url)
    if (origin !== undefined) origins.add(origin)
  }
  const host = firstOf(input.headers["host"])
  if (host !== undefined) add(`http://${host}`)
  if (input.trustProxy) {
    const proto = firstOf(input.headers["x-forwarded-proto"])?.toLowerCase()
    const forwardedHost = firstOf(input.headers["x-forwarded-host"]) ?? host
    if (forwardedHost !== undefined && (proto === undefined || proto === "http" || proto === "https")) {
      add(`${proto ?? "http"}://${forwardedHost}`)
    }
  }
  if (input.publicBaseUrl !== undefined) add(input.publicBaseUrl)
  return origins
}

const REFUSAL = "A signed-in request that changes state must come from this site"

/**
 * Why a cookie-authenticated request must be refused, or undefined when it may go on. `headers` are the request's,
 * with lower-case names (as Node gives them).
 */
export const crossSiteRefusal = (input: {
  readonly method: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly ownOrigins: ReadonlySet<string>
}): string | undefined => {
  if (!isUnsafeMethod(input.method)) return undefined
  const fetchSite = input.headers["sec-fetch-site"]?.trim().toLowerCase()
  if (fetchSite === "cross-site" || fetchSite === "same-site") {
    return `${REFUSAL}: the browser says it came from another site (Sec-Fetch-Site: ${fetchSite}).`
  }
  const origin = input.headers["origin"]?.trim()
  if (origin !== undefined && origin !== "") {
    // `Origin: null` (a sandboxed frame, a data: URL, a redirect across sites) names no site: not this one either.
    const normalized = originOf(origin)
    if (normalized === undefined || !input.ownOrigins.has(normalized)) {
      return `${REFUSAL}: its Origin names another site.`
    }
    return undefined
  }
  if (input.headers[CONSOLE_HEADER.toLowerCase()]?.trim() === CONSOLE_HEADER_VALUE) return undefined
  return `${REFUSAL}: send the ${CONSOLE_HEADER}: ${CONSOLE_HEADER_VALUE} header (the console does) or a same-origin Origin.`
}
