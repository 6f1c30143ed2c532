/**
 * Sign-in with Ethereum (EIP-4361, DESIGN section 11) through viem's `siwe` utilities: a server nonce (one use, 10
 * minutes), a message for this service's domain and chain, an EOA signature. Smart-contract wallets (ERC-1271/6492)
 * would need a chain call per sign-in and are not accepted.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { createClient, custom } from "viem"
import { generateSiweNonce, parseSiweMessage, verifySiweMessage } from "viem/siwe"
import { SIWE_NONCE_LIFETIME_MS } from "../../domain/accounts/policies.ts"
import { InvalidSignature, SignatureReused, Unauthorized, ValidationFailed } from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

/** A client that refuses every RPC call: signatures are checked by recovery alone (EOAs). */
const offline = createClient({
  transport: custom({
    request: () => Promise.reject(new Error("SIWE verification is offline: only EOA signatures are accepted"))
  }, { retryCount: 0 })
})

const SIGNATURE_PATTERN = /^0x[0-9a-fA-F]{130}$/

export interface VerifiedSiwe {
  /** Lower-case. */
  readonly address: string
  readonly nonce: string
}

const refused = (message: string) => new ValidationFailed({ message, param: "message" })

export class Siwe extends Effect.Service<Siwe>()("Siwe", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const chainId = (yield* AppConfig).chain.chainId

    const issueNonce = (clientIp: string | undefined) =>
      Effect.gen(function* () {
        const nonce = generateSiweNonce()
        const now = yield* Clock.currentTimeMillis
        // Unclaimed nonces are dropped an hour after they expired, by the next request for one.
        yield* sql`DELETE FROM siwe_nonces WHERE expires_at < ${new Date(now - 3_600_000)}`
        const stored = yield* SqlSchema.single({
          Request: Schema.Void,
          Result: Schema.Struct({ expiresAt: Schema.DateFromSelf }),
          execute: () => sql`
            INSERT INTO siwe_nonces (nonce, requested_ip, expires_at)
            VALUES (${nonce}, ${clientIp ?? null}, ${new Date(now + SIWE_NONCE_LIFETIME_MS)})
            RETURNING expires_at`
        })(undefined)
        return { nonce, chainId, expiresAt: stored.expiresAt }
      }).pipe(orDieAtRepository)

    /**
     * Checks a signed sign-in message for `domain`. Answers the signer and the nonce to consume (with `consumeNonce`,
     * in the transaction that signs in, so that only one use of a nonce ever signs in).
     */
    const verify = (input: { readonly message: string; readonly signature: string; readonly domain: string }) =>
      Effect.gen(function* () {
        const parsed = parseSiweMessage(input.message)
        const { address, domain, nonce, uri, version } = parsed
        if (address === undefined || domain === undefined || nonce === undefined || uri === undefined || version !== "1" || parsed.chainId === undefined) {
          return yield* refused("message is not an EIP-4361 sign-in message (domain, address, URI, version 1, chain ID and nonce are required).")
        }
        if (parsed.chainId !== chainId) return yield* refused(`Sign-in messages are for chain ${chainId}, not ${parsed.chainId}.`)
        if (domain !== input.domain) {
          return yield* new Unauthorized({ message: `The message is for ${domain}, not for this service (${input.domain}).` })
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        if (!messageIsCurrent(parsed, now)) {
          return yield* new Unauthorized({ message: "The message has expired or is not valid yet." })
        }
        if (!SIGNATURE_PATTERN.test(input.signature)) {
          return yield* new InvalidSignature({ message: "signature is not a 65-byte hex signature.", param: "signature" })
        }
        const valid = yield* Effect.tryPromise(() =>
          verifySiweMessage(offline, {
            message: input.message,
            signature: input.signature as `0x${string}`,
            domain: input.domain,
            time: now,
            // Recovery first; the offline client makes any on-chain fallback fail, which counts as invalid.
            ...({ mode: "eoa" } as object)
          })
        ).pipe(Effect.orElseSucceed(() => false))
        if (!valid) {
          return yield* new InvalidSignature({ message: "The signature does not recover to the message's address.", param: "signature" })
        }
        return { address: address.toLowerCase(), nonce } satisfies VerifiedSiwe
      })

    /** Uses a nonce up; one issued by us, unexpired and unused, or the sign-in is refused. */
    const consumeNonce = (nonce: string): Effect.Effect<void, Unauthorized | SignatureReused> =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const consumed = yield* sql`
          UPDATE siwe_nonces SET consumed_at = ${now}
          WHERE nonce = ${nonce} AND consumed_at IS NULL AND expires_at > ${now} RETURNING nonce`.pipe(orDieAtRepository)
        if (consumed.length === 1) return
        const previous = yield* SqlSchema.findOne({
          Request: Schema.String,
          Result: Schema.Struct({ used: Schema.Boolean }),
          execute: (n) => sql`SELECT consumed_at IS NOT NULL AS used FROM siwe_nonces WHERE nonce = ${n}`
        })(nonce).pipe(orDieAtRepository)
        if (Option.isSome(previous) && previous.value.used) {
          return yield* new SignatureReused({ message: "This sign-in nonce was already used; ask for a new one." })
        }
        return yield* new Unauthorized({ message: "Unknown or expired sign-in nonce; ask for a new one (GET /v1/auth/siwe/nonce)." })
      })

    return { issueNonce, verify, consumeNonce } as const
  })
}) {}

const messageIsCurrent = (
  message: { readonly expirationTime?: Date | undefined; readonly notBefore?: Date | undefined },
  now: Date
): boolean =>
  (message.expirationTime === undefined || message.expirationTime > now) && (message.notBefore === undefined || message.notBefore <= now)
