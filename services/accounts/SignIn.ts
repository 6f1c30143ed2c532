/**
 * Sign-in (DESIGN section 11): by e-mail code or by wallet (SIWE), each ending in a session for the CF ID the proof
 * names, created on first sign-in; and a wallet-only identity adding an e-mail by a code sent to it. The proof is
 * consumed in the transaction that signs in, so a refused sign-in (the sign-up limit) leaves it usable.
 *
 * A sign-up is attributed to the referral code of the request's `cf_ref` cookie (first touch), else to the one the
 * client sent; each sign-in earns the day's login points (Points.recordLogin) in the same transaction.
 *
 * An address on the disposable-domain list (DISPOSABLE_EMAIL_DOMAINS_FILE) cannot become a new CF ID's e-mail nor be
 * added to a wallet-only one: 422 naming `email`, before any code is counted, stored or mailed. A CF ID that already
 * has such an address still signs in with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { DISPOSABLE_EMAIL_MESSAGE, isDisposable } from "../../domain/accounts/disposableEmail.ts"
import type { CodePurpose } from "../../domain/accounts/emailCode.ts"
import { referralCandidates } from "../../domain/accounts/referrals.ts"
import { AlreadyExists, Conflict, ValidationFailed } from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { loadDisposableDomains } from "./disposableDomains.ts"
import { EmailCodes } from "./EmailCodes.ts"
import { Identities, type Identity } from "./Identity.ts"
import { Points } from "./Points.ts"
import { Sessions } from "./Sessions.ts"
import { Siwe } from "./Siwe.ts"

export interface SignedIn {
  readonly identity: Identity
  readonly session: { readonly token: string; readonly expiresAt: Date }
}

export class SignIn extends Effect.Service<SignIn>()("SignIn", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const identities = yield* Identities
    const codes = yield* EmailCodes
    const sessions = yield* Sessions
    const siwe = yield* Siwe
    const points = yield* Points
    const disposableDomains = yield* loadDisposableDomains(config.identity.disposableEmailDomainsFile)
    if (Option.isSome(config.identity.disposableEmailDomainsFile)) {
      yield* Effect.logInfo("disposable e-mail domains refused at sign-up").pipe(
        Effect.annotateLogs({ file: config.identity.disposableEmailDomainsFile.value, domains: disposableDomains.size })
      )
    }

    const disposableRefused = () =>
      ValidationFailed.fromIssues([{ param: "email", path: ["email"], message: DISPOSABLE_EMAIL_MESSAGE }])

    /**
     * Refuses a disposable address that no CF ID has yet (it would create one). The list is checked first, so an
     * ordinary address costs no query; an identity that already has the address (made before the rule or the
     * list changed) keeps signing in with it.
     */
    const refuseNewDisposable = (email: string) =>
      isDisposable(email, disposableDomains)
        ? Effect.flatMap(identities.byEmail(email), Option.match({ onSome: () => Effect.void, onNone: () => Effect.fail(disposableRefused()) }))
        : Effect.void

    /** The authority SIWE messages must name: PUBLIC_BASE_URL's when set, else the Host the client used. */
    const siweDomain = (hostHeader: string | undefined) =>
      Option.match(config.publicBaseUrl, {
        onSome: (base) => new URL(base).host,
        onNone: () => hostHeader ?? `${config.host}:${config.port}`
      })

    const siweUri = (hostHeader: string | undefined) =>
      Option.getOrElse(config.publicBaseUrl, () => `http://${siweDomain(hostHeader)}`).replace(/\/+$/, "")

    const startEmail = Effect.fn("SignIn.startEmail")(function* (email: string, clientIp: string | undefined) {
      return yield* Effect.zipRight(refuseNewDisposable(email), codes.issue({ email, purpose: "sign_in", clientIp }))
    })

    const verifyEmail = Effect.fn("SignIn.verifyEmail")(function* (input: {
      readonly email: string
      readonly code: string
      readonly referralCode?: string | undefined
      /** The request's `cf_ref` cookie, if any (first touch wins over the body's code). */
      readonly referralCookie: string | undefined
      readonly clientIp: string | undefined
    }) {
      // Again here, before the attempt is counted: a code mailed before the list named the domain creates nothing.
      yield* refuseNewDisposable(input.email)
      const consume = yield* codes.check({ email: input.email, purpose: "sign_in" }, input.code)
      const referralCodes = referralCandidates(input.referralCookie, input.referralCode)
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* consume
          const identity = yield* identities.signInAs({ email: input.email, clientIp: input.clientIp, referralCodes })
          yield* points.recordLogin(identity.cfId)
          const session = yield* sessions.create(identity.cfId, "email", input.clientIp)
          return { identity, session } satisfies SignedIn
        })
      ).pipe(orDieAtRepository)
    })

    const siweNonce = Effect.fn("SignIn.siweNonce")(function* (clientIp: string | undefined, hostHeader: string | undefined) {
      return yield* Effect.map(siwe.issueNonce(clientIp), (issued) => ({
        ...issued,
        domain: siweDomain(hostHeader),
        uri: siweUri(hostHeader)
      }))
    })

    const verifySiwe = Effect.fn("SignIn.verifySiwe")(function* (input: {
      readonly message: string
      readonly signature: string
      readonly referralCookie: string | undefined
      readonly clientIp: string | undefined
      readonly hostHeader: string | undefined
    }) {
      const verified = yield* siwe.verify({ message: input.message, signature: input.signature, domain: siweDomain(input.hostHeader) })
      const referralCodes = referralCandidates(input.referralCookie, undefined)
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* siwe.consumeNonce(verified.nonce)
          const identity = yield* identities.signInAs({ walletAddress: verified.address, clientIp: input.clientIp, referralCodes })
          yield* points.recordLogin(identity.cfId)
          const session = yield* sessions.create(identity.cfId, "siwe", input.clientIp)
          return { identity, session } satisfies SignedIn
        })
      ).pipe(orDieAtRepository)
    })

    /**
     * Refuses an address change before a code is sent: the identity has one, another CF ID owns this one, or it is
     * disposable.
     */
    const checkAddable = (cfId: string, email: string) =>
      Effect.gen(function* () {
        const identity = yield* identities.require(cfId)
        if (identity.email !== null) return yield* new Conflict({ message: "This CF ID already has an e-mail address." })
        const owner = yield* identities.byEmail(email)
        if (Option.isSome(owner)) {
          return yield* new AlreadyExists({ message: "This e-mail belongs to another CF ID.", param: "email" })
        }
        if (isDisposable(email, disposableDomains)) return yield* disposableRefused()
      })

    const addEmailPurpose: CodePurpose = "add_email"

    const startAddEmail = Effect.fn("SignIn.startAddEmail")(function* (cfId: string, email: string, clientIp: string | undefined) {
      return yield* Effect.zipRight(checkAddable(cfId, email), codes.issue({ email, purpose: addEmailPurpose, cfId, clientIp }))
    })

    const verifyAddEmail = Effect.fn("SignIn.verifyAddEmail")(function* (cfId: string, email: string, code: string) {
      yield* checkAddable(cfId, email)
      const consume = yield* codes.check({ email, purpose: addEmailPurpose, cfId }, code)
      return yield* sql.withTransaction(Effect.zipRight(consume, identities.attachEmail(cfId, email))).pipe(orDieAtRepository)
    })

    return {
      startEmail,
      verifyEmail,
      siweNonce,
      verifySiwe,
      logout: Effect.fn("SignIn.logout")(function* (token: string) {
        return yield* sessions.revoke(token)
      }),
      startAddEmail,
      verifyAddEmail
    } as const
  })
}) {}
