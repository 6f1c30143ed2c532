/**
 * App grant tokens (SPEC "App grant"): a connected app holds a token `cfa_live_<secret>`, shown once; only its SHA-256
 * is stored (hashed as API keys are), with a short prefix for the list. This module needs the server's crypto; the
 * formats, scopes and state rules that the API definitions and the console share are in appGrantRules.ts.
 */
import { randomBytes } from "node:crypto"
import { APP_GRANT_PREFIX } from "./appGrantRules.ts"
import { generateBearerSecret, hashApiKey } from "./apiKeys.ts"

export const hashAppGrant = hashApiKey

/** 256 random bits after the prefix, as for API keys; the list shows the prefix and six characters. */
export const generateAppGrantToken = () => generateBearerSecret(APP_GRANT_PREFIX)

/** `app_` and 16 hex characters (APP_GRANT_ID_PATTERN): the id the paths use. */
export const generateAppGrantId = (): string => `app_${randomBytes(8).toString("hex")}`
