/**
 * Identity fields (SPEC "Identity record", DESIGN section 11): the public CF ID, the referral code, the default
 * display name, and the normal form of e-mail and wallet addresses. Random bytes come from the caller.
 */

import { Schema } from "effect"
import { APP_GRANT_ID_PATTERN } from "./appGrantRules.ts"
import { POOL_ID_PATTERN } from "./formats.ts"

/** RFC 4648 base32, lower-case: no 0/1/8/9, so ids read aloud or copied by hand do not mix up O/0 or I/1. */
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"

export const CF_ID_PREFIX = "cf_"
export const REFERRAL_CODE_PREFIX = "cf_ref_"
export const CF_ID_PATTERN = /^cf_[a-z2-7]{12}$/
export const REFERRAL_CODE_PATTERN = /^cf_ref_[a-z2-7]{8}$/

/** Bytes needed for `length` base32 characters (5 bits each). */
export const bytesFor = (length: number): number => Math.ceil((length * 5) / 8)

/** The first `length` base32 characters of `bytes` (which must hold at least `bytesFor(length)` bytes). */
export const base32 = (bytes: Uint8Array, length: number): string => {
  if (bytes.length < bytesFor(length)) throw new Error(`base32: ${length} characters need ${bytesFor(length)} bytes`)
  let out = ""
  let buffer = 0
  let bits = 0
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte
    bits += 8
    while (bits >= 5 && out.length < length) {
      out += BASE32[(buffer >>> (bits - 5)) & 31]
      bits -= 5
    }
    buffer &= (1 << bits) - 1
    if (out.length === length) break
  }
  return out
}

export const CF_ID_RANDOM_BYTES = bytesFor(12)
export const REFERRAL_CODE_RANDOM_BYTES = bytesFor(8)

/** `cf_` + 12 base32 characters (60 random bits). */
export const cfIdFrom = (random: Uint8Array): string => CF_ID_PREFIX + base32(random, 12)

/** `cf_ref_` + 8 base32 characters (40 random bits). */
export const referralCodeFrom = (random: Uint8Array): string => REFERRAL_CODE_PREFIX + base32(random, 8)

export const ORGANIZATION_ID_PREFIX = "org_"
export const ORGANIZATION_ID_RANDOM_BYTES = bytesFor(12)
export const ORGANIZATION_ID_PATTERN = /^org_[a-z2-7]{12}$/

/** `org_` + 12 base32 characters (60 random bits): the public id of an organization. */
export const organizationIdFrom = (random: Uint8Array): string => ORGANIZATION_ID_PREFIX + base32(random, 12)

/** E-mail addresses are compared and stored trimmed and lower-case: one CF ID per mailbox however it is typed. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

/**
 * What the API accepts as an e-mail address: one `@`, a dotted domain, no spaces, at most 254 characters (RFC 5321's
 * path limit). Deliverability is proven by the code, not by the pattern.
 */
export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/
export const MAX_EMAIL_LENGTH = 254

export const WALLET_PATTERN = /^0x[0-9a-fA-F]{40}$/

/** Wallet addresses are stored and compared lower-case. */
export const normalizeWallet = (address: string): string => address.toLowerCase()

/** `alice@example.com` -> `al***@example.com`; a one- or two-letter name keeps only its first letter. */
export const maskEmail = (email: string): string => {
  const at = email.lastIndexOf("@")
  const local = email.slice(0, at)
  const visible = local.length <= 2 ? 1 : 2
  return `${local.slice(0, visible)}***${email.slice(at)}`
}

/** `0x12ab34...ef90` -> `0x12ab...ef90`. */
export const shortWallet = (address: string): string => `${address.slice(0, 6)}...${address.slice(-4)}`

/** The display name an identity starts with: its masked e-mail, else its short wallet. */
export const defaultDisplayName = (identity: { readonly email: string | null; readonly walletAddress: string | null }): string => {
  if (identity.email !== null) return maskEmail(identity.email)
  if (identity.walletAddress !== null) return shortWallet(identity.walletAddress)
  throw new Error("an identity has an e-mail or a wallet")
}

export const MAX_DISPLAY_NAME_LENGTH = 64

/**
 * The ids the API names things by, as branded Schemas: a value of one of these types was checked against its pattern
 * (decoded from a request or a row, or made by `.make`), so an organization's id cannot be passed where a CF ID is
 * expected. The JSON Schema of each is a string with its pattern.
 */
const idSchema = <const B extends string>(brand: B, pattern: RegExp, description: string) =>
  Schema.String.pipe(Schema.pattern(pattern), Schema.brand(brand)).annotations({ description })

export const CfId = idSchema("CfId", CF_ID_PATTERN, "A CF ID: cf_ and 12 base32 characters")
export type CfId = typeof CfId.Type

export const OrgId = idSchema("OrgId", ORGANIZATION_ID_PATTERN, "An organization's id: org_ and 12 base32 characters")
export type OrgId = typeof OrgId.Type

export const KEY_ID_PATTERN = /^key_[0-9a-f]{16}$/
export const KeyId = idSchema("KeyId", KEY_ID_PATTERN, "The key's id (`key_` and 16 hex digits)")
export type KeyId = typeof KeyId.Type

export const GrantId = idSchema("GrantId", APP_GRANT_ID_PATTERN, "The grant's id (`app_` and 16 hex digits)")
export type GrantId = typeof GrantId.Type

export const PoolId = idSchema("PoolId", POOL_ID_PATTERN, "A spending pool's id: pool_ and 16 hex characters")
export type PoolId = typeof PoolId.Type

export const INVITATION_ID_PATTERN = /^inv_[0-9a-f]{16}$/
export const InvitationId = idSchema("InvitationId", INVITATION_ID_PATTERN, "An invitation's id (`inv_` and 16 hex digits)")
export type InvitationId = typeof InvitationId.Type

/** A request's id, which its bill and its log entry carry: `gen_` and 24 hex digits. */
export const REQUEST_ID_PATTERN = /^gen_[0-9a-f]{24}$/
export const RequestId = idSchema("RequestId", REQUEST_ID_PATTERN, "The request's id (`gen_` and 24 hex digits)")
export type RequestId = typeof RequestId.Type
