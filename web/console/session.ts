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
}

export const identity = signal<Identity | null | undefined>(undefined)

export const refreshIdentity = async () => {
  try {
    identity.value = await call((c) => c.me.me())
  } catch {
    identity.value = null
  }
}
