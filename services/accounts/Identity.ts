/**
 * CF IDs (SPEC "Identity record"): the one place an identity is created (`createIdentity`), with its personal account,
 * its sign-up points and its referral attribution in the same transaction, and the reads and edits of an identity.
 * Every read is decoded through `IdentityRow`.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import {
  CF_ID_RANDOM_BYTES,
  cfIdFrom,
  defaultDisplayName,
  REFERRAL_CODE_RANDOM_BYTES,
  referralCodeFrom
} from "../../domain/accounts/ids.ts"
import { retryAfterSeconds, SIGNUPS_PER_IP } from "../../domain/accounts/policies.ts"
import { AlreadyExists, Conflict, RateLimited } from "../../domain/errors.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Points } from "./Points.ts"
import { Referrals } from "./Referrals.ts"
import { recordRateLimitRefusal } from "../platform/metrics.ts"

export interface Identity {
  readonly cfId: string
  readonly email: string | null
  /** Lower-case. */
  readonly walletAddress: string | null
  readonly displayName: string
  readonly referralCode: string
  readonly pointsBalance: number
  /** The personal account's id (`accounts.id`). */
  readonly accountId: string
  /** The active context: an organization it still belongs to, or null for the personal account. */
  readonly organization: ActiveOrganization | null
}

export interface ActiveOrganization {
  readonly accountId: string
  readonly id: string
  readonly name: string
  readonly role: "owner" | "admin" | "member"
}

const IdentityRow = Schema.Struct({
  cfId: Schema.String,
  email: Schema.NullOr(Schema.String),
  walletAddress: Schema.NullOr(Schema.String),
  displayName: Schema.String,
  referralCode: Schema.String,
  pointsBalance: Schema.NumberFromString,
  accountId: Schema.String,
  orgAccountId: Schema.NullOr(Schema.String),
  orgId: Schema.NullOr(Schema.String),
  orgName: Schema.NullOr(Schema.String),
  orgRole: Schema.NullOr(Schema.Literal("owner", "admin", "member"))
})

const identityOf = (row: typeof IdentityRow.Type): Identity => ({
  cfId: row.cfId,
  email: row.email,
  walletAddress: row.walletAddress,
  displayName: row.displayName,
  referralCode: row.referralCode,
  pointsBalance: row.pointsBalance,
  accountId: row.accountId,
  organization:
    row.orgAccountId === null || row.orgId === null || row.orgName === null || row.orgRole === null
      ? null
      : { accountId: row.orgAccountId, id: row.orgId, name: row.orgName, role: row.orgRole }
})

export interface NewIdentity {
  readonly email?: string
  readonly walletAddress?: string
  /** Counted against SPEC's 10 creations per IP per 24 h; unknown (no socket address) is not limited. */
  readonly clientIp: string | undefined
  /**
   * Referral codes the new user arrived with, in the order they are tried (domain/accounts/referrals.ts
   * `referralCandidates`); the first naming another identity is credited. Ignored when the identity exists.
   */
  readonly referralCodes?: ReadonlyArray<string>
}

/** How many fresh ids to draw before a collision (60 and 40 random bits) is taken for something else. */
const ID_ATTEMPTS = 3

const isUniqueViolation = (error: unknown): boolean =>
  error instanceof SqlError && (error.cause as { code?: unknown } | undefined)?.code === "23505"

export class Identities extends Effect.Service<Identities>()("Identities", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const points = yield* Points
    const referrals = yield* Referrals

    // The active context counts only while the organization lives and the identity is still a member of it.
    const selectIdentity = sql`
      SELECT i.cf_id, i.email, i.wallet_address, i.display_name, i.referral_code, i.points_balance::text AS points_balance,
             a.id::text AS account_id, o.account_id::text AS org_account_id, o.id AS org_id, o.name AS org_name, m.role AS org_role
      FROM identities i JOIN accounts a ON a.owner_cf_id = i.cf_id AND a.kind = 'personal'
      LEFT JOIN organizations o ON o.account_id = i.active_account_id AND o.deleted_at IS NULL
      LEFT JOIN organization_members m ON m.account_id = o.account_id AND m.cf_id = i.cf_id`

    const columns = { cfId: sql`i.cf_id`, email: sql`i.email`, walletAddress: sql`i.wallet_address` }
    const findWhere = (column: keyof typeof columns, value: string) =>
      SqlSchema.findOne({
        Request: Schema.String,
        Result: IdentityRow,
        execute: (v) => sql`${selectIdentity} WHERE ${columns[column]} = ${v}`
      })(value).pipe(Effect.map(Option.map(identityOf)), orDieAtRepository)

    const byCfId = Effect.fn("Identities.byCfId")(function* (cfId: string) {
      return yield* findWhere("cfId", cfId)
    })
    const byEmail = Effect.fn("Identities.byEmail")(function* (email: string) {
      return yield* findWhere("email", email)
    })
    const byWallet = Effect.fn("Identities.byWallet")(function* (walletAddress: string) {
      return yield* findWhere("walletAddress", walletAddress)
    })

    const existing = (fields: NewIdentity) =>
      fields.email !== undefined ? byEmail(fields.email) : byWallet(fields.walletAddress ?? "")

    /** Refuses the creation when the address already created SPEC's 10 CF IDs in the last 24 hours. */
    const checkSignupLimit = (clientIp: string) =>
      Effect.gen(function* () {
        // Serializes creations from one address, so concurrent sign-ups cannot all see room for one more.
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`signup:${clientIp}`}))`
        const now = new Date(yield* Clock.currentTimeMillis)
        const counted = yield* SqlSchema.single({
          Request: Schema.String,
          Result: Schema.Struct({ n: Schema.Int, oldest: Schema.NullOr(Schema.DateFromSelf) }),
          execute: (ip) => sql`
            SELECT count(*)::int AS n, min(created_at) AS oldest FROM identities
            WHERE created_ip = ${ip} AND created_at > ${new Date(now.getTime() - SIGNUPS_PER_IP.windowMs)}`
        })(clientIp)
        if (counted.n >= SIGNUPS_PER_IP.limit) {
          const retryAfter = retryAfterSeconds(SIGNUPS_PER_IP, counted.oldest ?? now, now)
          recordRateLimitRefusal("signup")
          return yield* new RateLimited({
            message: `At most ${SIGNUPS_PER_IP.limit} CF IDs can be created from one address in 24 hours; retry in ${retryAfter} s.`,
            details: { retryAfterSeconds: retryAfter }
          })
        }
      })

    const insertIdentity = (fields: NewIdentity, now: Date) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: Schema.Struct({ cfId: Schema.String }),
        execute: () => {
          const email = fields.email ?? null
          const walletAddress = fields.walletAddress ?? null
          return sql`
            INSERT INTO identities ${sql.insert({
              cfId: cfIdFrom(randomBytes(CF_ID_RANDOM_BYTES)),
              email,
              walletAddress,
              displayName: defaultDisplayName({ email, walletAddress }),
              referralCode: referralCodeFrom(randomBytes(REFERRAL_CODE_RANDOM_BYTES)),
              createdIp: fields.clientIp ?? null,
              // The service's clock: the sign-ups-per-address window counts by it.
              createdAt: now
            })}
            ON CONFLICT DO NOTHING RETURNING cf_id`
        }
      })(undefined)

    /**
     * Creates a CF ID and its personal account, with its sign-up bonus and, when it arrived through a referral, the
     * confirmed referral and both sides' points, in one transaction; the one place identities are born. When the
     * e-mail or wallet was taken meanwhile (a concurrent first sign-in), answers the identity that took it.
     */
    const createIdentity = Effect.fn("Identities.createIdentity")(function* (fields: NewIdentity): Effect.fn.Return<Identity, RateLimited> {
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            if (fields.clientIp !== undefined) yield* checkSignupLimit(fields.clientIp)
            for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
              const [inserted] = yield* insertIdentity(fields, new Date(yield* Clock.currentTimeMillis))
              if (inserted !== undefined) {
                yield* sql`INSERT INTO accounts ${sql.insert({ ownerCfId: inserted.cfId, kind: "personal" })}`
                yield* points.awardSignup(inserted.cfId)
                yield* referrals.attribute({
                  referredCfId: inserted.cfId,
                  candidates: fields.referralCodes ?? [],
                  clientIp: fields.clientIp
                })
                return yield* Effect.flatten(byCfId(inserted.cfId))
              }
              const taken = yield* existing(fields)
              if (Option.isSome(taken)) return taken.value
            }
            return yield* Effect.dieMessage("could not draw an unused CF ID or referral code")
          })
        )
        .pipe(orDieAtRepository)
    })

    /** The identity an e-mail or wallet signs in as, created on first sign-in. */
    const signInAs = Effect.fn("Identities.signInAs")(function* (fields: NewIdentity): Effect.fn.Return<Identity, RateLimited> {
      return yield* Effect.flatMap(existing(fields), Option.match({ onSome: Effect.succeed, onNone: () => createIdentity(fields) }))
    })

    /** An identity that must exist (the one a valid session or signature names): its absence is a defect. */
    const require = Effect.fn("Identities.require")(function* (cfId: string): Effect.fn.Return<Identity> {
      return yield* Effect.flatMap(
        byCfId(cfId),
        Option.match({ onSome: Effect.succeed, onNone: () => Effect.dieMessage(`identity ${cfId} is gone`) })
      )
    })

    const setDisplayName = Effect.fn("Identities.setDisplayName")(function* (cfId: string, displayName: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* sql`UPDATE identities SET display_name = ${displayName}, updated_at = ${now}::timestamptz WHERE cf_id = ${cfId}`.pipe(
        orDieAtRepository,
        Effect.zipRight(require(cfId))
      )
    })

    /** Adds an e-mail to an identity that has none (a wallet-only account); one CF ID per e-mail still holds. */
    const attachEmail = Effect.fn("Identities.attachEmail")(function* (cfId: string, email: string): Effect.fn.Return<Identity, AlreadyExists | Conflict> {
      const now = new Date(yield* Clock.currentTimeMillis)
      const updated = yield* sql`
        UPDATE identities SET email = ${email}, updated_at = ${now}::timestamptz WHERE cf_id = ${cfId} AND email IS NULL
        RETURNING cf_id`.pipe(
        Effect.catchIf(isUniqueViolation, () =>
          Effect.fail(new AlreadyExists({ message: "This e-mail belongs to another CF ID.", param: "email" }))
        ),
        orDieAtRepository
      )
      if (updated.length === 0) {
        return yield* new Conflict({ message: "This CF ID already has an e-mail address." })
      }
      return yield* require(cfId)
    })

    return { byCfId, byEmail, byWallet, createIdentity, signInAs, require, setDisplayName, attachEmail } as const
  })
}) {}
