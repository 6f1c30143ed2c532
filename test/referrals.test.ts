/**
 * Referrals (issue 12 item 7) over a real socket: the referral links and their cookie, first touch, invalid codes,
 * the click cap, attribution at sign-up (cookie or e-mail body), self-referral, the sign-up limit per address, and
 * the dashboard's figures. Each test has referrers and client addresses of its own.
 */
import { createHash } from "node:crypto"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AccountServer, startAccountServer } from "./support/accountServer.ts"
import { sessionCookieOf } from "./support/accounts.ts"
import { queryDatabase } from "./support/database.ts"
import { ledgerOf, siweSignIn } from "./support/points.ts"

let account: AccountServer

const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(account.database, text, values)
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
const cookieLine = (code: string) => `cf_ref=${code}; Max-Age=2592000; Path=/; Secure; SameSite=Lax`

/** A referral link visit, not following the redirect. */
const follow = (target: string, options: { readonly ip?: string; readonly cookie?: string; readonly userAgent?: string } = {}) =>
  fetch(`${account.server.baseUrl}${target}`, {
    redirect: "manual",
    headers: {
      "x-forwarded-for": options.ip ?? "198.51.100.1",
      "user-agent": options.userAgent ?? "referral-test/1.0",
      ...(options.cookie === undefined ? {} : { cookie: options.cookie })
    }
  })

const newWallet = () => privateKeyToAccount(generatePrivateKey())

/** A signed-in referrer: its CF ID, code and session cookie. */
const referrer = async (ip: string) => {
  const answer = await siweSignIn(account.client, newWallet(), ip)
  expect(answer.status).toBe(200)
  return { cfId: answer.body.cf_id as string, code: answer.body.referral_code as string, cookie: sessionCookieOf(answer) }
}

const signUp = async (ip: string, cookie?: string) => {
  const answer = await siweSignIn(account.client, newWallet(), ip, cookie)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return { cfId: answer.body.cf_id as string, displayName: answer.body.display_name as string, cookie: sessionCookieOf(answer) }
}

const totalOf = async (cookie: string) => (await account.client.call("GET", "/v1/points", undefined, { cookie })).body.total
const clicksOf = (code: string) => query(`SELECT count(*)::int AS n FROM referral_clicks WHERE referral_code = $1`, [code]).then((rows) => rows[0].n)
const dashboard = (cookie: string) => account.client.call("GET", "/v1/referrals", undefined, { cookie })

beforeAll(async () => {
  account = await startAccountServer()
}, 60_000)

afterAll(async () => {
  await account?.close()
})

describe("referral links", () => {
  it("/r?c=<code> and /r/<code> redirect to / and set cf_ref for 30 days, SameSite=Lax, Secure; the click is recorded with a hashed address", async () => {
    const owner = await referrer("10.20.0.1")
    for (const target of [`/r?c=${owner.code}`, `/r/${owner.code}`]) {
      const answer = await follow(target, { ip: "198.51.100.10", userAgent: "Mozilla/5.0 (referral test)" })
      expect(answer.status, target).toBe(302)
      expect(answer.headers.get("location")).toBe("/")
      expect(answer.headers.get("cache-control")).toBe("no-store")
      expect(answer.headers.getSetCookie()).toEqual([cookieLine(owner.code)])
    }
    const clicks = await query(`SELECT * FROM referral_clicks WHERE referral_code = $1`, [owner.code])
    expect(clicks).toHaveLength(2)
    for (const click of clicks) {
      expect(click).toMatchObject({ referral_code: owner.code, ip_hash: sha256("198.51.100.10"), user_agent: "Mozilla/5.0 (referral test)" })
      expect(Date.now() - new Date(click.clicked_at).getTime()).toBeLessThan(60_000)
    }
    expect(JSON.stringify(clicks)).not.toContain("198.51.100.10")
  })

  it("first touch wins: a valid cf_ref is never overwritten; an unknown one is replaced", async () => {
    const first = await referrer("10.20.0.2")
    const second = await referrer("10.20.0.2")
    const kept = await follow(`/r?c=${second.code}`, { cookie: `cf_ref=${first.code}` })
    expect(kept.status).toBe(302)
    expect(kept.headers.getSetCookie()).toEqual([])
    const same = await follow(`/r/${first.code}`, { cookie: `cf_ref=${first.code}` })
    expect(same.headers.getSetCookie()).toEqual([])
    const replaced = await follow(`/r?c=${second.code}`, { cookie: "cf_ref=cf_ref_aaaaaaaa" })
    expect(replaced.headers.getSetCookie()).toEqual([cookieLine(second.code)])
    const garbage = await follow(`/r?c=${second.code}`, { cookie: "cf_ref=garbage" })
    expect(garbage.headers.getSetCookie()).toEqual([cookieLine(second.code)])
    // The clicks themselves happened and are counted for the code clicked.
    expect(await clicksOf(first.code)).toBe(1)
    expect(await clicksOf(second.code)).toBe(3)
  })

  it("invalid codes are ignored silently: still a redirect, no cookie, nothing recorded", async () => {
    const before = await query(`SELECT count(*)::int AS n FROM referral_clicks`)
    for (const target of ["/r", "/r?c=", "/r?c=nonsense", "/r?c=cf_ref_aaaaaaaa", "/r/cf_ref_aaaaaaaa", "/r/%20", "/r?c=CF_REF_AAAAAAAA"]) {
      const answer = await follow(target)
      expect(answer.status, target).toBe(302)
      expect(answer.headers.get("location"), target).toBe("/")
      expect(answer.headers.getSetCookie(), target).toEqual([])
    }
    expect(await query(`SELECT count(*)::int AS n FROM referral_clicks`)).toEqual(before)
  })

  it("records at most 100 clicks per code per hour; the excess is still redirected with the cookie", async () => {
    const owner = await referrer("10.20.0.3")
    const answers = await Promise.all(Array.from({ length: 105 }, (_, i) => follow(`/r?c=${owner.code}`, { ip: `198.51.101.${i + 1}` })))
    expect(answers.every((answer) => answer.status === 302 && answer.headers.getSetCookie()[0] === cookieLine(owner.code))).toBe(true)
    expect(await clicksOf(owner.code)).toBe(100)
    expect((await follow(`/r/${owner.code}`)).status).toBe(302)
    expect(await clicksOf(owner.code)).toBe(100)
    // At the edge of the cap, concurrent clicks cannot all see room for one more.
    const edge = await referrer("10.20.0.3")
    await query(`INSERT INTO referral_clicks (referral_code) SELECT $1 FROM generate_series(1, 97)`, [edge.code])
    await Promise.all(Array.from({ length: 20 }, (_, i) => follow(`/r/${edge.code}`, { ip: `198.51.102.${i + 1}` })))
    expect(await clicksOf(edge.code)).toBe(100)
    // Clicks older than an hour leave the window.
    await query(`UPDATE referral_clicks SET clicked_at = clicked_at - interval '61 minutes' WHERE id IN (SELECT id FROM referral_clicks WHERE referral_code = $1 ORDER BY id LIMIT 3)`, [owner.code])
    await follow(`/r/${owner.code}`)
    expect(await clicksOf(owner.code)).toBe(101)
  })
})

describe("attribution at sign-up", () => {
  it("a sign-up carrying cf_ref credits the referrer 250 and the new CF ID 50 (with its 100 and 10), in the sign-up's transaction", async () => {
    const owner = await referrer("10.20.1.1")
    expect(await totalOf(owner.cookie)).toBe(110)
    const referred = await signUp("10.20.1.2", `cf_ref=${owner.code}`)
    expect(await ledgerOf(account.database, referred.cfId)).toEqual([
      { type: "signup", amount: 100, source: "signup" },
      { type: "referral_welcome", amount: 50, source: `referral_welcome:${owner.code}` },
      { type: "daily_login", amount: 10, source: expect.stringMatching(/^daily_login:\d{4}-\d{2}-\d{2}$/) }
    ])
    expect(await totalOf(referred.cookie)).toBe(160)
    expect(await totalOf(owner.cookie)).toBe(360)
    const [row] = await query(
      `SELECT abs(extract(epoch FROM p.created_at - i.created_at)) AS lag FROM points_ledger p JOIN identities i ON i.cf_id = $2
       WHERE p.cf_id = $1 AND p.type = 'referral' AND p.source = 'referral:' || $2`,
      [owner.cfId, referred.cfId]
    )
    expect(Number(row.lag)).toBeLessThan(60)
    expect(await query(`SELECT referrer_cf_id, referral_code FROM referrals WHERE referred_cf_id = $1`, [referred.cfId])).toEqual([
      { referrer_cf_id: owner.cfId, referral_code: owner.code }
    ])
  })

  it("an e-mail sign-up may send referralCode; a cf_ref cookie (first touch) wins over it", async () => {
    const byBody = await referrer("10.20.2.1")
    const byCookie = await referrer("10.20.2.1")
    const { client, mailbox } = account
    const verify = async (email: string, body: Record<string, unknown>, cookie?: string) => {
      expect((await client.call("POST", "/v1/auth/email/start", { email }, { ip: "10.20.2.2" })).status).toBe(202)
      const code = await mailbox.codeFor(email)
      const answer = await client.call("POST", "/v1/auth/email/verify", { email, code, ...body }, { ip: "10.20.2.2", ...(cookie === undefined ? {} : { cookie }) })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return answer.body.cf_id as string
    }
    const viaBody = await verify("via-body@example.com", { referralCode: byBody.code })
    const viaBoth = await verify("via-both@example.com", { referralCode: byBody.code }, `cf_ref=${byCookie.code}`)
    expect(await query(`SELECT referred_cf_id, referrer_cf_id FROM referrals WHERE referred_cf_id = ANY($1) ORDER BY created_at`, [[viaBody, viaBoth]])).toEqual([
      { referred_cf_id: viaBody, referrer_cf_id: byBody.cfId },
      { referred_cf_id: viaBoth, referrer_cf_id: byCookie.cfId }
    ])
    expect(await totalOf(byBody.cookie)).toBe(110 + 250)
    expect(await totalOf(byCookie.cookie)).toBe(110 + 250)
  })

  it("ignores an unknown code, one's own code, and a referral on an existing CF ID's sign-in, silently", async () => {
    const owner = await referrer("10.20.3.1")
    const unknown = await signUp("10.20.3.2", "cf_ref=cf_ref_aaaaaaaa")
    expect((await ledgerOf(account.database, unknown.cfId)).map((entry) => entry.type)).toEqual(["signup", "daily_login"])

    // The referrer signs in again carrying its own code, then another's: an existing CF ID is never attributed.
    const wallet = newWallet()
    const self = await siweSignIn(account.client, wallet, "10.20.3.3")
    const selfCode = self.body.referral_code
    expect((await siweSignIn(account.client, wallet, "10.20.3.3", `cf_ref=${selfCode}`)).status).toBe(200)
    expect((await siweSignIn(account.client, wallet, "10.20.3.3", `cf_ref=${owner.code}`)).status).toBe(200)
    expect(await query(`SELECT * FROM referrals WHERE referred_cf_id = $1 OR referrer_cf_id = $1`, [self.body.cf_id])).toEqual([])
    expect(await totalOf(sessionCookieOf(self))).toBe(110)
    expect(await totalOf(owner.cookie)).toBe(110)
  })

  it("at most 10 CF IDs are created per address in 24 h: the 11th sign-up is 429 rate_limited and credits nobody", async () => {
    const owner = await referrer("10.20.4.1")
    for (let i = 0; i < 10; i++) await signUp("10.20.4.2", `cf_ref=${owner.code}`)
    const refusedWallet = newWallet()
    const refused = await siweSignIn(account.client, refusedWallet, "10.20.4.2", `cf_ref=${owner.code}`)
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatchObject({ code: "rate_limited", type: "rate_limit_error" })
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
    expect(await query(`SELECT count(*)::int AS n FROM identities WHERE wallet_address = $1`, [refusedWallet.address.toLowerCase()])).toEqual([{ n: 0 }])
    expect(await query(`SELECT count(*)::int AS n FROM referrals WHERE referrer_cf_id = $1`, [owner.cfId])).toEqual([{ n: 10 }])
    expect(await totalOf(owner.cookie)).toBe(110 + 10 * 250)
  })
})

describe("the dashboard", () => {
  it("shows clicks, signups, conversion rate, referral points and referred users with status", async () => {
    const owner = await referrer("10.20.5.1")
    for (const ip of ["10.20.5.11", "10.20.5.12", "10.20.5.13", "10.20.5.14"]) await follow(`/r?c=${owner.code}`, { ip })
    const first = await signUp("10.20.5.11", `cf_ref=${owner.code}`)
    const second = await signUp("10.20.5.12", `cf_ref=${owner.code}`)
    const answer = await dashboard(owner.cookie)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({
      referralCode: owner.code,
      referralLink: `/r?c=${owner.code}`,
      clicks: 4,
      signups: 2,
      conversionRate: 0.5,
      pointsEarned: 500,
      referredUsers: expect.any(Array)
    })
    const users = answer.body.referredUsers as Array<{ displayName: string | null; status: string; at: string }>
    expect(users.filter((user) => user.status === "confirmed").map((user) => user.displayName).sort()).toEqual([first.displayName, second.displayName].sort())
    expect(users.filter((user) => user.status === "pending")).toEqual([
      { displayName: null, status: "pending", at: expect.any(String) },
      { displayName: null, status: "pending", at: expect.any(String) }
    ])
    expect(users.map((user) => user.at)).toEqual([...users.map((user) => user.at)].sort().reverse())
  })

  it("is zero for a new identity (no clicks: conversion 0), names SITE_URL in the link when set, and needs a session", async () => {
    const fresh = await referrer("10.20.6.1")
    expect((await dashboard(fresh.cookie)).body).toEqual({
      referralCode: fresh.code,
      referralLink: `/r?c=${fresh.code}`,
      clicks: 0,
      signups: 0,
      conversionRate: 0,
      pointsEarned: 0,
      referredUsers: []
    })
    const unauthenticated = await account.client.call("GET", "/v1/referrals")
    expect(unauthenticated.status).toBe(401)
    expect(unauthenticated.body.error.code).toBe("unauthorized")

    const sited = await startAccountServer({ SITE_URL: "https://compute.example/" })
    try {
      const answer = await siweSignIn(sited.client, newWallet(), "10.20.6.2")
      const board = await sited.client.call("GET", "/v1/referrals", undefined, { cookie: sessionCookieOf(answer) })
      expect(board.body.referralLink).toBe(`https://compute.example/r?c=${answer.body.referral_code}`)
    } finally {
      await sited.close()
    }
  }, 60_000)

  it("counts a referral with no recorded click: conversion is signups / clicks as they are", async () => {
    const owner = await referrer("10.20.7.1")
    await follow(`/r?c=${owner.code}`, { ip: "10.20.7.9" })
    await signUp("10.20.7.2", `cf_ref=${owner.code}`)
    await signUp("10.20.7.3", `cf_ref=${owner.code}`)
    await signUp("10.20.7.4", `cf_ref=${owner.code}`)
    const body = (await dashboard(owner.cookie)).body
    expect(body).toMatchObject({ clicks: 1, signups: 3, conversionRate: 3, pointsEarned: 750 })
    expect(body.referredUsers.map((user: any) => user.status).sort()).toEqual(["confirmed", "confirmed", "confirmed", "pending"])
  })
})

describe("the API document", () => {
  it("shows every points and referral route, with the session security on the signed-in ones only", async () => {
    const document = (await (await fetch(`${account.server.baseUrl}/v1/openapi.json`)).json()) as Record<string, any>
    const security = (path: string) => document.paths[path]?.get?.security
    expect(security("/v1/points")).toEqual([{ session: [] }])
    expect(security("/v1/points/history")).toEqual([{ session: [] }])
    expect(security("/v1/referrals")).toEqual([{ session: [] }])
    for (const path of ["/v1/points/leaderboard", "/r", "/r/{code}"]) expect(security(path), path).toEqual([])
    for (const path of ["/r", "/r/{code}"]) {
      expect(Object.keys(document.paths[path].get.responses["302"].headers)).toEqual(expect.arrayContaining(["Location", "Set-Cookie"]))
    }
    expect(document.paths["/v1/points"].get.responses["401"]).toBeDefined()
    expect(document.components.schemas.Points.required.sort()).toEqual(["currentStreak", "longestStreak", "tier", "total"])
  })
})
