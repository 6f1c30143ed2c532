/**
 * Helpers of the points and referral suites: identities and sessions written straight into the database (so a test
 * controls what the ledger already holds, back-dated entries included), and a sign-in that carries a cookie.
 */
import { createHash, randomBytes } from "node:crypto"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { type makeClient, siweSignature } from "./accounts.ts"
import { queryDatabase, type TestDatabase } from "./database.ts"

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
const base32 = (length: number) => Array.from(randomBytes(length), (byte) => BASE32[byte % 32]).join("")

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** The UTC day `offset` days from `day` (YYYY-MM-DD). */
export const dayFrom = (day: string, offset: number) => new Date(Date.parse(`${day}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10)

export interface StoredIdentity {
  readonly cfId: string
  readonly referralCode: string
  readonly wallet: PrivateKeyAccount
  /** `cf_session=...` of a session written directly: using it signs nobody in, so it earns no login points. */
  readonly cookie: string
}

/** A wallet identity with its personal account and a live session, made without signing in (no points yet). */
export const storeIdentity = async (database: TestDatabase, options: { readonly displayName?: string; readonly createdAt?: string } = {}): Promise<StoredIdentity> => {
  const wallet = privateKeyToAccount(generatePrivateKey())
  const cfId = `cf_${base32(12)}`
  const referralCode = `cf_ref_${base32(8)}`
  await queryDatabase(
    database,
    `INSERT INTO identities (cf_id, wallet_address, display_name, referral_code, created_at) VALUES ($1, $2, $3, $4, COALESCE($5::timestamptz, now()))`,
    [cfId, wallet.address.toLowerCase(), options.displayName ?? cfId, referralCode, options.createdAt ?? null]
  )
  await queryDatabase(database, `INSERT INTO accounts (owner_cf_id, kind) VALUES ($1, 'personal')`, [cfId])
  const token = randomBytes(32).toString("base64url")
  await queryDatabase(
    database,
    `INSERT INTO sessions (token_hash, cf_id, method, expires_at) VALUES ($1, $2, 'siwe', now() + interval '1 day')`,
    [sha256(token), cfId]
  )
  return { cfId, referralCode, wallet, cookie: `cf_session=${token}` }
}

/** Ledger entries as if earned earlier: `daily_login` on each of `days` (the trigger allows inserts). */
export const storeLogins = async (database: TestDatabase, cfId: string, days: ReadonlyArray<string>) => {
  for (const day of days) {
    await queryDatabase(
      database,
      `INSERT INTO points_ledger (cf_id, type, amount, source, day, created_at)
       VALUES ($1, 'daily_login', 10, 'daily_login:' || $2, $2::date, $2::date + time '12:00')`,
      [cfId, day]
    )
  }
}

/** The identity's ledger entries as (type, amount, source), oldest first. */
export const ledgerOf = (database: TestDatabase, cfId: string) =>
  queryDatabase(database, `SELECT type, amount, source FROM points_ledger WHERE cf_id = $1 ORDER BY seq`, [cfId])

/** A SIWE sign-in of `wallet` from `ip`, sending `cookie` (e.g. `cf_ref=...`) when given. */
export const siweSignIn = async (client: ReturnType<typeof makeClient>, wallet: PrivateKeyAccount, ip: string, cookie?: string) => {
  const signed = await siweSignature(client, wallet, { ip })
  return client.call(
    "POST",
    "/v1/auth/siwe/verify",
    { message: signed.message, signature: signed.signature },
    { ip, ...(cookie === undefined ? {} : { cookie }) }
  )
}
