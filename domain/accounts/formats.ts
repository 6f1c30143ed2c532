/**
 * The account formats the HTTP API's definitions check, apart from the rules that need a server's crypto: the API
 * modules are shared with the browser (the console), so they import from here, never from the crypto modules.
 */

/** API keys (SPEC "API key"): `ct_live_<secret>`; at most this many `allowedModels`. */
export const API_KEY_PREFIX = "ct_live_"
export const MAX_ALLOWED_MODELS = 50

/** One-time e-mail codes (DESIGN section 11): 6 digits, valid 10 minutes, 5 attempts. */
export const CODE_DIGITS = 6
export const CODE_PATTERN = /^[0-9]{6}$/
export const CODE_LIFETIME_MS = 10 * 60_000
export const MAX_CODE_ATTEMPTS = 5

/** Invitations (SPEC "Organization and invitation"): the one-time token an invitation's link carries. */
export const INVITATION_TOKEN_PATTERN = /^cfi_[A-Za-z0-9_-]{43}$/

/** Spending pools: `pool_` and 16 hex characters; a name of at most this many characters. */
export const POOL_ID_PATTERN = /^pool_[0-9a-f]{16}$/
export const MAX_POOL_NAME_LENGTH = 100
