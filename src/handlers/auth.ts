/**
 * Sign-in, logout and `/v1/me` (decode, call SignIn or Identities, encode), and `SessionAuthLive`: the session
 * cookie or a wallet-signed request, turned into `CurrentIdentity` for every group behind SessionAuth. A request the
 * cookie authenticates that changes state must come from this site (src/http/csrf.ts): SessionAuthLive and logout
 * refuse it otherwise, before the session is looked up.
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { getAddress } from "viem"
import { normalizeEmail } from "../../domain/accounts/ids.ts"
import { SESSION_LIFETIME_MS } from "../../domain/accounts/policies.ts"
import { REFERRAL_COOKIE } from "../../domain/accounts/referrals.ts"
import { carriesSignature } from "../../domain/accounts/signedRequest.ts"
import { Forbidden } from "../../domain/errors.ts"
import { Identities, type Identity } from "../../services/accounts/Identity.ts"
import { SESSION_COOKIE, Sessions } from "../../services/accounts/Sessions.ts"
import { SignedRequests } from "../../services/accounts/SignedRequests.ts"
import { SignIn } from "../../services/accounts/SignIn.ts"
import { AppConfig, type AppConfigShape } from "../../services/platform/AppConfig.ts"
import { CurrentIdentity, SessionAuth } from "../api/SessionAuth.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { crossSiteRefusal, ownOrigins } from "../http/csrf.ts"
import { cookieIsSecure } from "../http/securityHeaders.ts"

/**
 * The session cookie is Secure when the service is reached over https (src/http/securityHeaders.ts): by its
 * configuration, or per request when a trusted proxy forwards `X-Forwarded-Proto: https`.
 */
export { httpsByConfig as sessionCookieIsSecure } from "../http/securityHeaders.ts"

type SecureFor = (headers: Readonly<Record<string, string | undefined>>) => boolean

/** A new or just-extended session lives the full lifetime from now: the cookie says so without reading any clock. */
const cookieSetter = (secure: SecureFor) => (token: string) =>
  HttpApp.appendPreResponseHandler((request, response) =>
    Effect.succeed(
      HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, token, {
        httpOnly: true,
        secure: secure(request.headers),
        sameSite: "lax",
        path: "/",
        maxAge: Duration.millis(SESSION_LIFETIME_MS)
      })
    )
  )

const clearCookie = (secure: SecureFor) =>
  HttpApp.appendPreResponseHandler((request, response) =>
    Effect.succeed(
      HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, "", { httpOnly: true, secure: secure(request.headers), sameSite: "lax", path: "/", maxAge: Duration.zero })
    )
  )

/** The identity as `/v1/me` shows it. */
export const meView = (identity: Identity) => ({
  cf_id: identity.cfId,
  email: identity.email,
  wallet_address: identity.walletAddress === null ? null : getAddress(identity.walletAddress),
  display_name: identity.displayName,
  referral_code: identity.referralCode,
  points_balance: identity.pointsBalance,
  active_context: identity.organization === null
    ? { type: "personal" as const }
    : { type: "organization" as const, org_id: identity.organization.id, name: identity.organization.name, role: identity.organization.role }
})

/**
 * The CSRF rule (DESIGN section 13) for a request whose credential is the session cookie: an unsafe method from
 * another site, or with neither a same-origin Origin nor `X-CF-Console: 1`, is refused 403 `forbidden`.
 */
export const requireSameSite = (config: Pick<AppConfigShape, "trustProxy" | "publicBaseUrl">) => {
  const trustProxy = config.trustProxy._tag !== "None"
  const publicBaseUrl = Option.getOrUndefined(config.publicBaseUrl)
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refused = crossSiteRefusal({
      method: request.method,
      headers: request.headers,
      ownOrigins: ownOrigins({ headers: request.headers, trustProxy, publicBaseUrl })
    })
    return refused === undefined ? Effect.void : Effect.fail(new Forbidden({ message: refused }))
  })
}

const clientIp = Effect.map(HttpServerRequest.HttpServerRequest, (request) => Option.getOrUndefined(request.remoteAddress))
const hostHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["host"])
const sessionToken = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.cookies[SESSION_COOKIE] ?? "")
const referralCookie = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.cookies[REFERRAL_COOKIE])

export const SessionAuthLive = Layer.effect(
  SessionAuth,
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const signed = yield* SignedRequests
    const config = yield* AppConfig
    const setCookie = cookieSetter(cookieIsSecure(config))
    const sameSite = requireSameSite(config)
    return SessionAuth.of({
      session: (token) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          // A request carrying any X-CF-* header means to be signed and is judged as such, whatever cookie it has.
          if (carriesSignature(request.headers)) {
            const body = yield* Effect.orDie(request.arrayBuffer)
            const identity = yield* signed.authenticate({
              method: request.method,
              pathWithQuery: request.url,
              headers: request.headers,
              body: new Uint8Array(body)
            })
            return { ...identity, via: "signed" as const }
          }
          const raw = Redacted.value(token)
          // The cookie is the credential: a state change must come from this site. No cookie at all is a 401 below.
          if (raw !== "") yield* sameSite
          const { extendedUntil, identity } = yield* sessions.authenticate(raw)
          if (Option.isSome(extendedUntil)) yield* setCookie(raw)
          return { ...identity, via: "session" as const }
        })
    })
  })
)

const AuthGroupLive = HttpApiBuilder.group(ServerApi, "auth", (handlers) =>
  Effect.gen(function* () {
    const signIn = yield* SignIn
    const config = yield* AppConfig
    const secure = cookieIsSecure(config)
    const setCookie = cookieSetter(secure)
    const sameSite = requireSameSite(config)
    const signedIn = ({ identity, session }: { identity: Identity; session: { token: string; expiresAt: Date } }) =>
      Effect.as(setCookie(session.token), meView(identity))
    return handlers
      .handle("emailStart", ({ payload }) =>
        Effect.gen(function* () {
          const email = normalizeEmail(payload.email)
          const sent = yield* signIn.startEmail(email, yield* clientIp)
          return { email, expiresAt: sent.expiresAt.toISOString() }
        })
      )
      .handle("emailVerify", ({ payload }) =>
        Effect.gen(function* () {
          const result = yield* signIn.verifyEmail({
            email: normalizeEmail(payload.email),
            code: payload.code,
            referralCode: payload.referralCode,
            referralCookie: yield* referralCookie,
            clientIp: yield* clientIp
          })
          return yield* signedIn(result)
        })
      )
      .handle("siweNonce", () =>
        Effect.gen(function* () {
          const issued = yield* signIn.siweNonce(yield* clientIp, yield* hostHeader)
          return { ...issued, version: "1" as const, expiresAt: issued.expiresAt.toISOString() }
        })
      )
      .handle("siweVerify", ({ payload }) =>
        Effect.gen(function* () {
          const result = yield* signIn.verifySiwe({
            message: payload.message,
            signature: payload.signature,
            referralCookie: yield* referralCookie,
            clientIp: yield* clientIp,
            hostHeader: yield* hostHeader
          })
          return yield* signedIn(result)
        })
      )
      // Logout is authenticated by the cookie it ends, so the same rule holds (a forged logout only annoys, but one
      // rule for every cookie-authenticated state change is easier to trust). Without a cookie there is nothing to end.
      .handle("logout", () =>
        Effect.gen(function* () {
          const token = yield* sessionToken
          if (token !== "") yield* sameSite
          yield* signIn.logout(token)
          yield* clearCookie(secure)
        })
      )
  })
)

const MeGroupLive = HttpApiBuilder.group(ServerApi, "me", (handlers) =>
  Effect.gen(function* () {
    const signIn = yield* SignIn
    const identities = yield* Identities
    return handlers
      .handle("me", () => Effect.flatMap(CurrentIdentity, ({ cfId }) => Effect.map(identities.require(cfId), meView)))
      .handle("updateMe", ({ payload }) =>
        Effect.flatMap(CurrentIdentity, ({ cfId }) =>
          Effect.map(
            payload.display_name === undefined ? identities.require(cfId) : identities.setDisplayName(cfId, payload.display_name),
            meView
          )
        )
      )
      .handle("emailStart", ({ payload }) =>
        Effect.gen(function* () {
          const { cfId } = yield* CurrentIdentity
          const email = normalizeEmail(payload.email)
          const sent = yield* signIn.startAddEmail(cfId, email, yield* clientIp)
          return { email, expiresAt: sent.expiresAt.toISOString() }
        })
      )
      .handle("emailVerify", ({ payload }) =>
        Effect.gen(function* () {
          const { cfId } = yield* CurrentIdentity
          return meView(yield* signIn.verifyAddEmail(cfId, normalizeEmail(payload.email), payload.code))
        })
      )
  })
)

/** Both groups; SessionAuthLive comes with the identity services (layers/Identity.ts), for every group that uses it. */
export const AuthHandlers = Layer.mergeAll(AuthGroupLive, MeGroupLive)
