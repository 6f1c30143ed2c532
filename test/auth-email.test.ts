/**
 * Sign-in by e-mail code (issue 9): over real sockets, with the code read out of the mail a real SMTP server
 * received; attempts, expiry, one CF ID per e-mail, the sign-up limit per IP, and the outbox without SMTP.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { makeClient, sessionCookieOf, signInByEmail } from "./support/accounts.ts"
import { createTestDatabase, queryDatabase, type TestDatabase } from "./support/database.ts"
import type { Mailbox } from "./support/mailbox.ts"
import { startAccountServer } from "./support/accountServer.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

let database: TestDatabase
let mailbox: Mailbox
let client: ReturnType<typeof makeClient>
let close: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startAccountServer()
  ;({ database, mailbox, client } = started)
  close = started.close
}, 60_000)

afterAll(async () => {
  await close?.()
})

const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(database, text, values)

describe("sign-in by e-mail code", () => {
  it("mails a code, and the code signs in: a CF ID, a session cookie, /v1/me", async () => {
    const started = await client.call("POST", "/v1/auth/email/start", { email: "Alice@Example.com" }, { ip: "10.0.0.1" })
    expect(started.status).toBe(202)
    expect(started.body).toMatchObject({ email: "alice@example.com" })
    const code = await mailbox.codeFor("alice@example.com")
    expect(code).toMatch(/^[0-9]{6}$/)
    expect(JSON.stringify(await query("SELECT code_hash FROM email_codes"))).not.toContain(code)

    const verified = await client.call("POST", "/v1/auth/email/verify", { email: "alice@example.com", code }, { ip: "10.0.0.1" })
    expect(verified.status).toBe(200)
    expect(verified.body).toEqual({
      cf_id: expect.stringMatching(/^cf_[a-z2-7]{12}$/),
      email: "alice@example.com",
      wallet_address: null,
      display_name: "al***@example.com",
      referral_code: expect.stringMatching(/^cf_ref_[a-z2-7]{8}$/),
      points_balance: 0,
      active_context: { type: "personal" }
    })
    const cookie = sessionCookieOf(verified)
    const me = await client.call("GET", "/v1/me", undefined, { cookie })
    expect(me.status).toBe(200)
    expect(me.body).toEqual(verified.body)
    const accounts = await query("SELECT kind FROM accounts WHERE owner_cf_id = $1", [verified.body.cf_id])
    expect(accounts).toEqual([{ kind: "personal" }])

    // The code is spent.
    const again = await client.call("POST", "/v1/auth/email/verify", { email: "alice@example.com", code }, { ip: "10.0.0.1" })
    expect(again.status).toBe(401)
    expect(again.body.error.code).toBe("unauthorized")
  })

  it("finds the same CF ID on a second sign-in, however the address is written", async () => {
    const first = await signInByEmail(client, mailbox, "bob@example.com", "10.0.0.2")
    const second = await signInByEmail(client, mailbox, "  BOB@example.COM ", "10.0.0.2")
    expect(second.me.cf_id).toBe(first.me.cf_id)
    expect(second.cookie).not.toBe(first.cookie)
    expect(await query("SELECT count(*)::int AS n FROM identities WHERE email = 'bob@example.com'")).toEqual([{ n: 1 }])
  })

  it("counts wrong codes: five attempts, the sixth refused even with the right code", async () => {
    const email = "carol@example.com"
    await client.call("POST", "/v1/auth/email/start", { email }, { ip: "10.0.0.3" })
    const code = await mailbox.codeFor(email)
    const wrong = code === "000000" ? "111111" : "000000"
    for (let attempt = 1; attempt <= 5; attempt++) {
      const answer = await client.call("POST", "/v1/auth/email/verify", { email, code: wrong }, { ip: "10.0.0.3" })
      expect(answer.status).toBe(401)
      expect(answer.body.error).toMatchObject({ code: "unauthorized", param: "code", details: { attemptsRemaining: 5 - attempt } })
    }
    const sixth = await client.call("POST", "/v1/auth/email/verify", { email, code }, { ip: "10.0.0.3" })
    expect(sixth.status).toBe(401)
    expect(sixth.body.error).toMatchObject({ code: "unauthorized", details: { attemptsRemaining: 0 } })
    expect(await query("SELECT count(*)::int AS n FROM identities WHERE email = $1", [email])).toEqual([{ n: 0 }])
  })

  it("refuses an expired code", async () => {
    const email = "dave@example.com"
    await client.call("POST", "/v1/auth/email/start", { email }, { ip: "10.0.0.4" })
    const code = await mailbox.codeFor(email)
    await query("UPDATE email_codes SET expires_at = now() - interval '1 second' WHERE email = $1", [email])
    const answer = await client.call("POST", "/v1/auth/email/verify", { email, code }, { ip: "10.0.0.4" })
    expect(answer.status).toBe(401)
    expect(answer.body.error.code).toBe("unauthorized")
  })

  it("limits codes per address", async () => {
    const email = "erin@example.com"
    const statuses: Array<number> = []
    for (let i = 0; i < 6; i++) statuses.push((await client.call("POST", "/v1/auth/email/start", { email }, { ip: `10.0.1.${i}` })).status)
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429])
    const refused = await client.call("POST", "/v1/auth/email/start", { email }, { ip: "10.0.1.9" })
    expect(refused.body.error).toMatchObject({ code: "rate_limited", details: { retryAfterSeconds: expect.any(Number) } })
    expect(refused.headers.get("retry-after")).toMatch(/^[0-9]+$/)
  })

  it("refuses the 11th CF ID created from one IP within 24 hours (429 rate_limited)", async () => {
    const ip = "10.0.2.1"
    for (let i = 0; i < 10; i++) await signInByEmail(client, mailbox, `signup${i}@example.com`, ip)
    await client.call("POST", "/v1/auth/email/start", { email: "signup10@example.com" }, { ip })
    const code = await mailbox.codeFor("signup10@example.com")
    const refused = await client.call("POST", "/v1/auth/email/verify", { email: "signup10@example.com", code }, { ip })
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatchObject({ code: "rate_limited", details: { retryAfterSeconds: expect.any(Number) } })
    expect(await query("SELECT count(*)::int AS n FROM identities WHERE created_ip = $1", [ip])).toEqual([{ n: 10 }])
    // An existing CF ID still signs in from there, and the refused code stays usable from elsewhere.
    await signInByEmail(client, mailbox, "signup0@example.com", ip)
    const elsewhere = await client.call("POST", "/v1/auth/email/verify", { email: "signup10@example.com", code }, { ip: "10.0.2.2" })
    expect(elsewhere.status).toBe(200)
  })

  it("answers bad input in the envelope (422 with issues) and writes nothing", async () => {
    const before = await query("SELECT (SELECT count(*) FROM email_codes)::int AS codes, (SELECT count(*) FROM identities)::int AS ids")
    for (const [path, body] of [
      ["/v1/auth/email/start", {}],
      ["/v1/auth/email/start", { email: "not-an-address" }],
      ["/v1/auth/email/start", { email: 42 }],
      ["/v1/auth/email/verify", { email: "x@example.com", code: "12345" }],
      ["/v1/auth/email/verify", { email: "x@example.com", code: "123456", referralCode: "nope" }],
      ["/v1/auth/siwe/verify", { message: "", signature: 1 }]
    ] as const) {
      const answer = await client.call("POST", path, body, { ip: "10.0.3.1" })
      expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(422)
      expect(answer.body.error).toMatchObject({ code: "validation_failed", type: "validation_error" })
      expect(answer.body.error.issues.length).toBeGreaterThan(0)
    }
    const malformed = await client.call("POST", "/v1/auth/email/start", "{not json", { ip: "10.0.3.1" })
    expect(malformed.status).toBe(400)
    expect(await query("SELECT (SELECT count(*) FROM email_codes)::int AS codes, (SELECT count(*) FROM identities)::int AS ids")).toEqual(before)
  })
})

describe("without SMTP_URL", () => {
  let outboxDatabase: TestDatabase
  let outboxServer: TestServer

  beforeAll(async () => {
    outboxDatabase = await createTestDatabase()
    outboxServer = await startTestServer({ DATABASE_URL: outboxDatabase.url, LOG_LEVEL: "INFO" })
  }, 60_000)

  afterAll(async () => {
    await outboxServer?.close()
    await outboxDatabase?.close()
  })

  it("keeps the mail in mail_outbox and logs the code at INFO, and that code signs in", async () => {
    const lines: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
      lines.push(args.map(String).join(" "))
    })
    let started
    try {
      started = await makeClient(outboxServer.baseUrl).call("POST", "/v1/auth/email/start", { email: "local@example.com" })
    } finally {
      spy.mockRestore()
    }
    expect(started.status).toBe(202)
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => String(entry.message).includes("local@example.com"))
    expect(logged).toMatchObject({ logLevel: "INFO", annotations: { to: "local@example.com", code: expect.stringMatching(/^[0-9]{6}$/) } })
    const code = logged.annotations.code as string

    const db = new pg.Client({ connectionString: outboxDatabase.url })
    await db.connect()
    const outbox = (await db.query("SELECT to_address, body_text FROM mail_outbox")).rows
    await db.end()
    expect(outbox).toHaveLength(1)
    expect(outbox[0].to_address).toBe("local@example.com")
    expect(outbox[0].body_text).toContain(code)

    const verified = await makeClient(outboxServer.baseUrl).call("POST", "/v1/auth/email/verify", { email: "local@example.com", code })
    expect(verified.status).toBe(200)
    expect(verified.body.email).toBe("local@example.com")
  })
})

describe("AUTH_CODE_PEPPER on a shared database", () => {
  const startCapturingWarnings = async (env: Record<string, string>) => {
    const database = await createTestDatabase()
    const lines: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
      lines.push(args.map(String).join(" "))
    })
    try {
      const server = await startTestServer({ DATABASE_URL: database.url, LOG_LEVEL: "WARN", ...env })
      await server.close()
    } finally {
      spy.mockRestore()
      await database.close()
    }
    return lines.filter((line) => line.includes("AUTH_CODE_PEPPER"))
  }

  it("warns at start when it is unset (each replica would draw its own and refuse the others' codes), and not when it is set", async () => {
    const unset = await startCapturingWarnings({})
    expect(unset).toHaveLength(1)
    expect(JSON.parse(unset[0]!)).toMatchObject({ logLevel: "WARN", message: expect.stringContaining("every replica") })
    expect(await startCapturingWarnings({ AUTH_CODE_PEPPER: "a-shared-pepper-of-enough-length" })).toEqual([])
  }, 60_000)
})
