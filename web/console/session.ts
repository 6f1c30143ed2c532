/**
 * Who is signed in, asked of the API (`GET /v1/me`), shared by every console page: undefined while asking, null when
 * nobody is (a 401), else the identity.
 */
import { signal } from "@preact/signals"
import { call } from "./api.ts"

export type Identity = {
  readonly cf_id: string
  readonly email: string | null
  readonly display_name: string
  /** Where the session's requests act and are paid from; every page reads the account of this context. */
  readonly active_context:
    | { readonly type: "personal" }
    | { readonly type: "organization"; readonly org_id: string; readonly name: string; readonly role: "owner" | "admin" | "member" }
}

export const identity = signal<Identity | null | undefined>(undefined)

export const refreshIdentity = async () => {
  try {
    identity.value = await call((c) => c.me.me())
  } catch {
    identity.value = null
  }
}

/**
 * The active context as a key: the console's pages are keyed by it, so a switch remounts the current page and every
 * read it made is made again against the context now active.
 */
export const contextKey = (who: Identity): string =>
  who.active_context.type === "organization" ? `org:${who.active_context.org_id}` : "personal"
