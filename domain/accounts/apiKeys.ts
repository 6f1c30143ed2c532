/**
 * API keys (SPEC "API key", "Authentication"): the raw key `ct_live_<secret>` is shown once; only its SHA-256 is
 * stored, with a short prefix for the list. `allowedModels` entries are model keys as the catalog spells them
 * (`<vendor>/<model>`), at most 50 after duplicate spellings collapse. State rules live here; storage does not.
 */
import { createHash, randomBytes } from "node:crypto"
import { API_KEY_PREFIX, MAX_ALLOWED_MODELS } from "./formats.ts"

export { API_KEY_PREFIX, MAX_ALLOWED_MODELS } from "./formats.ts"
/** 256 random bits. */
const SECRET_BYTES = 32

/** Well-formed: the prefix and at least 256 bits of base64url. Anything else is refused without a lookup. */
const WELL_FORMED = /^ct_live_[A-Za-z0-9_-]{43,}$/

export const isWellFormedApiKey = (raw: string): boolean => WELL_FORMED.test(raw)

export const hashApiKey = (raw: string): string => createHash("sha256").update(raw, "utf8").digest("hex")

export interface NewApiKey {
  readonly raw: string
  readonly hash: string
  /** What the list shows: enough to recognize it, far too little to use it. */
  readonly prefix: string
}

/** A bearer secret `<prefix><256 random bits in base64url>` with its hash and list prefix: API keys and app grants. */
export const generateBearerSecret = (prefix: string): NewApiKey => {
  const raw = `${prefix}${randomBytes(SECRET_BYTES).toString("base64url")}`
  return { raw, hash: hashApiKey(raw), prefix: raw.slice(0, prefix.length + 6) }
}

export const generateApiKey = (): NewApiKey => generateBearerSecret(API_KEY_PREFIX)

/** `key_` and 16 hex characters: the id the paths use. */
export const generateApiKeyId = (): string => `key_${randomBytes(8).toString("hex")}`

export type ApiKeyStatus = "active" | "frozen" | "revoked"
/** Who froze a key: its owner may lift their own freeze, never an administrator's. */
export type FrozenBy = "owner" | "admin"

export type KeyTransition =
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Revoked" }
  | { readonly _tag: "FrozenByAdmin" }
  | { readonly _tag: "NotFrozen" }

/** Editing (label, caps, allowed models) and freezing: anything but a revoked key. */
export const canChange = (status: ApiKeyStatus): KeyTransition => (status === "revoked" ? { _tag: "Revoked" } : { _tag: "Allowed" })

/** Reactivation by the owner: only a key the owner froze. */
export const canReactivate = (status: ApiKeyStatus, frozenBy: FrozenBy | null): KeyTransition =>
  status === "revoked"
    ? { _tag: "Revoked" }
    : status !== "frozen"
      ? { _tag: "NotFrozen" }
      : frozenBy === "admin"
        ? { _tag: "FrozenByAdmin" }
        : { _tag: "Allowed" }

export type ModelLookup =
  | { readonly _tag: "Found"; readonly value: string }
  | { readonly _tag: "Invalid"; readonly message: string }
  | { readonly _tag: "NotFound"; readonly message: string }

export interface AllowedModelsProblem {
  readonly index: number
  readonly message: string
}

/**
 * The stored form of an `allowedModels` list: each entry resolved to its catalog key (bare or prefixed, any case),
 * duplicates collapsed in first-seen order. Every entry that names no model is reported; more than 50 distinct models
 * is one problem on the list itself (index -1).
 */
export const normalizeAllowedModels = (
  entries: ReadonlyArray<string>,
  lookup: (name: string) => ModelLookup
): { readonly models: ReadonlyArray<string>; readonly problems: ReadonlyArray<AllowedModelsProblem> } => {
  const models: Array<string> = []
  const problems: Array<AllowedModelsProblem> = []
  entries.forEach((entry, index) => {
    const found = lookup(entry)
    if (found._tag !== "Found") problems.push({ index, message: `"${entry}": ${found.message}` })
    else if (!models.includes(found.value)) models.push(found.value)
  })
  if (models.length > MAX_ALLOWED_MODELS) {
    problems.push({ index: -1, message: `at most ${MAX_ALLOWED_MODELS} models, got ${models.length} distinct ones` })
  }
  return { models, problems }
}
