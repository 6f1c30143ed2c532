/**
 * Sessions (DESIGN section 11): a token of 32 random bytes (base64url) lives only in the client's `cf_session`
 * cookie; the database keeps its SHA-256. Valid 30 days, sliding: a session in use is extended (at most once a day).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { SESSION_LIFETIME_MS, SESSION_REFRESH_AFTER_MS } from "../../domain/accounts/policies.ts"
import { Unauthorized } from "../../domain/errors.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

export const SESSION_COOKIE = "cf_session"
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex")

export interface SessionIdentity {
  readonly cfId: string
  /** The account requests act on and are paid from: the active organization's, else the personal one. */
  readonly accountId: string
  /** The identity's own account: funding and withdrawals always act on it. */
  readonly personalAccountId: string
  readonly walletAddress: string | null
  /** The active organization and the identity's role in it; null in the personal context. */
  readonly organization: { readonly id: string; readonly role: "owner" | "admin" | "member" } | null
}

export interface Authenticated {
  readonly identity: SessionIdentity
  /** Set when this use extended the session: the cookie should be sent again with the new lifetime. */
  readonly extendedUntil: Option.Option<Date>
}

const SessionRow = Schema.Struct({
  cfId: Schema.String,
  accountId: Schema.String,
  orgAccountId: Schema.NullOr(Schema.String),
  orgId: Schema.NullOr(Schema.String),
  orgRole: Schema.NullOr(Schema.Literal("owner", "admin", "member")),
  walletAddress: Schema.NullOr(Schema.String),
  expiresAt: Schema.DateFromSelf,
  live: Schema.Boolean,
  due: Schema.Boolean
})

/** A session's expiry when made or extended at `now` (epoch ms): the service's clock, not the database's. */
const expiryFrom = (now: number) => new Date(now + SESSION_LIFETIME_MS)

export class Sessions extends Effect.Service<Sessions>()("Sessions", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** A new session for `cfId`; the token is returned once and never stored. */
    const create = Effect.fn("Sessions.create")(function* (cfId: string, method: "email" | "siwe", clientIp: string | undefined) {
      const token = randomBytes(32).toString("base64url")
      const now = yield* Clock.currentTimeMillis
      // The identity's dead sessions go when it signs in again, so the table holds live sessions and a few more.
      yield* sql`DELETE FROM sessions WHERE cf_id = ${cfId} AND expires_at <= ${new Date(now)}`
      const created = yield* SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ expiresAt: Schema.DateFromSelf }),
        execute: () => sql`
          INSERT INTO sessions (token_hash, cf_id, method, created_ip, expires_at)
          VALUES (${tokenHash(token)}, ${cfId}, ${method}, ${clientIp ?? null}, ${expiryFrom(now)})
          RETURNING expires_at`
      })(undefined)
      return { token, expiresAt: created.expiresAt }
    }, orDieAtRepository)

    const unauthorized = (message: string) => Effect.fail(new Unauthorized({ message }))

    /** The identity behind a session token; an unknown or expired session is 401 `unauthorized`. */
    const authenticate = Effect.fn("Sessions.authenticate")(function* (token: string): Effect.fn.Return<Authenticated, Unauthorized> {
      if (token === "") return yield* unauthorized("Sign in first: no session cookie or signed request.")
      if (!TOKEN_PATTERN.test(token)) return yield* unauthorized("The session is not valid; sign in again.")
      const hash = tokenHash(token)
      const now = yield* Clock.currentTimeMillis
      const found = yield* SqlSchema.findOne({
        Request: Schema.String,
        Result: SessionRow,
        execute: (h) => sql`
          SELECT s.cf_id, a.id::text AS account_id, i.wallet_address, s.expires_at,
                 o.account_id::text AS org_account_id, o.id AS org_id, m.role AS org_role,
                 s.expires_at > ${new Date(now)} AS live,
                 s.expires_at < ${new Date(expiryFrom(now).getTime() - SESSION_REFRESH_AFTER_MS)} AS due
          FROM sessions s
          JOIN identities i ON i.cf_id = s.cf_id
          JOIN accounts a ON a.owner_cf_id = s.cf_id AND a.kind = 'personal'
          LEFT JOIN organizations o ON o.account_id = i.active_account_id AND o.deleted_at IS NULL
          LEFT JOIN organization_members m ON m.account_id = o.account_id AND m.cf_id = s.cf_id
          WHERE s.token_hash = ${h}`
      })(hash).pipe(orDieAtRepository)
      if (Option.isNone(found)) return yield* unauthorized("The session is not valid; sign in again.")
      const session = found.value
      if (!session.live) return yield* unauthorized("The session has expired; sign in again.")
      const organization = session.orgAccountId !== null && session.orgId !== null && session.orgRole !== null
        ? { accountId: session.orgAccountId, id: session.orgId, role: session.orgRole }
        : null
      const identity: SessionIdentity = {
        cfId: session.cfId,
        accountId: organization?.accountId ?? session.accountId,
        personalAccountId: session.accountId,
        walletAddress: session.walletAddress,
        organization: organization === null ? null : { id: organization.id, role: organization.role }
      }
      if (!session.due) return { identity, extendedUntil: Option.none() }
      const extended = yield* SqlSchema.single({
        Request: Schema.String,
        Result: Schema.Struct({ expiresAt: Schema.DateFromSelf }),
        execute: (h) => sql`
          UPDATE sessions SET expires_at = ${expiryFrom(now)} WHERE token_hash = ${h} RETURNING expires_at`
      })(hash).pipe(orDieAtRepository)
      return { identity, extendedUntil: Option.some(extended.expiresAt) }
    })

    /**
     * The CF ID a live session names, without extending it: for requests that merely notice who is signed in (the
     * oracle counting a model view), so the cookie refresh stays with the requests that can send it.
     */
    const peek = Effect.fn("Sessions.peek")(function* (token: string): Effect.fn.Return<Option.Option<string>> {
      return yield* TOKEN_PATTERN.test(token)
        ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
          SqlSchema.findOne({
            Request: Schema.String,
            Result: Schema.Struct({ cfId: Schema.String }),
            execute: (h) => sql`SELECT cf_id FROM sessions WHERE token_hash = ${h} AND expires_at > ${new Date(now)}`
          })(tokenHash(token)).pipe(Effect.map(Option.map((row) => row.cfId)), orDieAtRepository))
        : Effect.succeed(Option.none())
    })

    const revoke = Effect.fn("Sessions.revoke")(function* (token: string) {
      return yield* TOKEN_PATTERN.test(token)
        ? sql`DELETE FROM sessions WHERE token_hash = ${tokenHash(token)}`.pipe(Effect.asVoid, orDieAtRepository)
        : Effect.void
    })

    return { create, authenticate, peek, revoke } as const
  })
}) {}
