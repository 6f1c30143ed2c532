/**
 * HTTP helpers for the account suites: JSON calls with a client address (the servers run with TRUST_PROXY=true, so
 * X-Forwarded-For names it) and a session cookie, and sign-in by e-mail code or by wallet. A call that carries the
 * session cookie also carries the console's header `X-CF-Console: 1`, as the console does (DESIGN section 13: without
 * it, or a same-origin Origin, a signed-in state change is refused); test/csrf.test.ts turns it off to prove that.
 */
import type { PrivateKeyAccount } from "viem/accounts"
import { createSiweMessage } from "viem/siwe"
import { CONSOLE_HEADERS } from "../../src/http/csrf.ts"
import type { Mailbox } from "./mailbox.ts"

export interface CallOptions {
  readonly ip?: string
  readonly cookie?: string
  readonly headers?: Record<string, string>
  /** Send `X-CF-Console: 1` with a session cookie (the default), as the console does; false leaves it out. */
  readonly console?: boolean
}

/** Whether a Cookie header value carries the session cookie. */
const carriesSession = (cookie: string | undefined): boolean =>
  cookie !== undefined && cookie.split(";").some((part) => part.trim().startsWith("cf_session="))

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

export const makeClient = (baseUrl: string) => {
  const call = async (method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<Answer> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(options.ip === undefined ? {} : { "x-forwarded-for": options.ip }),
        ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
        ...(options.console !== false && carriesSession(options.cookie) ? CONSOLE_HEADERS : {}),
        ...options.headers
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, headers: response.headers, body: parsed }
  }
  return { call }
}

/** `cf_session=...` from a Set-Cookie header, ready for a Cookie header. */
export const sessionCookieOf = (answer: Answer): string => {
  const header = answer.headers.getSetCookie().find((cookie) => cookie.startsWith("cf_session="))
  if (header === undefined) throw new Error("no cf_session cookie was set")
  return header.split(";")[0]!
}

export const signInByEmail = async (
  client: ReturnType<typeof makeClient>,
  mailbox: Mailbox,
  email: string,
  ip: string
): Promise<{ readonly cookie: string; readonly me: any }> => {
  const started = await client.call("POST", "/v1/auth/email/start", { email }, { ip })
  if (started.status !== 202) throw new Error(`start answered ${started.status}: ${JSON.stringify(started.body)}`)
  const code = await mailbox.codeFor(email)
  const verified = await client.call("POST", "/v1/auth/email/verify", { email, code }, { ip })
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}: ${JSON.stringify(verified.body)}`)
  return { cookie: sessionCookieOf(verified), me: verified.body }
}

/** A SIWE message for the nonce the service issued, signed by `account`. */
export const siweSignature = async (
  client: ReturnType<typeof makeClient>,
  account: PrivateKeyAccount,
  overrides: { readonly chainId?: number; readonly nonce?: string; readonly ip?: string } = {}
) => {
  const issued = (await client.call("GET", "/v1/auth/siwe/nonce", undefined, overrides.ip === undefined ? {} : { ip: overrides.ip })).body as {
    nonce: string
    chainId: number
    domain: string
    uri: string
  }
  const message = createSiweMessage({
    address: account.address,
    chainId: overrides.chainId ?? issued.chainId,
    domain: issued.domain,
    nonce: overrides.nonce ?? issued.nonce,
    uri: issued.uri,
    version: "1",
    statement: "Sign in to Compute Exchange"
  })
  return { message, signature: await account.signMessage({ message }), nonce: issued.nonce }
}

export const signInByWallet = async (client: ReturnType<typeof makeClient>, account: PrivateKeyAccount, ip: string) => {
  const signed = await siweSignature(client, account, { ip })
  const verified = await client.call("POST", "/v1/auth/siwe/verify", { message: signed.message, signature: signed.signature }, { ip })
  if (verified.status !== 200) throw new Error(`SIWE verify answered ${verified.status}: ${JSON.stringify(verified.body)}`)
  return { cookie: sessionCookieOf(verified), me: verified.body }
}
