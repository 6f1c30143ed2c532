/**
 * What the service tells a browser to protect a signed-in person (docs/decisions.md "Security headers"), in one
 * place: the Content-Security-Policy and the other headers every HTML page carries, and when the session cookie is
 * `Secure`.
 *
 * Every HTML page the service answers (the public pages, their 404, the console's shell for each of its routes, the
 * API documentation viewers) takes its headers from `pageSecurityHeaders`:
 * - `default-src 'self'`: nothing is loaded from another origin (the pages work offline, DESIGN.md section 13);
 * - scripts only from the service itself: no inline script and no eval, save an inline element the page names by
 *   the SHA-256 of its exact text (the API viewers' inlined Swagger UI); never `'unsafe-inline'`;
 * - styles likewise: the public pages inline their one stylesheet, allowed by its hash (computed once at start from
 *   the very text the renderer inserts);
 * - `img-src 'self' data:` (the pages' icon is `data:,`; Swagger UI's icons are data: images);
 * - `frame-ancestors 'none'` and `X-Frame-Options: DENY`: no other site may frame a page, so none can steer a
 *   signed-in person's clicks in the console past the CSRF rule (src/http/csrf.ts);
 * - `object-src 'none'`, `base-uri 'self'` (a page's `<base>` is relative), `form-action 'self'`;
 * - `X-Content-Type-Options: nosniff` and `Referrer-Policy: same-origin`.
 */
import { createHash } from "node:crypto"
import { Option } from "effect"
import type { AppConfigShape } from "../../services/platform/AppConfig.ts"

/** A CSP hash source for an inline element whose text is exactly `text`. */
export const hashSource = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/** The inline elements a page carries, by their exact text (what lies between the tags). */
export interface InlineElements {
  readonly scripts?: ReadonlyArray<string>
  readonly styles?: ReadonlyArray<string>
}

/** The Content-Security-Policy of an HTML page whose only inline script and style elements are `inline`. */
export const contentSecurityPolicy = (inline: InlineElements = {}): string =>
  [
    "default-src 'self'",
    ["script-src 'self'", ...(inline.scripts ?? []).map(hashSource)].join(" "),
    ["style-src 'self'", ...(inline.styles ?? []).map(hashSource)].join(" "),
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; ")

/** Every header an HTML page carries for the browser's protection, its policy allowing exactly `inline`. */
export const pageSecurityHeaders = (inline: InlineElements = {}): Readonly<Record<string, string>> => ({
  "content-security-policy": contentSecurityPolicy(inline),
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin"
})

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

/**
 * Whether the configuration says the service is reached over https: PUBLIC_BASE_URL decides when set (https or
 * not), else a loopback HOST means a local run without TLS and any other a deployment behind it.
 */
export const httpsByConfig = (config: Pick<AppConfigShape, "host" | "publicBaseUrl">): boolean =>
  Option.match(config.publicBaseUrl, {
    onSome: (url) => url.toLowerCase().startsWith("https:"),
    onNone: () => !LOOPBACK_HOSTS.has(config.host.toLowerCase())
  })

/**
 * When the session cookie is `Secure` (the referral cookie always is, as SPEC says): whenever the service is reached over
 * https, by its configuration (`httpsByConfig`) or because a proxy it trusts (TRUST_PROXY, the same rule as the
 * forwarded origin in src/http/csrf.ts and the pages' canonical URLs) says so with `X-Forwarded-Proto: https`.
 */
export const cookieIsSecure = (config: Pick<AppConfigShape, "host" | "publicBaseUrl" | "trustProxy">) => {
  const byConfig = httpsByConfig(config)
  const trusted = config.trustProxy._tag !== "None"
  return (headers: Readonly<Record<string, string | undefined>>): boolean =>
    byConfig || (trusted && headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https")
}
