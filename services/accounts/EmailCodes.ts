/**
 * One-time e-mail codes (DESIGN section 11): issued and mailed within the per-address and per-IP limits, verified
 * against the latest code of the address with at most 5 attempts, consumed once. Only an HMAC of each code is stored.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Redacted, Schema } from "effect"
import { randomBytes, randomInt } from "node:crypto"
import {
  CODE_LIFETIME_MS,
  type CodePurpose,
  codeFrom,
  hashCode,
  MAX_CODE_ATTEMPTS,
  sameDigest
} from "../../domain/accounts/emailCode.ts"
import { CODES_PER_ADDRESS, CODES_PER_IP, type CountPolicy, retryAfterSeconds, SIGNUPS_PER_IP } from "../../domain/accounts/policies.ts"
import { RateLimited, type ServiceUnavailable, Unauthorized } from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Mailer } from "./Mailer.ts"
import { recordRateLimitRefusal } from "../platform/metrics.ts"

export interface CodeRequest {
  readonly email: string
  readonly purpose: CodePurpose
  /** The identity adding the address (purpose `add_email`). */
  readonly cfId?: string
  readonly clientIp: string | undefined
}

const CodeRow = Schema.Struct({
  id: Schema.String,
  codeHash: Schema.String,
  attempts: Schema.Int,
  live: Schema.Boolean
})

const CountRow = Schema.Struct({ n: Schema.Int, oldest: Schema.NullOr(Schema.DateFromSelf) })

const wrongCode = (attemptsRemaining: number, message: string) =>
  new Unauthorized({ message, param: "code", details: { attemptsRemaining } })

export class EmailCodes extends Effect.Service<EmailCodes>()("EmailCodes", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer
    const appConfig = yield* AppConfig
    const config = appConfig.identity
    // Without a configured pepper, one per process: codes then do not survive a restart (local runs only). Kept out of
    // the database on purpose: a pepper stored beside the hashes it guards would not slow a guess at a leaked one.
    const pepper = Option.match(config.codePepper, { onSome: Redacted.value, onNone: () => randomBytes(32).toString("hex") })
    if (Option.isNone(config.codePepper) && Option.isSome(appConfig.database.url)) {
      // A shared database usually means replicas: each would draw its own pepper and refuse the others' codes.
      yield* Effect.logWarning(
        "AUTH_CODE_PEPPER is not set: this process drew its own, so a sign-in code sent by another replica (or before a restart) will not verify here; set the same AUTH_CODE_PEPPER on every replica"
      )
    }

    if (!appConfig.rateLimit.enabled) {
      // These limits are abuse protection (a mailbox bombed, codes guessed across many requests), not load shaping:
      // RATE_LIMIT_ENABLED does not switch them off, and says so where it is set.
      yield* Effect.logInfo(
        `RATE_LIMIT_ENABLED=false switches off the oracle and inference request rates only; the sign-in limits still apply: at most ${CODES_PER_ADDRESS.limit} e-mail codes per address and ${CODES_PER_IP.limit} per client address per hour, ${SIGNUPS_PER_IP.limit} CF IDs per client address per 24 hours`
      )
    }

    const count = (policy: CountPolicy, where: "email" | "ip", value: string, now: Date) =>
      SqlSchema.single({
        Request: Schema.String,
        Result: CountRow,
        execute: (v) => sql`
          SELECT count(*)::int AS n, min(created_at) AS oldest FROM email_codes
          WHERE ${where === "email" ? sql`email` : sql`requested_ip`} = ${v}
            AND created_at > ${new Date(now.getTime() - policy.windowMs)}`
      })(value).pipe(orDieAtRepository)

    const enforce = (policy: CountPolicy, where: "email" | "ip", value: string, message: string, now: Date) =>
      Effect.flatMap(count(policy, where, value, now), (counted) => {
        if (counted.n < policy.limit) return Effect.void
        const retryAfter = retryAfterSeconds(policy, counted.oldest ?? now, now)
        recordRateLimitRefusal("email_code")
        return Effect.fail(new RateLimited({ message: `${message}; retry in ${retryAfter} s.`, details: { retryAfterSeconds: retryAfter } }))
      })

    /** Draws a code, stores its HMAC and mails it. A code that could not be mailed is withdrawn (and not counted). */
    const issue = Effect.fn("EmailCodes.issue")(function* (request: CodeRequest): Effect.fn.Return<{ readonly expiresAt: Date }, RateLimited | ServiceUnavailable> {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* enforce(CODES_PER_ADDRESS, "email", request.email, `At most ${CODES_PER_ADDRESS.limit} codes per hour are sent to one address`, now)
      if (request.clientIp !== undefined) {
        yield* enforce(CODES_PER_IP, "ip", request.clientIp, `At most ${CODES_PER_IP.limit} codes per hour can be requested from one address`, now)
      }
      const code = codeFrom(randomInt(0, 1_000_000))
      const stored = yield* SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ id: Schema.String, expiresAt: Schema.DateFromSelf }),
        execute: () => sql`
          INSERT INTO email_codes (email, purpose, cf_id, code_hash, requested_ip, created_at, expires_at)
          VALUES (${request.email}, ${request.purpose}, ${request.cfId ?? null},
                  ${hashCode(pepper, { email: request.email, purpose: request.purpose, code })}, ${request.clientIp ?? null},
                  ${now}, ${new Date(now.getTime() + CODE_LIFETIME_MS)})
          RETURNING id::text AS id, expires_at`
      })(undefined).pipe(orDieAtRepository)
      yield* mailer.sendCode(request.email, code, request.purpose).pipe(
        Effect.tapError(() => sql`DELETE FROM email_codes WHERE id = ${stored.id}`.pipe(orDieAtRepository))
      )
      return { expiresAt: stored.expiresAt }
    })

    /**
     * Checks `code` against the address's latest code, counting the attempt whatever its outcome. On success,
     * answers the statement that consumes the code: run it in the transaction that acts on the proof, so a
     * refused action leaves the code usable and two verifications of one code cannot both act.
     */
    const check = Effect.fn("EmailCodes.check")(function* (
      request: Omit<CodeRequest, "clientIp">,
      code: string
    ): Effect.fn.Return<Effect.Effect<void, Unauthorized>, Unauthorized> {
      const now = new Date(yield* Clock.currentTimeMillis)
      const latest = yield* SqlSchema.findOne({
        Request: Schema.Void,
        Result: CodeRow,
        execute: () => sql`
          SELECT id::text AS id, code_hash, attempts, (consumed_at IS NULL AND expires_at > ${now}) AS live
          FROM email_codes
          WHERE email = ${request.email} AND purpose = ${request.purpose}
            ${request.cfId === undefined ? sql`` : sql`AND cf_id = ${request.cfId}`}
          ORDER BY created_at DESC, id DESC LIMIT 1`
      })(undefined).pipe(orDieAtRepository)
      if (Option.isNone(latest) || !latest.value.live) {
        return yield* wrongCode(0, "No valid code for this address: it expired or was used. Request a new one.")
      }
      // The attempt is counted on its own (not in a transaction a failure would roll back).
      const counted = yield* SqlSchema.findOne({
        Request: Schema.String,
        Result: Schema.Struct({ attempts: Schema.Int }),
        execute: (id) => sql`
          UPDATE email_codes SET attempts = attempts + 1
          WHERE id = ${id} AND attempts < ${MAX_CODE_ATTEMPTS} AND consumed_at IS NULL RETURNING attempts`
      })(latest.value.id).pipe(orDieAtRepository)
      if (Option.isNone(counted)) {
        return yield* wrongCode(0, `This code was tried ${MAX_CODE_ATTEMPTS} times. Request a new one.`)
      }
      const expected = hashCode(pepper, { email: request.email, purpose: request.purpose, code })
      if (!sameDigest(expected, latest.value.codeHash)) {
        const remaining = MAX_CODE_ATTEMPTS - counted.value.attempts
        return yield* wrongCode(
          remaining,
          remaining > 0 ? `Wrong code; ${remaining} attempt${remaining === 1 ? "" : "s"} left.` : "Wrong code, and no attempts left. Request a new one."
        )
      }
      const id = latest.value.id
      return sql`UPDATE email_codes SET consumed_at = ${now} WHERE id = ${id} AND consumed_at IS NULL RETURNING id`.pipe(
        orDieAtRepository,
        Effect.flatMap((rows) =>
          rows.length === 1 ? Effect.void : Effect.fail(wrongCode(0, "This code was used meanwhile. Request a new one."))
        )
      )
    })

    return { issue, check } as const
  })
}) {}
