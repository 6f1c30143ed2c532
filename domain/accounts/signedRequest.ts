/**
 * Wallet-signed requests (SPEC "Authentication" 7, DESIGN section 11): the canonical text a wallet signs with
 * EIP-191 `personal_sign`, and the checks that need no I/O (header shapes, freshness).
 */
import { createHash } from "node:crypto"

export const SIGNED_REQUEST_PREFIX = "CF-SIGNED-REQUEST"
/** SPEC "Limits": signed-request freshness. */
export const SIGNED_REQUEST_WINDOW_SECONDS = 5 * 60

export const SIGNED_REQUEST_HEADERS = {
  address: "x-cf-address",
  timestamp: "x-cf-timestamp",
  nonce: "x-cf-nonce",
  signature: "x-cf-signature"
} as const

export const NONCE_PATTERN = /^[A-Za-z0-9_-]{8,128}$/
const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/
const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/
/** 65 bytes: r, s, v. */
const SIGNATURE_PATTERN = /^0x[0-9a-fA-F]{130}$/

export interface SignedRequestHeaders {
  /** Lower-case. */
  readonly address: string
  readonly timestamp: number
  readonly nonce: string
  readonly signature: `0x${string}`
}

export const sha256Hex = (body: Uint8Array): string => createHash("sha256").update(body).digest("hex")

/** `CF-SIGNED-REQUEST\n{METHOD}\n{path with query}\n{timestamp}\n{nonce}\n{sha256 hex of body}`. */
export const canonicalMessage = (input: {
  readonly method: string
  readonly pathWithQuery: string
  readonly timestamp: number
  readonly nonce: string
  readonly bodySha256: string
}): string =>
  [SIGNED_REQUEST_PREFIX, input.method.toUpperCase(), input.pathWithQuery, String(input.timestamp), input.nonce, input.bodySha256].join("\n")

/** Whether any of the four headers was sent: then the request means to be signed, and is judged as such. */
export const carriesSignature = (headers: Readonly<Record<string, string | undefined>>): boolean =>
  Object.values(SIGNED_REQUEST_HEADERS).some((name) => headers[name] !== undefined)

/** The four headers, or the reason they are malformed. */
export const parseSignedRequestHeaders = (
  headers: Readonly<Record<string, string | undefined>>
): { readonly ok: true; readonly value: SignedRequestHeaders } | { readonly ok: false; readonly reason: string } => {
  const address = headers[SIGNED_REQUEST_HEADERS.address]?.trim()
  const timestamp = headers[SIGNED_REQUEST_HEADERS.timestamp]?.trim()
  const nonce = headers[SIGNED_REQUEST_HEADERS.nonce]?.trim()
  const signature = headers[SIGNED_REQUEST_HEADERS.signature]?.trim()
  if (address === undefined || timestamp === undefined || nonce === undefined || signature === undefined) {
    return { ok: false, reason: "A signed request carries X-CF-Address, X-CF-Timestamp, X-CF-Nonce and X-CF-Signature." }
  }
  if (!ADDRESS_PATTERN.test(address)) return { ok: false, reason: "X-CF-Address is not a 0x-prefixed 20-byte address." }
  if (!TIMESTAMP_PATTERN.test(timestamp)) return { ok: false, reason: "X-CF-Timestamp is not a Unix time in seconds." }
  if (!NONCE_PATTERN.test(nonce)) return { ok: false, reason: "X-CF-Nonce must be 8-128 characters of A-Z, a-z, 0-9, _ and -." }
  if (!SIGNATURE_PATTERN.test(signature)) return { ok: false, reason: "X-CF-Signature is not a 65-byte hex signature." }
  return {
    ok: true,
    value: { address: address.toLowerCase(), timestamp: Number(timestamp), nonce, signature: signature as `0x${string}` }
  }
}

/** Within the freshness window on either side of now (a client clock slightly ahead is tolerated the same). */
export const isFresh = (timestampSeconds: number, nowMs: number): boolean =>
  Math.abs(nowMs / 1000 - timestampSeconds) <= SIGNED_REQUEST_WINDOW_SECONDS
