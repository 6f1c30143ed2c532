/**
 * Wallet-signed requests (SPEC "Authentication" 7, DESIGN section 11), accepted wherever a session is. In order:
 * malformed headers -> `invalid_signature`; outside the 5-minute window -> `unauthorized`; a signature that does not
 * recover to X-CF-Address -> `forbidden` when it recovers to another identity's wallet, else `invalid_signature`; a
 * wallet with no CF ID -> `unauthorized`; a nonce seen before -> `signature_reused`, decided by the primary key
 * (address, nonce), so of two copies arriving at once exactly one gets through.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { recoverMessageAddress } from "viem"
import {
  canonicalMessage,
  isFresh,
  parseSignedRequestHeaders,
  sha256Hex,
  SIGNED_REQUEST_WINDOW_SECONDS
} from "../../domain/accounts/signedRequest.ts"
import { Forbidden, InvalidSignature, SignatureReused, Unauthorized } from "../../domain/errors.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Identities } from "./Identity.ts"
import type { SessionIdentity } from "./Sessions.ts"

export interface SignedRequest {
  readonly method: string
  /** The request target as sent: path and query. */
  readonly pathWithQuery: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array
}

export type SignedRequestFailure = Unauthorized | Forbidden | InvalidSignature | SignatureReused

/**
 * A nonce must be remembered while a request carrying it could still be fresh: its timestamp may be up to the window
 * ahead of the clock and is accepted until the window after it, so twice the window, plus a margin.
 */
const NONCE_MEMORY_MS = (2 * SIGNED_REQUEST_WINDOW_SECONDS + 60) * 1000

export class SignedRequests extends Effect.Service<SignedRequests>()("SignedRequests", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const identities = yield* Identities

    const recover = (message: string, signature: `0x${string}`) =>
      Effect.tryPromise(() => recoverMessageAddress({ message, signature })).pipe(
        Effect.map((address) => address.toLowerCase()),
        Effect.orElseFail(() => new InvalidSignature({ message: "X-CF-Signature does not recover to a signer." }))
      )

    const consumeNonce = (address: string, nonce: string, timestamp: number) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* sql`DELETE FROM signed_request_nonces WHERE address = ${address} AND signed_at < ${new Date(now - NONCE_MEMORY_MS)}`
        const inserted = yield* sql`
          INSERT INTO signed_request_nonces (address, nonce, signed_at)
          VALUES (${address}, ${nonce}, to_timestamp(${timestamp}))
          ON CONFLICT DO NOTHING RETURNING nonce`
        if (inserted.length === 0) {
          return yield* new SignatureReused({ message: "This X-CF-Nonce was already used by this address; sign the request again with a new one." })
        }
      }).pipe(orDieAtRepository)

    const authenticate = (request: SignedRequest): Effect.Effect<SessionIdentity, SignedRequestFailure> =>
      Effect.gen(function* () {
        const parsed = parseSignedRequestHeaders(request.headers)
        if (!parsed.ok) return yield* new InvalidSignature({ message: parsed.reason })
        const { address, nonce, signature, timestamp } = parsed.value
        if (!isFresh(timestamp, yield* Clock.currentTimeMillis)) {
          return yield* new Unauthorized({
            message: `X-CF-Timestamp is more than ${SIGNED_REQUEST_WINDOW_SECONDS / 60} minutes away from the server's clock.`
          })
        }
        const message = canonicalMessage({
          method: request.method,
          pathWithQuery: request.pathWithQuery,
          timestamp,
          nonce,
          bodySha256: sha256Hex(request.body)
        })
        const signer = yield* recover(message, signature)
        if (signer !== address) {
          // A real wallet of ours signing for another address is a known party overstepping; anything else (a tampered
          // request recovers to a random address) is simply not a valid signature.
          const known = yield* identities.byWallet(signer)
          return yield* Option.isSome(known)
            ? new Forbidden({ message: "The request is signed by another wallet than X-CF-Address." })
            : new InvalidSignature({ message: "X-CF-Signature does not recover to X-CF-Address (a changed method, target, body or header?)." })
        }
        const identity = yield* identities.byWallet(address)
        if (Option.isNone(identity)) {
          return yield* new Unauthorized({ message: "No CF ID has this wallet: sign in with it first (SIWE)." })
        }
        yield* consumeNonce(address, nonce, timestamp)
        const { organization } = identity.value
        return {
          cfId: identity.value.cfId,
          accountId: organization?.accountId ?? identity.value.accountId,
          personalAccountId: identity.value.accountId,
          walletAddress: identity.value.walletAddress,
          organization: organization === null ? null : { id: organization.id, role: organization.role }
        }
      })

    return { authenticate } as const
  })
}) {}
