/**
 * Disposable e-mail domains (issue 12, optional SPEC referral rule): over real sockets with a real SMTP server, an
 * address at a listed domain (or a subdomain of one) that would become a CF ID's address is refused 422 naming
 * `email`, nothing is mailed or stored and no code limit is spent; an ordinary address, and a CF ID that already has
 * a listed address, sign in as before; DISPOSABLE_EMAIL_DOMAINS_FILE="" turns the rule off. The list's loader: the
 * bundled file, a file of one's own, and a missing or malformed file stopping the start with its path.
 */
import { Cause, Effect, Exit, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadDisposableDomains } from "../services/accounts/disposableDomains.ts"
import { bundledDisposableDomainsFile } from "../services/platform/AppConfig.ts"
import { describeStartFailure } from "../services/platform/Startup.ts"
import type { Answer } from "./support/accounts.ts"
import { signInByEmail, signInByWallet } from "./support/accounts.ts"
import { type AccountServer, startAccountServer } from "./support/accountServer.ts"
import { queryDatabase } from "./support/database.ts"

let strict: AccountServer | undefined
let open: AccountServer | undefined

beforeAll(async () => {
  ;[strict, open] = await Promise.all([startAccountServer(), startAccountServer({ DISPOSABLE_EMAIL_DOMAINS_FILE: "" })])
}, 90_000)

afterAll(async () => {
  await Promise.all([strict?.close(), open?.close()])
})

const server = () => strict!
const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(server().database, text, values)
const mailedTo = (to: string) => server().mailbox.delivered.filter((mail) => mail.to.includes(to)).length
const codesFor = async (email: string) => (await query("SELECT count(*)::int AS n FROM email_codes WHERE email = $1", [email]))[0].n

const expectRefused = (answer: Answer) => {
  expect(answer.status).toBe(422)
  expect(answer.body.error).toMatchObject({
    code: "validation_failed",
    type: "validation_error",
    param: "email",
    issues: [{ param: "email", path: ["email"], message: "disposable e-mail addresses are not accepted" }]
  })
}

describe("with the bundled list (the default)", () => {
  it("refuses a disposable address at sign-up (422 naming email); nothing is mailed or stored", async () => {
    const answer = await server().client.call("POST", "/v1/auth/email/start", { email: " Someone@Mailinator.COM " }, { ip: "10.7.0.1" })
    expectRefused(answer)
    expect(answer.body.error.message).toContain("disposable e-mail addresses are not accepted")
    expect(mailedTo("someone@mailinator.com")).toBe(0)
    expect(await codesFor("someone@mailinator.com")).toBe(0)
    // The code-verify step refuses it too, before any code is looked at.
    const verify = await server().client.call("POST", "/v1/auth/email/verify", { email: "someone@mailinator.com", code: "123456" }, { ip: "10.7.0.1" })
    expectRefused(verify)
    expect(await query("SELECT count(*)::int AS n FROM identities WHERE email = 'someone@mailinator.com'")).toEqual([{ n: 0 }])
  })

  it("refuses a subdomain of a listed domain, but not a domain that merely ends with its name", async () => {
    expectRefused(await server().client.call("POST", "/v1/auth/email/start", { email: "x@eu.mailinator.com" }, { ip: "10.7.0.2" }))
    expectRefused(await server().client.call("POST", "/v1/auth/email/start", { email: "x@inbox.YOPMAIL.com" }, { ip: "10.7.0.2" }))
    expect(mailedTo("x@eu.mailinator.com") + mailedTo("x@inbox.yopmail.com")).toBe(0)
    const lookalike = await server().client.call("POST", "/v1/auth/email/start", { email: "x@notmailinator.com" }, { ip: "10.7.0.2" })
    expect(lookalike.status).toBe(202)
    expect(await server().mailbox.codeFor("x@notmailinator.com")).toMatch(/^[0-9]{6}$/)
  })

  it("signs an ordinary address up as before", async () => {
    const { me } = await signInByEmail(server().client, server().mailbox, "ordinary@example.com", "10.7.0.3")
    expect(me).toMatchObject({ cf_id: expect.stringMatching(/^cf_/), email: "ordinary@example.com" })
  })

  it("spends no code limit on refused addresses: the per-IP count still admits an ordinary one", async () => {
    const ip = "10.7.0.4"
    // Over the 20 codes an IP may request an hour, all refused.
    for (let i = 0; i < 22; i++) {
      expectRefused(await server().client.call("POST", "/v1/auth/email/start", { email: `burst${i}@guerrillamail.com` }, { ip }))
    }
    for (let i = 0; i < 6; i++) {
      expectRefused(await server().client.call("POST", "/v1/auth/email/start", { email: "same@guerrillamail.com" }, { ip: `10.7.1.${i}` }))
    }
    expect(await query("SELECT count(*)::int AS n FROM email_codes WHERE requested_ip = $1", [ip])).toEqual([{ n: 0 }])
    const ordinary = await server().client.call("POST", "/v1/auth/email/start", { email: "after-burst@example.com" }, { ip })
    expect(ordinary.status).toBe(202)
  })

  it("lets a CF ID that already has a disposable address sign in with it; a code for one that no longer has it creates nothing", async () => {
    const { me } = await signInByEmail(server().client, server().mailbox, "legacy@example.com", "10.7.0.5")
    // As if it signed up before the rule (or before its domain was listed).
    await query("UPDATE identities SET email = 'legacy@trashmail.com' WHERE cf_id = $1", [me.cf_id])
    const again = await signInByEmail(server().client, server().mailbox, "legacy@trashmail.com", "10.7.0.5")
    expect(again.me.cf_id).toBe(me.cf_id)

    // A code mailed while a CF ID had the address; by the time it is used none has: no CF ID is created from it.
    const started = await server().client.call("POST", "/v1/auth/email/start", { email: "legacy@trashmail.com" }, { ip: "10.7.0.5" })
    expect(started.status).toBe(202)
    const code = await server().mailbox.codeFor("legacy@trashmail.com")
    await query("UPDATE identities SET email = 'legacy@example.com' WHERE cf_id = $1", [me.cf_id])
    expectRefused(await server().client.call("POST", "/v1/auth/email/verify", { email: "legacy@trashmail.com", code }, { ip: "10.7.0.5" }))
    expect(await query("SELECT count(*)::int AS n FROM identities WHERE email = 'legacy@trashmail.com'")).toEqual([{ n: 0 }])
  })

  it("refuses adding a disposable address to a wallet-only CF ID; nothing is mailed", async () => {
    const { cookie } = await signInByWallet(server().client, privateKeyToAccount(generatePrivateKey()), "10.7.0.6")
    const mailed = server().mailbox.delivered.length
    expectRefused(await server().client.call("POST", "/v1/me/email/start", { email: "wallet@sub.10minutemail.com" }, { cookie, ip: "10.7.0.6" }))
    expectRefused(await server().client.call("POST", "/v1/me/email/verify", { email: "wallet@sub.10minutemail.com", code: "123456" }, { cookie }))
    expect(server().mailbox.delivered.length).toBe(mailed)
    expect(await codesFor("wallet@sub.10minutemail.com")).toBe(0)
    // An ordinary address is still added as before.
    expect((await server().client.call("POST", "/v1/me/email/start", { email: "wallet@example.com" }, { cookie, ip: "10.7.0.6" })).status).toBe(202)
  })
})

describe('with DISPOSABLE_EMAIL_DOMAINS_FILE=""', () => {
  it("the same disposable address gets its code and signs up", async () => {
    const { me } = await signInByEmail(open!.client, open!.mailbox, "someone@mailinator.com", "10.7.2.1")
    expect(me).toMatchObject({ cf_id: expect.stringMatching(/^cf_/), email: "someone@mailinator.com" })
  })
})

describe("the list's loader", () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-disposable-"))
  afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

  it("reads the bundled list: the well-known providers, lower-case", async () => {
    const domains = await Effect.runPromise(loadDisposableDomains(Option.some(bundledDisposableDomainsFile)))
    expect(domains.size).toBeGreaterThanOrEqual(20)
    for (const domain of ["mailinator.com", "guerrillamail.com", "10minutemail.com", "yopmail.com", "temp-mail.org"]) {
      expect(domains.has(domain)).toBe(true)
    }
    expect([...domains].every((domain) => domain === domain.toLowerCase())).toBe(true)
  })

  it("reads a file of the operator's own, and nothing when the rule is off", async () => {
    const file = Path.join(dir, "mine.txt")
    Fs.writeFileSync(file, "# ours\nExample.ORG\n")
    expect([...(await Effect.runPromise(loadDisposableDomains(Option.some(file))))]).toEqual(["example.org"])
    expect((await Effect.runPromise(loadDisposableDomains(Option.none()))).size).toBe(0)
  })

  it("stops the start when the file is missing or malformed, naming the variable and the path", async () => {
    const missing = Path.join(dir, "nope.txt")
    const failure = async (path: string) => {
      const exit = await Effect.runPromiseExit(loadDisposableDomains(Option.some(path)))
      if (Exit.isSuccess(exit)) throw new Error("expected a failure")
      return describeStartFailure(exit.cause as Cause.Cause<unknown>)
    }
    expect(await failure(missing)).toMatch(new RegExp(`^DISPOSABLE_EMAIL_DOMAINS_FILE ${missing} cannot be read: .*ENOENT`))
    const malformed = Path.join(dir, "bad.txt")
    Fs.writeFileSync(malformed, "mailinator.com\nyopmail.com, trashmail.com\n")
    expect(await failure(malformed)).toBe(
      `DISPOSABLE_EMAIL_DOMAINS_FILE ${malformed}: line 2: "yopmail.com, trashmail.com" is not a domain (one domain per line)`
    )
  })
})
