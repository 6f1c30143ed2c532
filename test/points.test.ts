/**
 * Points (issue 12 item 6) over a real socket: the append-only ledger, every earning channel with its exact amount and
 * frequency rule, streaks, tiers, the history's pages, the leaderboard and the reconciled balance. The server's clock
 * is frozen at the suite's start, so "today" is one UTC day throughout; earlier days are back-dated ledger entries.
 * The fixture catalog gains a provider with 14 preview models (priced, never in the basket) for the daily cap.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HOT_READS } from "../src/http/hotReads.ts"
import { makeClient, sessionCookieOf } from "./support/accounts.ts"
import { queryDatabase } from "./support/database.ts"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"
import { dayFrom, ledgerOf, siweSignIn, storeIdentity, storeLogins } from "./support/points.ts"

const frozenAt = new Date()
const TODAY = frozenAt.toISOString().slice(0, 10)
const OMEGA_MODELS = Array.from({ length: 14 }, (_, i) => `omega/m-${String(i + 1).padStart(2, "0")}`)

const omegaCard = [
  "provider:",
  "  key: omega",
  "  name: Omega Test",
  "  vendorSlug: omega",
  "  pricingUrl: https://omega.example/pricing",
  "families:",
  "  - key: omega.lab",
  "    name: Lab",
  "models:",
  ...OMEGA_MODELS.flatMap((id) => [
    `  - id: ${id}`,
    "    family: omega.lab",
    `    displayName: ${id}`,
    `    sdkId: ${id.slice("omega/".length)}`,
    "    releasedAt: 2025-01-01",
    "    availability: preview",
    "    kind: text",
    "    reasoning: false",
    "    prices:",
    "      - from: 2025-01-01",
    "        sourceUrl: https://omega.example/pricing",
    "        checkedAt: 2026-11-26",
    "        input: 1",
    "        output: 2"
  ])
].join("\n")

let server: FixtureServer
let client: ReturnType<typeof makeClient>

const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(server.database, text, values)
const points = (cookie: string) => client.call("GET", "/v1/points", undefined, { cookie })
const signIn = async (wallet = privateKeyToAccount(generatePrivateKey()), ip = "203.0.113.1") => {
  const answer = await siweSignIn(client, wallet, ip)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return { wallet, cfId: answer.body.cf_id as string, cookie: sessionCookieOf(answer) }
}
const priceHistory = (model: string, cookie?: string) =>
  client.call("GET", `/v1/oracle/models/${encodeURIComponent(model)}/price-history`, undefined, {
    ip: "198.51.100.7",
    ...(cookie === undefined ? {} : { cookie })
  })
const oracleEntries = (cfId: string) =>
  query(`SELECT source FROM points_ledger WHERE cf_id = $1 AND type = 'oracle_interaction' ORDER BY seq`, [cfId])

beforeAll(async () => {
  server = await startFixtureServer(
    { TRUST_PROXY: "true", RATE_LIMIT_ENABLED: "false", POINTS_RECONCILE_INTERVAL_SECONDS: "1" },
    { frozenAt, editPrices: (dir) => Fs.writeFileSync(Path.join(dir, "cards", "omega.yaml"), omegaCard) }
  )
  client = makeClient(server.baseUrl)
}, 90_000)

afterAll(async () => {
  await server?.close()
})

describe("earning on sign-up and sign-in", () => {
  it("a new CF ID earns the sign-up bonus (100) and the day's login (10): 110, Explorer, streak 1; again the same day earns nothing", async () => {
    const user = await signIn()
    expect((await points(user.cookie)).body).toEqual({ total: 110, tier: "Explorer", currentStreak: 1, longestStreak: 1 })
    expect(await ledgerOf(server.database, user.cfId)).toEqual([
      { type: "signup", amount: 100, source: "signup" },
      { type: "daily_login", amount: 10, source: `daily_login:${TODAY}` }
    ])
    await signIn(user.wallet)
    expect((await points(user.cookie)).body.total).toBe(110)
  })

  it("two sign-ins at once on a new day award one daily_login", async () => {
    const stored = await storeIdentity(server.database)
    await storeLogins(server.database, stored.cfId, [dayFrom(TODAY, -1)])
    const answers = await Promise.all(Array.from({ length: 5 }, () => siweSignIn(client, stored.wallet, "203.0.113.2")))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200])
    expect(await ledgerOf(server.database, stored.cfId)).toEqual([
      { type: "daily_login", amount: 10, source: `daily_login:${dayFrom(TODAY, -1)}` },
      { type: "daily_login", amount: 10, source: `daily_login:${TODAY}` }
    ])
    expect((await points(stored.cookie)).body).toEqual({ total: 20, tier: "Explorer", currentStreak: 2, longestStreak: 2 })
  })

  it("concurrent first sign-ins of one wallet create one CF ID with one sign-up bonus", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const answers = await Promise.all(Array.from({ length: 4 }, () => siweSignIn(client, wallet, "203.0.113.3")))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    const cfIds = new Set(answers.map((answer) => answer.body.cf_id))
    expect(cfIds.size).toBe(1)
    expect(await ledgerOf(server.database, [...cfIds][0])).toEqual([
      { type: "signup", amount: 100, source: "signup" },
      { type: "daily_login", amount: 10, source: `daily_login:${TODAY}` }
    ])
  })
})

describe("streaks", () => {
  it("the 7th consecutive day earns the streak bonus (50) once", async () => {
    const stored = await storeIdentity(server.database)
    await storeLogins(server.database, stored.cfId, [-6, -5, -4, -3, -2, -1].map((offset) => dayFrom(TODAY, offset)))
    await siweSignIn(client, stored.wallet, "203.0.113.4")
    await siweSignIn(client, stored.wallet, "203.0.113.4")
    const ledger = await ledgerOf(server.database, stored.cfId)
    expect(ledger.slice(6)).toEqual([
      { type: "daily_login", amount: 10, source: `daily_login:${TODAY}` },
      { type: "streak_bonus", amount: 50, source: `streak_bonus:${TODAY}` }
    ])
    expect((await points(stored.cookie)).body).toEqual({ total: 120, tier: "Explorer", currentStreak: 7, longestStreak: 7 })
  })

  it("day 8 of a run earns no bonus; day 14 completes the next streak", async () => {
    const eighth = await storeIdentity(server.database)
    await storeLogins(server.database, eighth.cfId, [-7, -6, -5, -4, -3, -2, -1].map((offset) => dayFrom(TODAY, offset)))
    await siweSignIn(client, eighth.wallet, "203.0.113.5")
    expect((await ledgerOf(server.database, eighth.cfId)).filter((entry) => entry.type === "streak_bonus")).toEqual([])
    expect((await points(eighth.cookie)).body).toEqual({ total: 80, tier: "Explorer", currentStreak: 8, longestStreak: 8 })

    const fourteenth = await storeIdentity(server.database)
    await storeLogins(server.database, fourteenth.cfId, Array.from({ length: 13 }, (_, i) => dayFrom(TODAY, i - 13)))
    await siweSignIn(client, fourteenth.wallet, "203.0.113.5")
    expect((await ledgerOf(server.database, fourteenth.cfId)).filter((entry) => entry.type === "streak_bonus")).toEqual([
      { type: "streak_bonus", amount: 50, source: `streak_bonus:${TODAY}` }
    ])
    expect((await points(fourteenth.cookie)).body).toMatchObject({ currentStreak: 14, longestStreak: 14 })
  })

  it("a missed UTC day resets the streak", async () => {
    const missed = await storeIdentity(server.database)
    // Four days in a row, then yesterday missed.
    await storeLogins(server.database, missed.cfId, [-5, -4, -3, -2].map((offset) => dayFrom(TODAY, offset)))
    // Its session was written directly: reading the points signs nobody in.
    expect((await points(missed.cookie)).body).toEqual({ total: 40, tier: "Explorer", currentStreak: 0, longestStreak: 4 })
    await siweSignIn(client, missed.wallet, "203.0.113.6")
    expect((await points(missed.cookie)).body).toEqual({ total: 50, tier: "Explorer", currentStreak: 1, longestStreak: 4 })

    // A streak whose last day was yesterday is still alive until today ends.
    const alive = await storeIdentity(server.database)
    await storeLogins(server.database, alive.cfId, [-3, -2, -1].map((offset) => dayFrom(TODAY, offset)))
    expect((await points(alive.cookie)).body).toMatchObject({ currentStreak: 3, longestStreak: 3 })

    // Six days, two missed, then five more and today: 12 sign-ins, but no run reached 7, so no bonus.
    const gap = await storeIdentity(server.database)
    await storeLogins(server.database, gap.cfId, [-13, -12, -11, -10, -9, -8, -5, -4, -3, -2, -1].map((offset) => dayFrom(TODAY, offset)))
    await siweSignIn(client, gap.wallet, "203.0.113.6")
    expect((await ledgerOf(server.database, gap.cfId)).filter((entry) => entry.type === "streak_bonus")).toEqual([])
    expect((await points(gap.cookie)).body).toEqual({ total: 120, tier: "Explorer", currentStreak: 6, longestStreak: 6 })
  })
})

describe("tiers", () => {
  it.each([
    [499, "Explorer"],
    [500, "Starter"],
    [1999, "Starter"],
    [2000, "Builder"],
    [5000, "Architect"],
    [14999, "Architect"],
    [15000, "Titan"]
  ])("%i points is %s", async (total, tier) => {
    const stored = await storeIdentity(server.database)
    await query(`INSERT INTO points_ledger (cf_id, type, amount, source, day) VALUES ($1, 'signup', $2, 'signup', $3)`, [stored.cfId, total, TODAY])
    expect((await points(stored.cookie)).body).toEqual({ total, tier, currentStreak: 0, longestStreak: 0 })
  })
})

describe("oracle interaction", () => {
  it("a signed-in read of a model's pricing earns 5 per model per day, at most 12 a day", async () => {
    const user = await signIn()
    expect((await priceHistory(OMEGA_MODELS[0]!, user.cookie)).status).toBe(200)
    expect((await priceHistory(OMEGA_MODELS[0]!, user.cookie)).status).toBe(200)
    expect(await oracleEntries(user.cfId)).toEqual([{ source: `oracle_interaction:${TODAY}:${OMEGA_MODELS[0]}` }])
    // The model endpoint and price-at count too, under the model's canonical key however it was written.
    expect((await client.call("GET", "/v1/oracle/models/ACME%2Fbig-2", undefined, { cookie: user.cookie, ip: "198.51.100.7" })).status).toBe(200)
    expect((await client.call("GET", "/v1/oracle/models/big-2/price-at?date=2025-12-15", undefined, { cookie: user.cookie, ip: "198.51.100.7" })).status).toBe(200)
    expect((await oracleEntries(user.cfId)).map((row) => row.source)).toEqual([
      `oracle_interaction:${TODAY}:${OMEGA_MODELS[0]}`,
      `oracle_interaction:${TODAY}:acme/big-2`
    ])
    for (const model of OMEGA_MODELS.slice(1)) expect((await priceHistory(model, user.cookie)).status).toBe(200)
    const entries = await query(`SELECT amount, source FROM points_ledger WHERE cf_id = $1 AND type = 'oracle_interaction'`, [user.cfId])
    expect(entries).toHaveLength(12)
    expect(entries.every((entry) => entry.amount === 5)).toBe(true)
    // The first 12 distinct models: acme/big-2 and omega m-01..m-11; m-12..m-14 came after the cap.
    expect(entries.map((entry) => entry.source).sort()).toEqual(
      [`oracle_interaction:${TODAY}:acme/big-2`, ...OMEGA_MODELS.slice(0, 11).map((model) => `oracle_interaction:${TODAY}:${model}`)].sort()
    )
    expect((await points(user.cookie)).body.total).toBe(110 + 60)
  })

  it("concurrent reads of 14 models count exactly 12", async () => {
    const user = await signIn()
    const answers = await Promise.all(OMEGA_MODELS.map((model) => priceHistory(model, user.cookie)))
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    expect(await oracleEntries(user.cfId)).toHaveLength(12)
  })

  it("reads without a valid session, and list reads served by the fast path, count nothing", async () => {
    const before = await query(`SELECT count(*)::int AS n FROM points_ledger WHERE type = 'oracle_interaction'`)
    expect((await priceHistory(OMEGA_MODELS[5]!)).status).toBe(200)
    expect((await priceHistory(OMEGA_MODELS[5]!, "cf_session=not-a-session")).status).toBe(200)
    expect((await priceHistory(OMEGA_MODELS[5]!, `cf_session=${"A".repeat(43)}`)).status).toBe(200)
    expect(await query(`SELECT count(*)::int AS n FROM points_ledger WHERE type = 'oracle_interaction'`)).toEqual(before)

    const user = await signIn()
    for (const target of ["/v1/oracle/models", "/v1/oracle/pricing", "/v1/oracle/catalog"]) {
      expect((await client.call("GET", target, undefined, { cookie: user.cookie, ip: "198.51.100.8" })).status).toBe(200)
    }
    expect(await oracleEntries(user.cfId)).toEqual([])
    // No single model's pricing is a hot read, so a counted read never takes the fast path.
    expect(HOT_READS.filter((read) => read.route.startsWith("/v1/oracle/models/"))).toEqual([])
  })
})

describe("the ledger", () => {
  it("refuses UPDATE, DELETE and TRUNCATE", async () => {
    const user = await signIn()
    await expect(query(`UPDATE points_ledger SET amount = 1000 WHERE cf_id = $1`, [user.cfId])).rejects.toThrow(/append-only: UPDATE refused/)
    await expect(query(`DELETE FROM points_ledger WHERE cf_id = $1`, [user.cfId])).rejects.toThrow(/append-only: DELETE refused/)
    await expect(query(`TRUNCATE points_ledger`)).rejects.toThrow(/append-only: TRUNCATE refused/)
    expect(await ledgerOf(server.database, user.cfId)).toHaveLength(2)
  })

  it("/v1/points/history pages newest first with a cursor; bad input is 422; no session is 401", async () => {
    const stored = await storeIdentity(server.database)
    await storeLogins(server.database, stored.cfId, [-4, -3, -2, -1].map((offset) => dayFrom(TODAY, offset)))
    await siweSignIn(client, stored.wallet, "203.0.113.7")
    const seen: Array<any> = []
    let cursor: string | null = null
    do {
      const page: any = await client.call("GET", `/v1/points/history?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`, undefined, { cookie: stored.cookie })
      expect(page.status).toBe(200)
      expect(page.body.object).toBe("list")
      expect(page.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.data)
      cursor = page.body.nextCursor
    } while (cursor !== null)
    expect(seen.map((entry) => entry.source)).toEqual([TODAY, ...[-1, -2, -3, -4].map((offset) => dayFrom(TODAY, offset))].map((day) => `daily_login:${day}`))
    expect(seen[0]).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), type: "daily_login", amount: 10, source: `daily_login:${TODAY}`, createdAt: frozenAt.toISOString() })

    const bad = await client.call("GET", "/v1/points/history?limit=0&cursor=abc", undefined, { cookie: stored.cookie })
    expect(bad.status).toBe(422)
    expect(bad.body.error.issues.map((issue: any) => issue.param).sort()).toEqual(["cursor", "limit"])
    for (const path of ["/v1/points", "/v1/points/history"]) {
      const answer = await client.call("GET", path)
      expect(answer.status, path).toBe(401)
      expect(answer.body.error.code).toBe("unauthorized")
    }
  })
})

describe("balance and leaderboard", () => {
  const waitFor = async <A>(read: () => Promise<A>, done: (value: A) => boolean): Promise<A> => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const value = await read()
      if (done(value)) return value
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return read()
  }

  it("points_balance is reconciled with the ledger by the points-reconcile job, which records its runs", async () => {
    const user = await signIn()
    await query(`UPDATE identities SET points_balance = 99999 WHERE cf_id = $1`, [user.cfId])
    const me = await waitFor(
      () => client.call("GET", "/v1/me", undefined, { cookie: user.cookie }),
      (answer) => answer.body.points_balance === 110
    )
    expect(me.body.points_balance).toBe(110)
    const runs = await query(`SELECT outcome, summary FROM job_runs WHERE job = 'points-reconcile' AND outcome IS NOT NULL ORDER BY id DESC LIMIT 1`)
    expect(runs[0]).toMatchObject({ outcome: "succeeded", summary: expect.stringMatching(/^\d+ points balance\(s\) corrected$/) })
  })

  it("the public leaderboard shows the top 50 by points, display name and points only", async () => {
    const totals = Array.from({ length: 55 }, (_, i) => 100_000 + i * 10)
    for (const [i, total] of totals.entries()) {
      const stored = await storeIdentity(server.database, { displayName: `Leader ${String(i).padStart(2, "0")}` })
      await query(`INSERT INTO points_ledger (cf_id, type, amount, source, day) VALUES ($1, 'signup', $2, 'signup', $3)`, [stored.cfId, total, TODAY])
    }
    const expected = totals
      .map((total, i) => ({ displayName: `Leader ${String(i).padStart(2, "0")}`, points: total }))
      .sort((a, b) => b.points - a.points)
      .slice(0, 50)
    const board = await waitFor(
      () => client.call("GET", "/v1/points/leaderboard"),
      (answer) => answer.body.data?.[0]?.points === 100_540
    )
    expect(board.status).toBe(200)
    expect(board.body.object).toBe("list")
    expect(board.body.data).toEqual(expected)
    expect(board.body.data.every((entry: object) => Object.keys(entry).sort().join() === "displayName,points")).toBe(true)
    expect(Date.parse(board.body.updatedAt)).not.toBeNaN()
  })
})
