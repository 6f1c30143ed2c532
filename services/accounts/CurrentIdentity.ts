/**
 * Who is calling, once: the signed-in identity an account operation acts for, in the context of the request. The
 * authentication middlewares provide it (a session cookie or a wallet-signed request, src/api/SessionAuth.ts); the
 * services that act for someone read it from the context instead of taking a `cfId` argument, so no handler can pass
 * the wrong one, and another Effect program embedding them provides it with `Effect.provideService`.
 *
 * Credentials (an API key or an app grant) are the other way in: they act on an account, not as a person with a
 * role, and are `CurrentCredential`. A read open to both ways in gets
 * `CurrentReader`: just the account it may see.
 */
import { Context, Effect } from "effect"
import type { Role } from "../../domain/accounts/roles.ts"
import type { Credential } from "../../domain/accounts/credential.ts"

export interface CurrentIdentityShape {
  readonly cfId: string
  /**
   * `accounts.id` (a bigint, as its decimal text) of the account requests act on and are paid from: the active
   * organization's, else the personal one.
   */
  readonly accountId: string
  /** The identity's own account: funding and withdrawals always act on it. */
  readonly personalAccountId: string
  /** Lower-case, or null for an identity without a wallet. */
  readonly walletAddress: string | null
  /** The active organization and the identity's role there; null in the personal context. */
  readonly organization: { readonly id: string; readonly role: Role } | null
  readonly via: "session" | "signed"
}

/**
 * Whose records a read may see, for the reads that take either way in (the request log and activity): a credential's
 * account, or the active context's account of a session or a signed request.
 */
export interface CurrentReaderShape {
  /** `accounts.id` as decimal text. */
  readonly accountId: string
  readonly via: "credential" | "session" | "signed"
}

export class CurrentReader extends Context.Tag("CurrentReader")<CurrentReader, CurrentReaderShape>() {}

/** The credential an inference, usage or account-tool request authenticated with (src/api/ApiKeyAuth.ts provides it). */
export class CurrentCredential extends Context.Tag("CurrentCredential")<CurrentCredential, Credential>() {}

export class CurrentIdentity extends Context.Tag("CurrentIdentity")<CurrentIdentity, CurrentIdentityShape>() {}

/** The calling identity's CF ID. */
export const currentCfId: Effect.Effect<string, never, CurrentIdentity> = Effect.map(CurrentIdentity, (identity) => identity.cfId)

/**
 * Runs `effect` as `identity` in its personal context (`accountId` is its personal account): how another Effect program
 * or a test calls a service that acts for someone without going through sign-in.
 */
export const actingAs =
  (identity: { readonly cfId: string; readonly accountId: string; readonly walletAddress?: string | null }) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, CurrentIdentity>> =>
    Effect.provideService(effect, CurrentIdentity, {
      cfId: identity.cfId,
      accountId: identity.accountId,
      personalAccountId: identity.accountId,
      walletAddress: identity.walletAddress ?? null,
      organization: null,
      via: "session"
    })
