/**
 * The request log and activity (docs/decisions.md "Console: logs and activity") on the real stack: requests sent
 * through the exchange to the simulator are listed newest first with every filter applied by the server, paged by
 * cursor with no row lost or repeated, summed per UTC day and split by model, key and member; both the list and one
 * bill read with the account's key or its session, and never another account's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { grantCredits, type TeamUser, walletUsers } from "./support/orgTeam.ts"

let fx: ExchangeFixture
let keyA: { id: string; secret: string }
let keyB: { id: string; secret: string }
/** Ids of the requests sent, by what they were. */
const sent: Array<{ id: string; key: string; model: string; used: string }> = []

interface Row {
  id: string
  createdAt: string
  status: string
  modelRequested: string
  modelUsed: string
  fallback: boolean
  keyId: string | null
  chargeWei: string
  usage: { freshInput: number | null; output: number | null }
}

const api = () => makeClient(fx.baseUrl)
const asSession = (path: string) => api().call("GET", path, undefined, { cookie: fx.cookie, ip: fx.ip })
const asKey = (path: string, secret: string) => api().call("GET", path, undefined, { headers: { authorization: `Bearer ${secret}` } })
const ok = (answer: { readonly status: number; readonly body: any }) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

const chat = async (secret: string, body: Record<string, unknown>) => {
  const response = await fetch(`${fx.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: `log me ${sent.length}` }], ...body })
  })
  expect(response.status, await response.clone().text()).toBe(200)
  await response.json()
  return { id: response.headers.get("x-request-id")!, used: response.headers.get("x-model-used")! }
}

/** Every page of `query` followed by cursor, `limit` rows at a time. */
const allPages = async (query: string, limit: number, read = asSession) => {
  const rows: Array<Row> = []
  let cursor: string | null = null
  let pages = 0
  do {
    const body = ok(await read(`/v1/generations?limit=${limit}${query}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`))
    expect(body.object).toBe("list")
    expect(body.data.length).toBeLessThanOrEqual(limit)
    rows.push(...(body.data as Array<Row>))
    cursor = body.nextCursor
    pages += 1
    expect(pages).toBeLessThan(100)
  } while (cursor !== null)
  return rows
}

/** A copy of a real bill at another instant (and status), so windows and ties are controlled by the test. */
let copies = 0
const copyBill = async (sourceId: string, createdAt: string, status = "completed") => {
  copies += 1
  const id = `gen_${"c0ffee".padEnd(18, "0")}${copies.toString(16).padStart(6, "0")}`
  await fx.query(
    `INSERT INTO generations (id, account_id, api_key_id, inbound_format, stream, status, model_requested, model_used, provider,
       upstream_key, chooser, usage, bill, attempts, hold_wei, charge_wei, cache_read_tokens, cache_write_5m_tokens,
       cache_write_1h_tokens, created_at, settled_at)
     SELECT $1, account_id, api_key_id, inbound_format, stream, $3, model_requested, model_used, provider, upstream_key, chooser,
       usage, bill, attempts, hold_wei, charge_wei, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, $2::timestamptz, $2::timestamptz
     FROM generations WHERE id = $4`,
    [id, createdAt, status, sourceId]
  )
  return id
}

const sum = (rows: ReadonlyArray<Row>) => rows.reduce((acc, row) => acc + BigInt(row.chargeWei), 0n)

beforeAll(async () => {
  fx = await startExchangeFixture()
  await fx.grant(100n * ONE_CREDIT)
  keyA = await fx.issueKey({ label: "alpha" })
  keyB = await fx.issueKey({ label: "beta" })
  for (const [key, model] of [[keyA, "openai/gpt-4.1"], [keyA, "openai/gpt-4.1"], [keyA, "google/gemini-2.5-flash"], [keyB, "openai/gpt-4.1"], [keyB, "anthropic/claude-sonnet-4.5"]] as const) {
    const { id, used } = await chat(key.secret, { model })
    sent.push({ id, key: key.id, model, used })
  }
  // Every key of DeepSeek fails (and cools down: no later request goes there): the request falls back to the next
  // model of its list.
  await fx.fault({ model: "deepseek-reasoner", fault: "error500", count: 20 })
  const fellBack = await chat(keyB.secret, { model: "deepseek/deepseek-reasoner", models: ["google/gemini-2.5-flash"] })
  await fx.clearFaults()
  sent.push({ id: fellBack.id, key: keyB.id, model: "deepseek/deepseek-reasoner", used: fellBack.used })
}, 180_000)

afterAll(async () => {
  await fx?.close()
})

describe("GET /v1/generations", () => {
  it("lists the account's requests newest first with their figures, to the session and to a key alike", async () => {
    const viaSession = ok(await asSession("/v1/generations")).data as Array<Row>
    const viaKey = ok(await asKey("/v1/generations", keyB.secret)).data as Array<Row>
    expect(viaKey).toEqual(viaSession)
    expect(viaSession.map((r) => r.id)).toEqual([...sent].reverse().map((s) => s.id))
    const truth = await fx.query(
      "SELECT id, charge_wei::text AS wei FROM generations WHERE account_id = (SELECT account_id FROM generations WHERE id = $1) ORDER BY created_at DESC, id DESC",
      [sent[0]!.id]
    )
    expect(viaSession.map((r) => [r.id, r.chargeWei])).toEqual(truth.map((t) => [t.id, t.wei]))
    for (const row of viaSession) {
      const request = sent.find((s) => s.id === row.id)!
      expect(row).toMatchObject({ status: "completed", modelRequested: request.model, modelUsed: request.used, keyId: request.key })
      expect(row.fallback).toBe(request.used !== request.model)
      expect(row.usage.freshInput).toBeGreaterThan(0)
      expect(row.usage.output).toBeGreaterThan(0)
      expect(BigInt(row.chargeWei)).toBeGreaterThan(0n)
      // The list's charge is the bill's.
      expect((ok(await asSession(`/v1/generations/${row.id}`)) as { bill: { chargeWei: string } }).bill.chargeWei).toBe(row.chargeWei)
    }
    expect(viaSession.filter((r) => r.fallback).map((r) => [r.modelRequested, r.modelUsed])).toEqual([["deepseek/deepseek-reasoner", "google/gemini-2.5-flash"]])
  })

  it("pages by cursor with no row lost or repeated, ties on the instant included", async () => {
    // Three bills at the very same instant: only the id orders them.
    const at = "2026-01-15T12:00:00.123456Z"
    for (let i = 0; i < 3; i++) await copyBill(sent[0]!.id, at)
    const all = ok(await asSession("/v1/generations?limit=200")).data as Array<Row>
    expect(ok(await asSession("/v1/generations?limit=200")).nextCursor).toBeNull()
    const truth = await fx.query(
      "SELECT id FROM generations WHERE account_id = (SELECT account_id FROM generations WHERE id = $1) ORDER BY created_at DESC, id DESC",
      [sent[0]!.id]
    )
    expect(all.map((r) => r.id)).toEqual(truth.map((t) => t.id))
    for (const limit of [1, 2, 4]) {
      const paged = await allPages("", limit)
      expect(paged.map((r) => r.id), `limit ${limit}`).toEqual(all.map((r) => r.id))
    }
    // Default and largest pages.
    expect((ok(await asSession("/v1/generations")).data as Array<Row>).length).toBe(all.length)
  })

  it("filters on the server: model (asked for or served), key, status, from and to, combined with paging", async () => {
    await copyBill(sent[1]!.id, "2026-02-01T08:00:00Z", "interrupted")
    const all = ok(await asSession("/v1/generations?limit=200")).data as Array<Row>
    const check = async (query: string, expected: ReadonlyArray<Row>) => {
      expect(expected.length, query).toBeGreaterThan(0)
      expect((await allPages(query, 2)).map((r) => r.id), query).toEqual(expected.map((r) => r.id))
    }
    const gpt = "openai/gpt-4.1"
    const gemini = "google/gemini-2.5-flash"
    await check(`&model=${encodeURIComponent(gpt)}`, all.filter((r) => r.modelRequested === gpt || r.modelUsed === gpt))
    // The request that fell back to gemini is found under both models.
    await check(`&model=${encodeURIComponent(gemini)}`, all.filter((r) => r.modelRequested === gemini || r.modelUsed === gemini))
    expect((await allPages(`&model=${encodeURIComponent(gemini)}`, 50)).some((r) => r.fallback)).toBe(true)
    await check(`&key=${keyB.id}`, all.filter((r) => r.keyId === keyB.id))
    await check(`&key=${keyA.id}&model=${encodeURIComponent(gpt)}`, all.filter((r) => r.keyId === keyA.id && (r.modelRequested === gpt || r.modelUsed === gpt)))
    await check("&status=interrupted", all.filter((r) => r.status === "interrupted"))
    await check("&status=completed", all.filter((r) => r.status === "completed"))
    const from = "2026-01-01T00:00:00Z"
    const to = "2026-02-01T08:00:00Z"
    await check(`&from=${from}&to=${to}`, all.filter((r) => r.createdAt >= "2026-01-01T00:00:00.000Z" && r.createdAt < "2026-02-01T08:00:00.000Z"))
    await check(`&from=${to}`, all.filter((r) => r.createdAt >= "2026-02-01T08:00:00.000Z"))
    await check("&to=2026-02-01", all.filter((r) => r.createdAt < "2026-02-01T00:00:00.000Z"))
    expect(ok(await asSession("/v1/generations?model=nobody%2Fnothing")).data).toEqual([])
    expect(ok(await asSession(`/v1/generations?key=key_${"0".repeat(16)}`)).data).toEqual([])
  })

  it("refuses bad filters with 422 validation_failed naming the field", async () => {
    for (const [query, param] of [
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["limit=ten", "limit"],
      ["key=sk-123", "key"],
      ["status=failed", "status"],
      ["from=yesterday", "from"],
      ["to=2026-13-45T00:00:00Z", "to"],
      ["cursor=bm90LWEtY3Vyc29y", "cursor"],
      ["from=2026-02-02T00:00:00Z&to=2026-02-01T00:00:00Z", "from"]
    ] as const) {
      const answer = await asSession(`/v1/generations?${query}`)
      expect(answer.status, query).toBe(422)
      expect(answer.body.error.code, query).toBe("validation_failed")
      expect(answer.body.error.param, `${query}: ${JSON.stringify(answer.body)}`).toBe(param)
    }
  })

  it("answers nobody signed in with 401, a bad key with its own refusal, and another account's bill with 404", async () => {
    const anonymous = await api().call("GET", "/v1/generations")
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.error.code).toBe("unauthorized")
    const badKey = await asKey("/v1/generations", "ct_live_nope")
    expect(badKey.status).toBe(401)
    expect(badKey.body.error.code).toBe("invalid_api_key")
    // Another account, with a key and a request of its own.
    const other = await walletUsers(fx.baseUrl, "203.0.113")(10n * ONE_CREDIT)
    const otherKey = (await other.call("POST", "/v1/keys", { label: "other" })).body.secret as string
    const own = await chat(otherKey, { model: "openai/gpt-4.1" })
    expect(ok(await asKey("/v1/generations", otherKey)).data.map((r: Row) => r.id)).toEqual([own.id])
    for (const answer of [await asSession(`/v1/generations/${own.id}`), await asKey(`/v1/generations/${own.id}`, keyA.secret)]) {
      expect(answer.status).toBe(404)
      expect(answer.body.error.code).toBe("not_found")
    }
    expect(ok(await asKey(`/v1/generations/${own.id}`, otherKey)).id).toBe(own.id)
    expect((ok(await asSession("/v1/generations?limit=200")).data as Array<Row>).some((r) => r.id === own.id)).toBe(false)
    expect(ok(await asSession(`/v1/generations/${sent[0]!.id}`)).id).toBe(sent[0]!.id)
  })
})

describe("GET /v1/account/activity", () => {
  it("buckets by UTC day: a request just before midnight and one just after land on their own days", async () => {
    const before = await copyBill(sent[0]!.id, "2026-03-09T23:59:59.999Z")
    const after = await copyBill(sent[2]!.id, "2026-03-10T00:00:00.000Z")
    const rows = ok(await asSession("/v1/generations?limit=200")).data as Array<Row>
    const charge = (id: string) => rows.find((r) => r.id === id)!.chargeWei
    const body = ok(await asSession("/v1/account/activity?from=2026-03-09T00:00:00Z&to=2026-03-11T00:00:00Z"))
    expect(body).toMatchObject({ object: "activity", by: "model", from: "2026-03-09T00:00:00.000Z", to: "2026-03-11T00:00:00.000Z" })
    expect(body.days.map((d: any) => [d.day, d.requests, d.chargeWei])).toEqual([
      ["2026-03-09", 1, charge(before)],
      ["2026-03-10", 1, charge(after)]
    ])
    expect(body.series.map((s: any) => [s.day, s.group])).toEqual([["2026-03-09", "openai/gpt-4.1"], ["2026-03-10", "google/gemini-2.5-flash"]])
    // Read with a key, the same figures.
    expect(ok(await asKey("/v1/account/activity?from=2026-03-09T00:00:00Z&to=2026-03-11T00:00:00Z", keyA.secret))).toEqual(body)
  })

  it("splits the recent spend by model and by key, exactly, with every day of the window listed", async () => {
    const ids = new Set(sent.map((s) => s.id))
    const rows = (ok(await asSession("/v1/generations?limit=200")).data as Array<Row>).filter((r) => ids.has(r.id))
    expect(rows.length).toBe(sent.length)
    const byModel = ok(await asSession("/v1/account/activity?days=7&by=model"))
    expect(byModel.days.map((d: any) => d.day)).toHaveLength(7)
    expect(byModel.days.at(-1).day).toBe(new Date().toISOString().slice(0, 10))
    for (const day of byModel.days) {
      const of = rows.filter((r) => r.createdAt.startsWith(day.day))
      expect(day, day.day).toMatchObject({ requests: of.length, chargeWei: sum(of).toString() })
      expect(day.inputTokens).toBe(of.reduce((acc, r) => acc + (r.usage.freshInput ?? 0), 0))
      expect(day.outputTokens).toBe(of.reduce((acc, r) => acc + (r.usage.output ?? 0), 0))
    }
    const models = [...new Set(rows.map((r) => r.modelUsed))]
    expect(Object.fromEntries(byModel.groups.map((g: any) => [g.group, g.chargeWei]))).toEqual(
      Object.fromEntries(models.map((m) => [m, sum(rows.filter((r) => r.modelUsed === m)).toString()]))
    )
    const spends = byModel.groups.map((g: any) => BigInt(g.chargeWei))
    expect([...spends].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))).toEqual(spends)

    const byKey = ok(await asSession("/v1/account/activity?days=2&by=key"))
    expect(byKey.groups.map((g: any) => [g.group, g.label, g.requests, g.chargeWei]).sort()).toEqual(
      [
        [keyA.id, "alpha", rows.filter((r) => r.keyId === keyA.id).length, sum(rows.filter((r) => r.keyId === keyA.id)).toString()],
        [keyB.id, "beta", rows.filter((r) => r.keyId === keyB.id).length, sum(rows.filter((r) => r.keyId === keyB.id)).toString()]
      ].sort()
    )
  })

  it("splits an organization's spend by the member each key belongs to", async () => {
    const newUser = walletUsers(fx.baseUrl, "203.0.114")
    const owner = await newUser()
    const member: TeamUser = await newUser()
    const created = await owner.call("POST", "/v1/orgs", { name: "Logs team" })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const orgId = created.body.id as string
    await fx.query("INSERT INTO organization_members (account_id, cf_id, role) SELECT account_id, $2, 'member' FROM organizations WHERE id = $1", [orgId, member.cfId])
    await grantCredits(fx.baseUrl, orgId, 10n * ONE_CREDIT)
    expect((await owner.call("POST", "/v1/orgs/context", { orgId })).status).toBe(200)
    const ownKey = (await owner.call("POST", "/v1/keys", { label: "owner's" })).body.secret as string
    const issued = await owner.call("POST", "/v1/keys", { label: "member's", holderCfId: member.cfId })
    expect(issued.status, JSON.stringify(issued.body)).toBe(201)
    const memberKey = issued.body.secret as string
    await chat(ownKey, { model: "openai/gpt-4.1" })
    await chat(memberKey, { model: "openai/gpt-4.1" })
    await chat(memberKey, { model: "google/gemini-2.5-flash" })

    const rows = ok(await owner.call("GET", "/v1/generations")).data as Array<Row>
    expect(rows).toHaveLength(3)
    const byMember = ok(await owner.call("GET", "/v1/account/activity?days=2&by=member"))
    const memberKeyId = issued.body.key.id as string
    expect(byMember.groups.map((g: any) => [g.group, g.requests, g.chargeWei]).sort()).toEqual(
      [
        [owner.cfId, 1, sum(rows.filter((r) => r.keyId !== memberKeyId)).toString()],
        [member.cfId, 2, sum(rows.filter((r) => r.keyId === memberKeyId)).toString()]
      ].sort()
    )
    expect(byMember.groups.every((g: any) => typeof g.label === "string" && g.label.length > 0)).toBe(true)
    // The member's own session in the organization reads the same log; the personal account's log is not it.
    expect((await member.call("POST", "/v1/orgs/context", { orgId })).status).toBe(200)
    expect((ok(await member.call("GET", "/v1/generations")).data as Array<Row>).map((r) => r.id)).toEqual(rows.map((r) => r.id))
    expect((await owner.call("POST", "/v1/orgs/context", { orgId: null })).status).toBe(200)
    expect(ok(await owner.call("GET", "/v1/generations")).data).toEqual([])
  })

  it("refuses a bad window with 422 validation_failed", async () => {
    for (const [query, param] of [
      ["days=0", "days"],
      ["days=93", "days"],
      ["by=provider", "by"],
      ["days=3&from=2026-01-01", "days"],
      ["from=2026-01-01&to=2026-06-01", "from"],
      ["from=2026-02-01&to=2026-01-01", "from"],
      ["from=soon", "from"]
    ] as const) {
      const answer = await asSession(`/v1/account/activity?${query}`)
      expect(answer.status, query).toBe(422)
      expect(answer.body.error.code, query).toBe("validation_failed")
      expect(answer.body.error.param, `${query}: ${JSON.stringify(answer.body)}`).toBe(param)
    }
  })
})

describe("the OpenAPI document", () => {
  it("documents the log, the bill and the activity with both ways in", async () => {
    const document = (await (await fetch(`${fx.baseUrl}/v1/openapi.json`)).json()) as any
    for (const path of ["/v1/generations", "/v1/generations/{id}", "/v1/account/activity"]) {
      const operation = document.paths[path]?.get
      expect(operation, path).toBeDefined()
      expect(operation.security, path).toEqual(expect.arrayContaining([{ bearer: [] }, { session: [] }]))
    }
  })
})
