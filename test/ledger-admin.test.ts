/**
 * Operators grant credits (issue 9 item 5): `POST /v1/admin/accounts/{cfId}/credits` behind the maintainer token,
 * over a real socket, and `npm run accounts -- grant <email|cf_id|wallet> <credits>`.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { cleanEnv, startProcess } from "./support/process.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

const TOKEN = "maintainer-secret-for-ledger-tests"
let database: TestDatabase
let server: TestServer
let client: pg.Client

beforeAll(async () => {
  database = await createTestDatabase()
  server = await startTestServer({ DATABASE_URL: database.url, MAINTAINER_TOKEN: TOKEN })
  client = new pg.Client({ connectionString: database.url })
  await client.connect()
}, 60_000)

afterAll(async () => {
  await client?.end()
  await server?.close()
  await database?.close()
})

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
const base32 = (length: number) => Array.from(randomBytes(length), (byte) => BASE32[byte % 32]).join("")

/** An identity with its personal account, as sign-in creates them. */
const createIdentity = async () => {
  const cfId = `cf_${base32(12)}`
  const email = `${cfId}@example.com`
  const wallet = `0x${randomBytes(20).toString("hex")}`
  await client.query(
    "INSERT INTO identities (cf_id, email, wallet_address, display_name, referral_code) VALUES ($1, $2, $3, $1, $4)",
    [cfId, email, wallet, `cf_ref_${base32(8)}`]
  )
  const { rows } = await client.query<{ id: string }>("INSERT INTO accounts (owner_cf_id, kind) VALUES ($1, 'personal') RETURNING id", [cfId])
  return { cfId, email, wallet, accountId: rows[0]!.id }
}

const balanceOf = async (accountId: string) => {
  const { rows } = await client.query<{ balance: string; entries: string }>(
    `SELECT balance_wei::text AS balance, (SELECT count(*) FROM ledger_entries WHERE account_id = $1)::text AS entries
     FROM accounts WHERE id = $1`,
    [accountId]
  )
  return { balance: rows[0]!.balance, entries: Number(rows[0]!.entries) }
}

const grant = (cfId: string, body: unknown, token: string | null = TOKEN) =>
  fetch(`${server.baseUrl}/v1/admin/accounts/${cfId}/credits`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })

interface ErrorBody {
  readonly error: { readonly code: string; readonly type: string; readonly param?: string; readonly issues?: ReadonlyArray<{ param: string }> }
}

describe("POST /v1/admin/accounts/{cfId}/credits", () => {
  it("credits the account and answers the entry and the balance", async () => {
    const { cfId, accountId } = await createIdentity()
    const first = await grant(cfId, { amountWei: "2500000000000000000", note: "welcome" })
    expect(first.status).toBe(200)
    expect(await first.json()).toMatchObject({
      cfId,
      accountId,
      amountWei: "2500000000000000000",
      balanceWei: "2500000000000000000",
      note: "welcome"
    })
    // SPEC: wei quantities may be numbers or digit strings.
    const second = await grant(cfId, { amountWei: 500 })
    expect(await second.json()).toMatchObject({ amountWei: "500", balanceWei: "2500000000000000500", note: null })
    expect(await balanceOf(accountId)).toEqual({ balance: "2500000000000000500", entries: 2 })
  })

  it("answers bad input with 422 in the envelope and writes nothing", async () => {
    const { cfId, accountId } = await createIdentity()
    for (const body of [
      {},
      { amountWei: "-1" },
      { amountWei: "0" },
      { amountWei: 0 },
      { amountWei: 1.5 },
      { amountWei: 2 ** 53 },
      { amountWei: "12abc" },
      { amountWei: "1".repeat(79) },
      { amountWei: "1", note: "" },
      { amountWei: "1", note: "x".repeat(501) }
    ]) {
      const response = await grant(cfId, body)
      expect(response.status, JSON.stringify(body)).toBe(422)
      const error = ((await response.json()) as ErrorBody).error
      expect(error).toMatchObject({ code: "validation_failed", type: "validation_error" })
      expect(error.issues!.length).toBeGreaterThan(0)
    }
    const malformed = await grant("bob", { amountWei: "1" })
    expect(malformed.status).toBe(422)
    expect(((await malformed.json()) as ErrorBody).error).toMatchObject({ code: "validation_failed", param: "cfId" })
    expect(await balanceOf(accountId)).toEqual({ balance: "0", entries: 0 })
  })

  it("answers 404 for a CF ID that names nobody, and 401 without the maintainer token", async () => {
    const unknown = await grant(`cf_${"a".repeat(12)}`, { amountWei: "1" })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as ErrorBody).error.code).toBe("not_found")

    const { cfId, accountId } = await createIdentity()
    const refused = await grant(cfId, { amountWei: "1" }, null)
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as ErrorBody).error.code).toBe("unauthorized")
    expect(await balanceOf(accountId)).toEqual({ balance: "0", entries: 0 })
  })
})

const runCli = async (args: ReadonlyArray<string>) => {
  const cli = startProcess(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], cleanEnv({ DATABASE_URL: database.url, LOG_LEVEL: "WARN" }))
  const code = await cli.exited
  return { code, output: cli.output() }
}

describe("npm run accounts -- grant", () => {
  it("grants credits to an account named by e-mail, wallet or CF ID, parsed exactly into wei", async () => {
    const { cfId, email, wallet, accountId } = await createIdentity()
    const byEmail = await runCli(["accounts", "grant", email.toUpperCase(), "25"])
    expect(byEmail.code).toBe(0)
    expect(byEmail.output).toMatch(
      new RegExp(`granted 25 credits \\(25000000000000000000 wei\\) to ${cfId} \\(account ${accountId}\\), ledger entry \\d+; balance now 25 credits`)
    )
    const byWallet = await runCli(["accounts", "grant", wallet, "0.000000000000000001"])
    expect(byWallet.output).toMatch(/granted 0\.000000000000000001 credits \(1 wei\)/)
    const byCfId = await runCli(["accounts", "grant", cfId, "1.5"])
    expect(byCfId.output).toMatch(/balance now 26\.500000000000000001 credits \(26500000000000000001 wei\)/)
    expect(await balanceOf(accountId)).toEqual({ balance: "26500000000000000001", entries: 3 })
  }, 60_000)

  it("refuses an amount it cannot read exactly, and an identity it cannot find, writing nothing", async () => {
    const { cfId, accountId } = await createIdentity()
    const [inexact, tooFine, unknown, missing] = await Promise.all([
      runCli(["accounts", "grant", cfId, "1e3"]),
      runCli(["accounts", "grant", cfId, "0.0000000000000000001"]),
      runCli(["accounts", "grant", "nobody@example.com", "1"]),
      runCli(["accounts", "grant", cfId])
    ])
    expect(inexact.code).toBe(1)
    expect(inexact.output).toMatch(/error: credit amount "1e3" must be a plain decimal \(no exponent\)/)
    expect(tooFine.code).toBe(1)
    expect(tooFine.output).toMatch(/at most 18 allowed/)
    expect(unknown.code).toBe(1)
    expect(unknown.output).toMatch(/error: No account belongs to nobody@example.com/)
    expect(missing.code).toBe(2)
    expect(await balanceOf(accountId)).toEqual({ balance: "0", entries: 0 })
  }, 60_000)
})
