/**
 * Redis goes away under two replicas and comes back (DESIGN.md section 14; docs/decisions.md "Rate limits" / "Fail
 * open" and "Capacity"). Two real service processes share one PostgreSQL and one Redis, reached through a TCP proxy
 * the suite cuts (every connection dropped, new ones refused) and restores. What is decided, and proved here:
 * - with Redis up, the oracle's rate limit is one budget across both replicas;
 * - with Redis gone, nothing is refused or failed because of it: oracle reads answer 200 on both replicas (fail open,
 *   unlimited: even a client whose budget was spent), within the ioredis command timeout plus slack; inference is
 *   still served; an upstream key's RPM is counted by each replica on its own, so with RPM R each replica admits at
 *   most R and the vendor sees at most 2R (N replicas: N x R);
 * - a spending cap is never exceeded, Redis or not: caps live in PostgreSQL (the reservation checks charges plus live
 *   holds under the account's row lock), so requests spread over both replicas during the outage charge at most the
 *   cap, and the rest are refused 429 `spending_limit_reached`;
 * - with Redis back, each replica's clients reconnect by themselves and the budgets are shared again. Redis never
 *   learns what the replicas admitted on their own meanwhile: in the minute of the restore, the key's shared budget
 *   admits R more, so the vendor can see (N + 1) x R in that minute (the figure is recorded).
 */
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { waitFor } from "./support/polling.ts"
import { chat, gpt41, issueKey, newAccount } from "./support/replicaClient.ts"
import { recordFigure } from "./support/reliability.ts"
import { REDIS_URL, type Replica, type ReplicaSet, startReplicaSet } from "./support/replicas.ts"
import { startTcpProxy, type TcpProxy } from "./support/tcpProxy.ts"

const SUITE = "test/redis-outage.test.ts"
const ANTHROPIC_RPM = 3
const ORACLE_PER_MINUTE = 6
/** How many requests a key's daily cap lets through in the outage: far fewer than are sent at once. */
const CAPPED_FIT = 4
/**
 * An oracle read while Redis is gone: ioredis queues nothing while disconnected and gives a command 500 ms, so a
 * read costs at most that; the rest is slack for a 2-core machine running other suites beside this one.
 */
const FAIL_OPEN_BOUND_MS = 1_500

let proxy: TcpProxy
let set: ReplicaSet
let a: Replica
let b: Replica
/** The suite's own look at Redis (not through the proxy): what the replicas counted there. */
let inspector: Redis
let visitor = 0
const nextIp = () => `203.0.113.${++visitor}`

beforeAll(async () => {
  const redis = new URL(REDIS_URL)
  proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
  set = await startReplicaSet(2, {
    anthropicRpm: ANTHROPIC_RPM,
    env: {
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_PER_SECOND: "1000",
      RATE_LIMIT_PER_10_SECONDS: "1000",
      RATE_LIMIT_PER_MINUTE: String(ORACLE_PER_MINUTE),
      INFERENCE_RATE_LIMIT_PER_MINUTE: "100000"
    }
  })
  ;[a, b] = set.replicas as [Replica, Replica]
  inspector = new Redis(REDIS_URL, { lazyConnect: false })
}, 300_000)

afterAll(async () => {
  inspector?.disconnect()
  await set?.close()
  await proxy?.close()
})

const oracleRead = async (replica: Replica, ip: string) => {
  const started = performance.now()
  const response = await fetch(`${replica.baseUrl}/v1/oracle/scu`, { headers: { "x-forwarded-for": ip } })
  await response.arrayBuffer()
  return { status: response.status, ms: performance.now() - started, remaining: Number(response.headers.get("x-ratelimit-remaining")) }
}

/** How many requests reached the simulator's Anthropic endpoint so far. */
const anthropicCalls = async () =>
  ((await (await fetch(`${set.simulatorUrl}/__control/requests`)).json()) as Array<{ path: string }>).filter((entry) => entry.path === "/v1/messages").length

const sonnet = (prompt: string) => ({ model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: prompt }], max_tokens: 20 })

/** Requests on the Anthropic key alternating between the replicas: which were admitted where. */
const alternateOnAnthropic = async (secret: string, count: number, label: string) => {
  const answers: Array<{ replica: string; status: number; code: string | undefined }> = []
  for (let i = 0; i < count; i++) {
    const replica = i % 2 === 0 ? a : b
    const answer = await chat(replica, secret, sonnet(`${label} ${i}`))
    answers.push({ replica: replica.name, status: answer.status, code: answer.body.error?.code })
  }
  for (const answer of answers.filter((x) => x.status !== 200)) expect(answer).toEqual({ ...answer, status: 502, code: "all_keys_exhausted" })
  const admitted = (name: string) => answers.filter((x) => x.replica === name && x.status === 200).length
  return { a: admitted(a.name), b: admitted(b.name), total: admitted(a.name) + admitted(b.name), answers }
}

/** Requests the replicas admitted on an upstream provider's keys through Redis (its minute buckets' counts). */
const sharedPoolCount = async (provider: string) => {
  const keys = (await inspector.keys(`${set.redisPrefix}pool:${provider}:*`)).filter((key) => !key.endsWith(":cooldown"))
  const counts = await Promise.all(keys.map((key) => inspector.hget(key, "r")))
  return counts.reduce((sum, count) => sum + Number(count ?? 0), 0)
}

let exhaustedIp: string
let inferenceOwner: Awaited<ReturnType<typeof newAccount>>
let poolKey: { id: string; secret: string }
/** What reached the vendor on the Anthropic key while Redis was cut. */
let vendorCallsDuringOutage = 0

describe("two replicas whose shared Redis goes away and comes back", () => {
  it("counts the oracle's rate limit as one budget across both replicas while Redis is up", async () => {
    exhaustedIp = nextIp()
    const statuses: Array<number> = []
    for (let i = 0; i < ORACLE_PER_MINUTE + 2; i++) statuses.push((await oracleRead(i % 2 === 0 ? a : b, exhaustedIp)).status)
    expect(statuses).toEqual([...Array(ORACLE_PER_MINUTE).fill(200), 429, 429])
    inferenceOwner = await newAccount(set, a, 10n ** 20n, nextIp())
    poolKey = await issueKey(a, inferenceOwner, "pool")
  })

  it("with Redis cut, answers oracle reads and inference on both replicas (fail open), each admitting an upstream key's RPM on its own counts", async () => {
    proxy.cut()
    // Fail open: the client refused a moment ago is let through, unlimited, on either replica, and promptly.
    const reads = []
    for (let i = 0; i < 2 * ORACLE_PER_MINUTE; i++) reads.push(await oracleRead(i % 2 === 0 ? a : b, exhaustedIp))
    expect(reads.map((read) => read.status)).toEqual(Array(reads.length).fill(200))
    const slowestRead = Math.max(...reads.map((read) => read.ms))
    expect(slowestRead, `the slowest read took ${Math.round(slowestRead)} ms`).toBeLessThan(FAIL_OPEN_BOUND_MS)

    // The Anthropic key allows ANTHROPIC_RPM a minute and nothing has used it yet: each replica admits that many on its
    // own counts, the rest are 502 all_keys_exhausted.
    const before = await anthropicCalls()
    const admitted = await alternateOnAnthropic(poolKey.secret, 2 * ANTHROPIC_RPM + 4, "outage")
    const vendor = (await anthropicCalls()) - before
    expect({ a: admitted.a, b: admitted.b }).toEqual({ a: ANTHROPIC_RPM, b: ANTHROPIC_RPM })
    expect(vendor).toBe(2 * ANTHROPIC_RPM)
    vendorCallsDuringOutage = vendor
    recordFigure({
      suite: SUITE,
      tried: `Redis cut under two replicas: one client's oracle reads (its budget of ${ORACLE_PER_MINUTE} a minute already spent), then requests alternating on an upstream key allowed ${ANTHROPIC_RPM} a minute`,
      volume: `${reads.length} reads, ${admitted.answers.length} inference requests`,
      held: `every read 200 on both (fail open; slowest ${Math.round(slowestRead)} ms, bound ${FAIL_OPEN_BOUND_MS} ms); each replica admitted ${ANTHROPIC_RPM} on its own counts, the vendor saw ${vendor} (2 x RPM), the rest 502 all_keys_exhausted`
    })
  })

  it("with Redis cut, never lets requests spread over both replicas pass a key's daily spending cap", async () => {
    const owner = await newAccount(set, a, 10n ** 20n, nextIp())
    // A short answer is cut at max_tokens, so each charge is close to its hold: the cap admits exactly CAPPED_FIT.
    const maxTokens = 8
    const estimate = await makeClient(a.baseUrl).call("GET", `/v1/inference/estimate?model=openai/gpt-4.1&promptTokens=12&completionTokens=${maxTokens}`, undefined, { ip: nextIp() })
    expect(estimate.status, JSON.stringify(estimate.body)).toBe(200)
    const hold = BigInt(estimate.body.reservedWei)
    const cap = BigInt(CAPPED_FIT) * hold + hold / 2n
    const key = await issueKey(a, owner, "capped", { dailyLimitWei: cap.toString() })
    const requests = 24
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, i) => chat(i % 2 === 0 ? a : b, key.secret, gpt41(`capped ${i}`, maxTokens)))
    )
    const served = answers.filter((answer) => answer.status === 200)
    const refused = answers.filter((answer) => answer.status !== 200)
    for (const answer of refused) expect({ status: answer.status, code: answer.body.error?.code }).toEqual({ status: 429, code: "spending_limit_reached" })
    expect(served.length).toBe(CAPPED_FIT)

    await waitFor("no live hold", async () => (await set.query("SELECT 1 FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL", [owner.accountId])).length === 0, 10_000)
    const [charged] = await set.query("SELECT count(*)::int AS n, coalesce(sum(-amount_wei), 0)::text AS wei FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'", [owner.accountId])
    const [largestHold] = await set.query("SELECT max(amount_wei)::text AS wei FROM holds WHERE account_id = $1", [owner.accountId])
    expect(charged.n).toBe(served.length)
    expect(BigInt(charged.wei) <= cap, `charged ${charged.wei} wei against a cap of ${cap}`).toBe(true)
    // And the cap was what stopped the rest: what is left under it is less than one more hold.
    expect(cap - BigInt(charged.wei) < BigInt(largestHold.wei)).toBe(true)
    recordFigure({
      suite: SUITE,
      tried: `Redis cut: requests at once on one key, split over both replicas, against a daily cap for ${CAPPED_FIT}.5 holds`,
      volume: `${requests} requests: ${served.length} served, ${refused.length} refused 429 spending_limit_reached`,
      held: `charged ${charged.wei} wei of a ${cap} wei cap, less than one hold left under it: the cap (in PostgreSQL: charges plus live holds) held without Redis`
    })
  })

  it("with Redis back, each replica counts in it again by itself and the budgets are one again", async () => {
    proxy.restore()
    const restoredAt = performance.now()
    // Each replica has two Redis clients (the rate limits' and the key pools'), reconnecting on their own back-off.
    for (const replica of [a, b]) {
      await waitFor(`${replica.name}'s rate limits to count in Redis again`, async () => {
        const ip = nextIp()
        const first = await oracleRead(replica, ip)
        const second = await oracleRead(replica, ip)
        return second.remaining < first.remaining
      }, 15_000, 100)
      await waitFor(`${replica.name}'s key pools to count in Redis again`, async () => {
        const counted = await sharedPoolCount("openai")
        expect((await chat(replica, poolKey.secret, gpt41("reconnected?", 8))).status).toBe(200)
        return (await sharedPoolCount("openai")) > counted
      }, 15_000, 100)
    }
    const reconnectedMs = performance.now() - restoredAt

    // The oracle: a new client's budget is one across both replicas again.
    const ip = nextIp()
    const statuses: Array<number> = []
    for (let i = 0; i < ORACLE_PER_MINUTE + 2; i++) statuses.push((await oracleRead(i % 2 === 0 ? a : b, ip)).status)
    expect(statuses).toEqual([...Array(ORACLE_PER_MINUTE).fill(200), 429, 429])

    // The Anthropic key: one budget of ANTHROPIC_RPM across both replicas again. Redis never counted what the replicas
    // admitted on their own during the outage, so its budget is whole: ANTHROPIC_RPM more reach the vendor.
    const before = await anthropicCalls()
    const admitted = await alternateOnAnthropic(poolKey.secret, 2 * ANTHROPIC_RPM + 2, "restored")
    const vendor = (await anthropicCalls()) - before
    expect(admitted.total).toBe(ANTHROPIC_RPM)
    expect(vendor).toBe(ANTHROPIC_RPM)
    recordFigure({
      suite: SUITE,
      tried: "Redis restored under two replicas: a new client's oracle reads and requests on the upstream key, alternating",
      volume: `${statuses.length} reads, ${admitted.answers.length} inference requests`,
      held: `both replicas counted in Redis again ${Math.round(reconnectedMs)} ms after the restore, unrestarted; ${ORACLE_PER_MINUTE} reads allowed across both, then 429; the key admitted ${ANTHROPIC_RPM} across both (one budget); Redis had not counted the outage's admissions, so within a minute the vendor saw ${vendorCallsDuringOutage + vendor} requests on a key allowed ${ANTHROPIC_RPM} (each replica's ${ANTHROPIC_RPM}, then Redis's whole budget)`
    })
  })
})
