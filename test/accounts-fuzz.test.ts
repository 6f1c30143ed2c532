/**
 * Hostile input at volume on the account side. Every endpoint of the me, account, keys, orgs, pools, apps, account-tools
 * and points groups that takes a body (read from the HttpApi definitions: an endpoint added later is fuzzed, or fails
 * this suite for want of a seed body; points has none today, and the endpoints without a body are listed, not sent) gets ACCOUNTS_FUZZ_COUNT (default 2,000) seeded bodies, each a valid body mutated
 * 1-3 times (test/support/fuzzAccountBodies.ts), sent over a real socket to the real server on a real PostgreSQL
 * database by a caller the endpoint lets in (the Owner's session with the console's header; an app grant for the
 * account tools), with path ids naming the Owner's real key, organization and pool, so the bodies reach validation
 * and the services rather than the authentication refusal. What holds:
 * - no answer is 5xx; a success has a status its endpoint declares and decodes under its success schema; every refusal
 *   is SPEC "Errors"' envelope with a known code at that code's status;
 * - a refusal changes nothing. The bodies go BATCH at a time (CONCURRENCY in flight) with a digest of every table
 *   between batches (test/support/dbDigest.ts). After a batch without a success the database is the same row for row.
 *   After one with successes, only the tables the endpoint's successes write (ACCEPTED_WRITES) differ, and each gained
 *   exactly the rows the successes add (a created key is one api_keys row: a refusal that wrote a row would show).
 *   A digest per request would be exact but does not fit the time; where successes are frequent the batch rule leaves
 *   a refusal free to rewrite a row of the endpoint's own tables, and nothing else;
 * - money moves only where an accepted transfer moved it: across every other endpoint the ledger and every balance are
 *   unchanged; across the two transfers between the Owner and the organization the new ledger entries are exactly one
 *   transfer_out and one transfer_in per accepted transfer, of its amount, and both balances moved by their sum.
 *   Withdrawals are sent by an account without credit: a valid one is refused for the balance (402) before the chain
 *   (the funding suites pay out for real);
 * - memory does not grow without bound: the RSS of this process (the server runs in it) is sampled every BATCH requests,
 *   and after a full garbage collection at the end of each endpoint.
 * The one refusal that writes by design is a wrong e-mail code, which counts an attempt (REFUSAL_WRITES).
 *
 * Replay: FUZZ_SEED=<seed> (printed with every failure) regenerates the same bodies; `generateAccountFuzzBody(endpoint,
 * pathParams, seed, index)` one of them; ACCOUNTS_FUZZ_ONLY=<group.endpoint> runs one endpoint.
 */
import { HttpApi } from "@effect/platform"
import { Either, Option, Schema } from "effect"
import * as Http from "node:http"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ServerApi } from "../src/api/ServerApi.ts"
import { CONSOLE_HEADERS } from "../src/http/csrf.ts"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { envelopeProblem } from "./support/errorEnvelope.ts"
import { changedTables, databaseDigest, type DatabaseDigest } from "./support/dbDigest.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { envInt } from "./support/fuzzCore.ts"
import { type AccountFuzzBody, generateAccountFuzzBody, type Placeholder, SEED_BODIES, withIds } from "./support/fuzzAccountBodies.ts"
import { asUser, grantCredits, makeTeam, type TeamUser, walletUsers } from "./support/orgTeam.ts"
import { recordFigure } from "./support/reliability.ts"

const SEED = envInt("FUZZ_SEED", 0xacc0_2011, 0)
const COUNT = envInt("ACCOUNTS_FUZZ_COUNT", 2_000, 1)
const ONLY = process.env.ACCOUNTS_FUZZ_ONLY ?? ""
const CONCURRENCY = envInt("ACCOUNTS_FUZZ_CONCURRENCY", 8, 1)
/** Bodies between two digests of the database, and between two samples of the RSS. */
const BATCH = 250
const REQUEST_TIMEOUT_MS = 30_000

/** The groups of the issue: the account (with its identity, `me`), organizations and their pools, keys, apps, points. */
const FUZZED_GROUPS = ["me", "account", "keys", "orgs", "pools", "apps", "accountTools", "points"]

interface Endpoint {
  /** `<group>.<endpoint>`, the key of SEED_BODIES. */
  readonly key: string
  readonly method: string
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly payload: Schema.Schema<unknown, unknown>
  /** Declared success statuses, with the schema of each (none for an empty body). */
  readonly successes: ReadonlyMap<number, Schema.Schema<unknown, unknown> | undefined>
}

const selected: Array<Endpoint> = []
const withoutBody: Array<string> = []
HttpApi.reflect(ServerApi as unknown as HttpApi.HttpApi.AnyWithProps, {
  onGroup: () => {},
  onEndpoint: ({ group, endpoint, successes }) => {
    if (!FUZZED_GROUPS.includes(group.identifier)) return
    if (Option.isNone(endpoint.payloadSchema)) return void withoutBody.push(`${endpoint.method} ${endpoint.path}`)
    selected.push({
      key: `${group.identifier}.${endpoint.name}`,
      method: endpoint.method,
      path: endpoint.path,
      params: [...endpoint.path.matchAll(/:(\w+)/g)].map((match) => match[1]!),
      payload: endpoint.payloadSchema.value as unknown as Schema.Schema<unknown, unknown>,
      successes: new Map([...successes].map(([status, { ast }]) => [status, Option.isSome(ast) ? (Schema.make(ast.value) as unknown as Schema.Schema<unknown, unknown>) : undefined]))
    })
  }
})
const fuzzed = ONLY === "" ? selected : selected.filter((endpoint) => endpoint.key === ONLY)

/**
 * The tables an endpoint's successes write (besides the volatile ones of dbDigest.ts), with the rows each success adds
 * to each: a batch with successes may change these tables and no others, each by exactly that many rows.
 */
const ACCEPTED_WRITES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  "me.updateMe": { identities: 0 },
  "me.emailStart": { email_codes: 1, mail_outbox: 1 },
  "me.emailVerify": {},
  "keys.issueKey": { api_keys: 1 },
  "keys.updateKey": { api_keys: 0 },
  "account.putLimits": { accounts: 0 },
  "account.postWithdrawal": {},
  "orgs.createOrganization": { accounts: 1, organizations: 1, organization_members: 1 },
  "orgs.contributeCredits": { accounts: 0, ledger_entries: 2 },
  "orgs.withdrawCredits": { accounts: 0, ledger_entries: 2 },
  // The active context is the identity's (identities.active_account_id), not the session's.
  "orgs.setContext": { identities: 0 },
  "orgs.invite": { organization_invitations: 1, mail_outbox: 1 },
  "orgs.acceptInvitation": {},
  "pools.createPool": { spending_pools: 1 },
  "pools.updatePool": { spending_pools: 0 },
  "apps.createAppGrant": { app_grants: 1 },
  // account.set_budget_caps sets the caps on the account's row; the other tools read.
  "accountTools.callAccountTool": { accounts: 0 }
}
/**
 * The one refusal that writes, by design: a wrong e-mail code counts an attempt against the code (SPEC: 5 attempts).
 * That column is left out of the comparison; every other column and table is compared as for any refusal.
 */
const REFUSAL_WRITES: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>> = {
  "me.emailVerify": { email_codes: ["attempts"] }
}
/** The two endpoints that move credit; everywhere else the ledger and every balance stay as they were. */
const TRANSFERS = new Set(["orgs.contributeCredits", "orgs.withdrawCredits"])

let fx: ExchangeFixture
let db: pg.Client
const query = async (text: string, values: ReadonlyArray<unknown> = []) => (await db.query(text, [...values])).rows
let ids: Record<Placeholder, string>
let owner: TeamUser & { readonly cookie: string }
let unfundedCookie: string
let appToken: string
let ownerAccount: string
let orgAccount: string

const ok = async (user: TeamUser, method: string, path: string, body?: unknown) => {
  const answer = await user.call(method, path, body)
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300)
  return answer.body
}

beforeAll(async () => {
  // Background jobs that write by themselves are off, so a table that changed was changed by a request.
  fx = await startExchangeFixture({ RATE_LIMIT_ENABLED: "false", POINTS_RECONCILE_INTERVAL_SECONDS: "0", HOLD_SWEEP_INTERVAL_SECONDS: "0", FUNDING_SCAN_INTERVAL_SECONDS: "0" })
  db = new pg.Client({ connectionString: fx.database.url })
  await db.connect()
  const ip = "198.51.100.10"
  const signedIn = await signInByWallet(makeClient(fx.baseUrl), privateKeyToAccount(generatePrivateKey()), ip)
  owner = { ...asUser(fx.baseUrl, signedIn.me.cf_id, signedIn.cookie, ip), cookie: signedIn.cookie }
  const users = walletUsers(fx.baseUrl, "198.51.101")
  const [admin, member, stranger] = [await users(), await users(), await users()]
  unfundedCookie = (await signInByWallet(makeClient(fx.baseUrl), privateKeyToAccount(generatePrivateKey()), "198.51.100.11")).cookie
  await grantCredits(fx.baseUrl, owner.cfId, 100n * ONE_CREDIT)

  const orgId = await makeTeam(query, owner, admin, member, "Fuzz team")
  const otherOrgId = (await ok(stranger, "POST", "/v1/orgs", { name: "Someone else's" })).id
  const pool = await ok(owner, "POST", `/v1/orgs/${orgId}/pools`, { name: "team pool" })
  await ok(owner, "POST", `/v1/orgs/${orgId}/invitations`, { email: "invited@example.com", role: "member" })
  const [mail] = await query("SELECT body_text FROM mail_outbox WHERE to_address = 'invited@example.com' ORDER BY id DESC LIMIT 1")
  const invitationToken = /(cfi_[A-Za-z0-9_-]{43})/.exec(mail?.body_text ?? "")?.[1]
  expect(invitationToken, "the invitation's mail carries its link").toBeDefined()
  await ok(owner, "POST", `/v1/orgs/${orgId}/credits`, { amountWei: ONE_CREDIT.toString() })
  const key = await ok(owner, "POST", "/v1/keys", { label: "fuzzed key" })
  appToken = (await ok(owner, "POST", "/v1/apps/grants", { appName: "fuzz tools", scopes: ["account:read", "account:act"] })).token
  ids = { orgId, otherOrgId, ownerCfId: owner.cfId, memberCfId: member.cfId, adminCfId: admin.cfId, keyId: key.key.id, poolId: pool.id, invitationToken: invitationToken! }
  ownerAccount = (await query("SELECT id::text FROM accounts WHERE owner_cf_id = $1 AND kind = 'personal'", [owner.cfId]))[0].id
  orgAccount = (await query("SELECT account_id::text AS id FROM organizations WHERE id = $1", [orgId]))[0].id
}, 120_000)

afterAll(async () => {
  agent.destroy()
  await db?.end()
  await fx?.close()
})

/** The real resource a path parameter names: the Owner's key, organization and pool. */
const realSegment = (endpoint: Endpoint, param: string): string => {
  if (param === "id" && endpoint.path.startsWith("/v1/keys/")) return ids.keyId
  if (param === "id" && endpoint.path.startsWith("/v1/orgs/")) return ids.orgId
  if (param === "poolId") return ids.poolId
  throw new Error(`${endpoint.key}: no real resource for :${param}; name one in realSegment`)
}

/** Who sends the bodies: whom the endpoint lets in, acting on its own resources. */
const credentialsFor = (endpoint: Endpoint): Record<string, string> => {
  if (endpoint.key === "accountTools.callAccountTool") return { authorization: `Bearer ${appToken}` }
  return { cookie: endpoint.key === "account.postWithdrawal" ? unfundedCookie : owner.cookie, ...CONSOLE_HEADERS }
}

interface Outcome {
  readonly status: number
  readonly code: string | undefined
  readonly body: unknown
  /** The answer's length in characters (a refusal quotes the value it refused). */
  readonly length: number
  readonly problem: string | undefined
}

/**
 * node:http over kept-alive sockets rather than fetch: the client shares this process (and its one core) with the
 * server, and fetch's own cost per request halved the rate the server was given.
 */
const agent = new Http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const request = (method: string, url: string, headers: Record<string, string>, body: Uint8Array) =>
  new Promise<{ status: number; contentType: string; text: string }>((resolve, reject) => {
    const sent = Http.request(url, { method, agent, headers: { ...headers, "content-length": String(body.length) } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, contentType: response.headers["content-type"] ?? "", text: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    sent.setTimeout(REQUEST_TIMEOUT_MS, () => sent.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)))
    sent.on("error", reject)
    sent.end(body)
  })

const send = async (endpoint: Endpoint, fuzz: AccountFuzzBody): Promise<Outcome> => {
  const path = endpoint.path.replace(/:(\w+)/g, (_, param: string) => fuzz.pathSegments[param] ?? realSegment(endpoint, param))
  let status: number
  let contentType: string
  let text: string
  try {
    const headers = { ...credentialsFor(endpoint), "x-forwarded-for": "198.51.100.10", ...(fuzz.contentType === undefined ? {} : { "content-type": fuzz.contentType }) }
    ;({ status, contentType, text } = await request(endpoint.method, `${fx.baseUrl}${path}${fuzz.query}`, headers, withIds(fuzz.bytes, ids)))
  } catch (error) {
    return { status: 0, length: 0, code: undefined, body: undefined, problem: `no complete answer: ${String(error)}` }
  }
  const answer = `status ${status}, body ${JSON.stringify(text.slice(0, 800))}`
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { status, length: text.length, code: undefined, body: text, problem: `the answer is not JSON: ${answer}` }
  }
  if (status >= 200 && status < 300) {
    if (!endpoint.successes.has(status)) return { status, length: text.length, code: undefined, body, problem: `a success the endpoint does not declare: ${answer}` }
    const schema = endpoint.successes.get(status)
    if (schema !== undefined && Either.isLeft(Schema.decodeUnknownEither(schema)(body))) return { status, length: text.length, code: undefined, body, problem: `a success that is not its declared schema: ${answer}` }
    return { status, length: text.length, code: undefined, body, problem: undefined }
  }
  const problem = !contentType.startsWith("application/json") ? "a refusal that is not application/json" : envelopeProblem(status, body)
  const code = (body as { error?: { code?: string } })?.error?.code
  return { status, length: text.length, code, body, problem: problem === undefined && status < 500 ? undefined : `${status >= 500 ? "5xx; " : ""}${problem ?? "server error"}: ${answer}` }
}

/** Balances of every account and the ledger's entries: what no endpoint but a transfer may move. */
const moneyDigest = async () => {
  // A new account (an organization's) starts at zero: the accounts holding or reserving nothing are left out.
  const [balances] = await query("SELECT md5(string_agg(id || ':' || balance_wei || ':' || reserved_wei, '|' ORDER BY id)) AS h FROM accounts WHERE balance_wei <> 0 OR reserved_wei <> 0")
  const [entries] = await query("SELECT count(*)::int AS n, coalesce(max(id), 0)::text AS last FROM ledger_entries")
  return { balances: balances.h as string, entries: entries.n as number, lastEntry: entries.last as string }
}
const balanceOf = async (account: string) => BigInt((await query("SELECT balance_wei::text AS b FROM accounts WHERE id = $1", [account]))[0].b)

const describeFailure = (fuzz: AccountFuzzBody, problem: string) => {
  // Long repetitions (deep nesting, long strings) are abbreviated; the replay regenerates the exact bytes.
  const shown = Buffer.from(fuzz.bytes)
    .toString("utf8")
    .replace(/(.{1,6}?)\1{15,}/gsu, (run, unit: string) => `<${JSON.stringify(unit)} x ${Math.round(run.length / unit.length)}>`)
  return [
    `FUZZ_SEED=${SEED} endpoint=${fuzz.endpoint} index=${fuzz.index}: ${problem}`,
    `  replay: generateAccountFuzzBody(${JSON.stringify(fuzz.endpoint)}, <path params>, ${SEED}, ${fuzz.index}); seed body ${fuzz.seedBody}; mutations ${JSON.stringify(fuzz.mutations)}`,
    `  content-type ${fuzz.contentType ?? "(none)"}; path segments ${JSON.stringify(fuzz.pathSegments)}; query ${JSON.stringify(fuzz.query.slice(0, 80))}`,
    `  body: ${JSON.stringify(shown.length > 1500 ? `${shown.slice(0, 1500)}... (${fuzz.bytes.length} bytes)` : shown)}`
  ].join("\n")
}

/** The table's row count in a digest (`<rows>:<md5>`). */
const rowsIn = (digest: DatabaseDigest, table: string) => Number((digest[table] ?? "0:").split(":")[0])

/** What a batch did to the database, judged against what its successes may do. */
const batchProblem = (endpoint: Endpoint, successes: number, before: DatabaseDigest, after: DatabaseDigest): string | undefined => {
  const writes = ACCEPTED_WRITES[endpoint.key] ?? {}
  const changed = changedTables(before, after)
  if (successes === 0) return changed.length === 0 ? undefined : `changed ${changed.join(", ")} though every body was refused`
  const foreign = changed.filter((table) => !(table in writes))
  if (foreign.length > 0) return `changed ${foreign.join(", ")}, which no accepted ${endpoint.key} writes`
  const miscounted = Object.entries(writes).filter(([table, rows]) => rowsIn(after, table) - rowsIn(before, table) !== rows * successes)
  return miscounted.length === 0
    ? undefined
    : miscounted.map(([table, rows]) => `${table} gained ${rowsIn(after, table) - rowsIn(before, table)} rows, not ${rows} per success`).join("; ")
}

// A full garbage collection before the samples that are compared, so they measure what is kept, not what is not yet
// collected (V8 lets garbage pile up to hundreds of MB before it collects).
V8.setFlagsFromString("--expose-gc")
const collectGarbage = Vm.runInNewContext("gc") as () => void

const statuses = new Map<string, number>()
const histogramOf = (counts: ReadonlyMap<string, number>) => [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([label, n]) => `${label}: ${n}`).join(", ")
/** RSS every BATCH requests, as it is. */
const rssSamples: Array<number> = []
/** RSS after a full collection, at the end of each endpoint's run. */
const settledRss: Array<number> = []
const accepted = new Map<string, number>()
let requests = 0
let comparingMs = 0

interface Run {
  readonly statuses: Map<string, number>
  readonly failures: Array<string>
  /** The answers of the successes (the transfers' are checked against the ledger). */
  readonly acceptedAnswers: Array<unknown>
  longestAnswer: number
  batches: number
  batchesWithoutSuccess: number
}

/** All of an endpoint's bodies, BATCH at a time, CONCURRENCY in flight, with the database compared between batches. */
const runEndpoint = async (endpoint: Endpoint): Promise<Run> => {
  const run: Run = { statuses: new Map(), failures: [], acceptedAnswers: [], longestAnswer: 0, batches: 0, batchesWithoutSuccess: 0 }
  const digest = async () => {
    const started = Date.now()
    const taken = await databaseDigest(query, REFUSAL_WRITES[endpoint.key])
    comparingMs += Date.now() - started
    return taken
  }
  let before = await digest()
  for (let from = 0; from < COUNT; from += BATCH) {
    const indexes = Array.from({ length: Math.min(BATCH, COUNT - from) }, (_, i) => from + i)
    let successes = 0
    const worker = async () => {
      for (let index = indexes.shift(); index !== undefined; index = indexes.shift()) {
        const fuzz = generateAccountFuzzBody(endpoint.key, endpoint.params, SEED, index)
        const outcome = await send(endpoint, fuzz)
        requests++
        const label = outcome.code === undefined ? String(outcome.status) : `${outcome.status} ${outcome.code}`
        for (const counts of [statuses, run.statuses]) counts.set(label, (counts.get(label) ?? 0) + 1)
        run.longestAnswer = Math.max(run.longestAnswer, outcome.length)
        if (outcome.problem !== undefined) run.failures.push(describeFailure(fuzz, outcome.problem))
        if (outcome.status >= 200 && outcome.status < 300) {
          successes++
          run.acceptedAnswers.push(outcome.body)
        }
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    rssSamples.push(process.memoryUsage().rss)
    const after = await digest()
    run.batches++
    if (successes === 0) run.batchesWithoutSuccess++
    const problem = batchProblem(endpoint, successes, before, after)
    if (problem !== undefined) run.failures.push(`FUZZ_SEED=${SEED} endpoint=${endpoint.key} indexes ${from}-${from + BATCH - 1} (${successes} accepted): ${problem}`)
    before = after
  }
  accepted.set(endpoint.key, run.acceptedAnswers.length)
  return run
}

/** The ledger across one endpoint's run: moved exactly by its accepted transfers, or not at all. */
const checkMoney = async (endpoint: Endpoint, run: Run, before: Awaited<ReturnType<typeof moneyDigest>>, balances: { owner: bigint; org: bigint }) => {
  if (!TRANSFERS.has(endpoint.key)) {
    expect.soft(await moneyDigest(), `${endpoint.key}: the ledger and the balances (${run.acceptedAnswers.length} bodies accepted)`).toEqual(before)
    return
  }
  const transfers = run.acceptedAnswers as Array<{ transferId: string; amountWei: string }>
  const total = transfers.reduce((sum, t) => sum + BigInt(t.amountWei), 0n)
  const [from, to] = endpoint.key === "orgs.contributeCredits" ? [ownerAccount, orgAccount] : [orgAccount, ownerAccount]
  const sign = from === ownerAccount ? -1n : 1n
  expect.soft(await balanceOf(ownerAccount), `${endpoint.key}: the Owner's balance moved by the accepted transfers`).toBe(balances.owner + sign * total)
  expect.soft(await balanceOf(orgAccount), `${endpoint.key}: the organization's balance moved by the accepted transfers`).toBe(balances.org - sign * total)
  const entries = await query("SELECT account_id::text AS account, kind, amount_wei::text AS amount, reference FROM ledger_entries WHERE id > $1", [before.lastEntry])
  const expected = transfers.flatMap((t) => [
    { account: from, kind: "transfer_out", amount: `-${t.amountWei}`, reference: t.transferId },
    { account: to, kind: "transfer_in", amount: t.amountWei, reference: t.transferId }
  ])
  const sorted = (rows: Array<any>) => rows.map((r) => JSON.stringify([r.reference, r.kind, r.account, r.amount])).sort()
  expect.soft(sorted(entries), `${endpoint.key}: one transfer_out and one transfer_in per accepted transfer`).toEqual(sorted(expected))
}

describe(`fuzzing the account-side endpoints with ${COUNT} seeded bodies each`, () => {
  it("takes the endpoints from the definitions, and has a valid seed body for each", () => {
    console.log(`[accounts-fuzz] FUZZ_SEED=${SEED} ACCOUNTS_FUZZ_COUNT=${COUNT}; ${selected.length} endpoints with a body: ${selected.map((e) => `${e.method} ${e.path}`).join(", ")}`)
    console.log(`[accounts-fuzz] without a body (not fuzzed): ${withoutBody.join(", ")}`)
    const keys = selected.map((e) => e.key)
    expect(keys.filter((key) => SEED_BODIES[key] === undefined), "endpoints with a body and no seed body").toEqual([])
    expect(keys.filter((key) => ACCEPTED_WRITES[key] === undefined), "endpoints with a body and no ACCEPTED_WRITES entry").toEqual([])
    expect(Object.keys(SEED_BODIES).filter((key) => !keys.includes(key)), "seed bodies of no endpoint").toEqual([])
    // Any well-formed ids: the seed bodies must be valid under the payload schema, whatever the fixture's ids are.
    const placeholders: Record<Placeholder, string> = {
      orgId: "org_aaaaaaaaaaaa", otherOrgId: "org_bbbbbbbbbbbb", ownerCfId: "cf_aaaaaaaaaaaa", memberCfId: "cf_bbbbbbbbbbbb",
      adminCfId: "cf_cccccccccccc", keyId: "key_0000000000000000", poolId: "pool_0000000000000000", invitationToken: `cfi_${"A".repeat(43)}`
    }
    for (const endpoint of selected) {
      for (const [i, seed] of (SEED_BODIES[endpoint.key] ?? []).entries()) {
        const json = JSON.parse(Buffer.from(withIds(Buffer.from(JSON.stringify(seed)), placeholders)).toString("utf8"))
        const decoded = Schema.decodeUnknownEither(endpoint.payload)(json)
        expect(Either.isRight(decoded), `${endpoint.key} seed body ${i} ${JSON.stringify(seed)}: ${Either.isLeft(decoded) ? decoded.left.message : ""}`).toBe(true)
      }
    }
    expect(selected.length).toBeGreaterThanOrEqual(17)
  })

  it("generates each body as a pure function of (seed, endpoint, index), so any one can be replayed alone", () => {
    const fingerprint = (endpoint: Endpoint, index: number) => {
      const body = generateAccountFuzzBody(endpoint.key, endpoint.params, SEED, index)
      return JSON.stringify({ ...body, bytes: Buffer.from(body.bytes).toString("base64") })
    }
    for (const endpoint of selected) {
      const forwards = Array.from({ length: 40 }, (_, index) => fingerprint(endpoint, index))
      const backwards = Array.from({ length: 40 }, (_, i) => fingerprint(endpoint, 39 - i)).reverse()
      expect(backwards, endpoint.key).toEqual(forwards)
    }
  })

  it("answers every body below 500, refuses in SPEC's envelope, changes nothing on a refusal, moves money only by accepted transfers", async () => {
    const started = Date.now()
    const failures: Array<string> = []
    for (const endpoint of fuzzed) {
      const endpointStarted = Date.now()
      const money = await moneyDigest()
      const balances = { owner: await balanceOf(ownerAccount), org: await balanceOf(orgAccount) }
      const run = await runEndpoint(endpoint)
      failures.push(...run.failures)
      await checkMoney(endpoint, run, money, balances)
      // The active context is the identity's: back to personal, so the endpoints after this one act as before it.
      if (endpoint.key === "orgs.setContext") await ok(owner, "POST", "/v1/orgs/context", { orgId: null })
      collectGarbage()
      settledRss.push(process.memoryUsage().rss)
      console.log(
        `[accounts-fuzz] ${endpoint.method} ${endpoint.path} (${endpoint.key}): ${COUNT} bodies in ${Date.now() - endpointStarted} ms, ` +
          `${run.batchesWithoutSuccess}/${run.batches} batches all refused, longest answer ${run.longestAnswer} characters; ${histogramOf(run.statuses)}`
      )
    }
    const ms = Date.now() - started
    const mb = (bytes: number) => Math.round(bytes / 1_048_576)
    const range = (samples: Array<number>) => `${mb(Math.min(...samples))}-${mb(Math.max(...samples))} MB`
    console.log(`[accounts-fuzz] ${requests} requests on ${fuzzed.length} endpoints in ${ms} ms (${Math.round((requests * 1000) / ms)}/s; ${comparingMs} ms of it comparing the database); ${histogramOf(statuses)}`)
    console.log(`[accounts-fuzz] RSS ${range(rssSamples)} (${rssSamples.map(mb).join(" ")}); after a collection at each endpoint's end ${range(settledRss)} (${settledRss.map(mb).join(" ")})`)
    // Every failure's first line (its seed, endpoint and index); the body and mutations of the first 20 in full.
    failures.forEach((failure, i) => console.log(`[accounts-fuzz] ${i < 20 ? failure : failure.split("\n")[0]}`))
    expect(failures.length, `${failures.length} failures; the first:\n${failures[0] ?? ""}`).toBe(0)
    expect(requests).toBe(COUNT * fuzzed.length)

    // After a full collection the RSS is what the process keeps: vitest, the server, the client and this suite's tallies
    // (~300 MB). 150 MB more over the ~30,000 requests after the first tenth would be 5 KB kept per request: a leak of
    // anything a request holds (its body, its parsed JSON, its error) would pass it, while the allocator's own
    // fragmentation and the caches that fill once (sessions, keys) stay well below.
    const warm = settledRss[Math.floor(settledRss.length / 10)]!
    expect(mb(settledRss[settledRss.length - 1]! - warm), "RSS growth (MB) after the first tenth of the run").toBeLessThan(150)

    const sum = (keys: Iterable<string>) => [...keys].reduce((total, key) => total + (accepted.get(key) ?? 0), 0)
    recordFigure({
      suite: "test/accounts-fuzz.test.ts",
      tried: "hostile bodies to the account, organization, keys, apps and points endpoints",
      volume: `${fuzzed.length} endpoints x ${COUNT.toLocaleString("en")} bodies = ${requests.toLocaleString("en")} requests, seed ${SEED}`,
      held:
        `0 5xx; every refusal in the envelope at its code's status; a batch of refusals changed no table, a batch with successes only its ` +
        `endpoint's own tables, by exactly the rows they add (${sum(accepted.keys()).toLocaleString("en")} successes in all); the ledger moved only by the ` +
        `${sum(TRANSFERS)} accepted transfers, exactly; RSS after a collection ${mb(settledRss[0]!)} MB after the first endpoint, ` +
        `${mb(settledRss[settledRss.length - 1]!)} MB after the last (growth after the first tenth bounded at 150 MB; the process also holds ` +
        `the suites run before this one)`
    })
  }, 600_000)
})
