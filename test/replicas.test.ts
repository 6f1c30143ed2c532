/**
 * Two real replicas (DESIGN.md section 14): two service processes on one PostgreSQL database, one Redis, one chain, one
 * SMTP server and the simulator upstream. What one replica does, the other sees: a sign-in started on one finishes on
 * the other; a key or a grant changed through one is refused by the other within a second; the oracle's rate limit and
 * an upstream key's RPM are one budget; 200 billed requests split across both reconcile exactly in the ledger; each
 * background job runs on one replica at a time and moves to the other when its holder is killed, and a stream cut by
 * that kill leaves a hold the survivor sweeps, with no charge (docs/decisions.md "A replica that dies mid-request").
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { expectedChargeWei } from "./support/exchangeServer.ts"
import { recordFigure } from "./support/reliability.ts"
import { issueKey, newAccount as newAccountOn } from "./support/replicaClient.ts"
import { type Replica, type ReplicaSet, startReplicaSet } from "./support/replicas.ts"
import { waitFor } from "./support/polling.ts"

const ANTHROPIC_RPM = 4
const ORACLE_PER_MINUTE = 6
const HOLD_TTL_SECONDS = 6
/** The fixture card's rates for openai/gpt-4.1, USD per million tokens. */
const GPT41 = { input: "2", output: "8" } as const

let set: ReplicaSet
let a: Replica
let b: Replica
let visitor = 0
const nextIp = () => `198.51.100.${++visitor}`

beforeAll(async () => {
  set = await startReplicaSet(2, {
    anthropicRpm: ANTHROPIC_RPM,
    env: {
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_PER_SECOND: "1000",
      RATE_LIMIT_PER_10_SECONDS: "1000",
      RATE_LIMIT_PER_MINUTE: String(ORACLE_PER_MINUTE),
      INFERENCE_RATE_LIMIT_PER_MINUTE: "100000",
      HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS)
    }
  })
  ;[a, b] = set.replicas as [Replica, Replica]
}, 300_000)

afterAll(async () => {
  await set?.close()
})


/** A fresh wallet account signed in on `replica` from the next address, credited `wei` by the maintainer. */
const newAccount = (replica: Replica, wei: bigint) => newAccountOn(set, replica, wei, nextIp())

const chat = async (replica: Replica, secret: string, body: Record<string, unknown>) => {
  const response = await fetch(`${replica.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as any }
}

const gpt41 = (prompt: string, maxTokens = 40) => ({ model: "openai/gpt-4.1", messages: [{ role: "user", content: prompt }], max_tokens: maxTokens })

describe("two replicas on one PostgreSQL and one Redis", () => {
  it("finishes on one replica a sign-in started on the other; the session works on both and ends on both", async () => {
    const email = `replica-${randomBytes(3).toString("hex")}@example.com`
    const ip = nextIp()
    const started = await makeClient(a.baseUrl).call("POST", "/v1/auth/email/start", { email }, { ip })
    expect(started.status).toBe(202)
    const code = await set.mailbox.codeFor(email)
    const verified = await makeClient(b.baseUrl).call("POST", "/v1/auth/email/verify", { email, code }, { ip })
    expect(verified.status, JSON.stringify(verified.body)).toBe(200)
    const cookie = verified.headers.get("set-cookie")!.split(";")[0]!
    for (const replica of [a, b]) {
      const me = await makeClient(replica.baseUrl).call("GET", "/v1/me", undefined, { cookie, ip })
      expect(me.status).toBe(200)
      expect(me.body.cf_id).toBe(verified.body.cf_id)
    }
    expect((await makeClient(b.baseUrl).call("POST", "/v1/auth/logout", undefined, { cookie, ip })).status).toBeLessThan(300)
    for (const replica of [a, b]) {
      expect((await makeClient(replica.baseUrl).call("GET", "/v1/me", undefined, { cookie, ip })).status).toBe(401)
    }
    recordFigure({
      suite: "test/replicas.test.ts",
      tried: "an e-mail sign-in started on replica A, finished on B, signed out on B",
      volume: "1 sign-in, 5 requests",
      held: "the code mailed by A verified on B; the session worked on both; after sign-out on B, both answered 401"
    })
  })

  it("refuses on one replica, within a second, a key frozen or revoked and a grant frozen through the other", async () => {
    const owner = await newAccount(a, 10n ** 18n)
    const frozen = await issueKey(a, owner, "to freeze")
    const revoked = await issueKey(a, owner, "to revoke")
    // B has each key in its cache: it answered with it.
    for (const key of [frozen, revoked]) expect((await chat(b, key.secret, gpt41("warm the cache"))).status).toBe(200)

    const refusedWithin = async (action: () => Promise<void>, secret: string, status: number, code: string) => {
      await action()
      const changedAt = Date.now()
      const refused = await waitFor(`B to refuse with ${status}`, async () => {
        // An empty body: an accepted key gets 400 for it, so polling spends nothing.
        const answer = await chat(b, secret, {})
        return answer.status === status ? answer : undefined
      }, 5_000)
      const tookMs = Date.now() - changedAt
      expect(refused.body.error.code).toBe(code)
      expect(tookMs, `B refused after ${tookMs} ms`).toBeLessThan(1_000)
      return tookMs
    }
    const frozenAfter = await refusedWithin(
      async () => expect((await owner.client.call("POST", `/v1/keys/${frozen.id}/freeze`, undefined, owner)).status).toBe(200),
      frozen.secret,
      403,
      "api_key_frozen"
    )
    const revokedAfter = await refusedWithin(
      async () => expect((await owner.client.call("POST", `/v1/keys/${revoked.id}/revoke`, undefined, owner)).status).toBe(200),
      revoked.secret,
      401,
      "api_key_revoked"
    )

    const grant = await owner.client.call("POST", "/v1/apps/grants", { appName: "Replica dashboard" }, owner)
    expect(grant.status, JSON.stringify(grant.body)).toBe(201)
    const tools = (replica: Replica) =>
      makeClient(replica.baseUrl).call("GET", "/v1/account-tools", undefined, { headers: { authorization: `Bearer ${grant.body.token}` } })
    expect((await tools(b)).status).toBe(200)
    expect((await owner.client.call("POST", `/v1/apps/grants/${grant.body.grant.id}/freeze`, undefined, owner)).status).toBe(200)
    const afterFreeze = await tools(b)
    expect(afterFreeze.status).toBe(403)
    expect(afterFreeze.body.error.code).toBe("app_grant_frozen")
    recordFigure({
      suite: "test/replicas.test.ts",
      tried: "a key frozen, a key revoked and a grant frozen through replica A, used on replica B",
      volume: "3 changes",
      held: `refused by B after ${frozenAfter} ms (frozen key), ${revokedAfter} ms (revoked key), at once (grant); bound 1,000 ms`
    })
  })

  it("counts the oracle's rate limit as one budget across both replicas", async () => {
    const ip = nextIp()
    const statuses: Array<number> = []
    for (let i = 0; i < ORACLE_PER_MINUTE + 2; i++) {
      const replica = i % 2 === 0 ? a : b
      const response = await fetch(`${replica.baseUrl}/v1/oracle/scu`, { headers: { "x-forwarded-for": ip } })
      await response.arrayBuffer()
      statuses.push(response.status)
      if (response.status === 429) expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
    }
    expect(statuses).toEqual([...Array(ORACLE_PER_MINUTE).fill(200), 429, 429])
    recordFigure({
      suite: "test/replicas.test.ts",
      tried: `one client's oracle reads alternating between replicas, at ${ORACLE_PER_MINUTE} a minute`,
      volume: `${statuses.length} requests`,
      held: `${ORACLE_PER_MINUTE} allowed across both, then 429 with Retry-After on either: one budget in Redis`
    })
  })

  it("admits an upstream key's RPM once across both replicas", async () => {
    const owner = await newAccount(a, 10n ** 18n)
    const key = await issueKey(a, owner, "rpm")
    const before = (await (await fetch(`${set.simulatorUrl}/__control/requests`)).json()) as Array<{ path: string }>
    const statuses: Array<number> = []
    const codes: Array<string | undefined> = []
    for (let i = 0; i < ANTHROPIC_RPM + 2; i++) {
      const answer = await chat(i % 2 === 0 ? a : b, key.secret, {
        model: "anthropic/claude-sonnet-4.5",
        messages: [{ role: "user", content: "share the key" }],
        max_tokens: 20
      })
      statuses.push(answer.status)
      codes.push(answer.body.error?.code)
    }
    expect(statuses).toEqual([...Array(ANTHROPIC_RPM).fill(200), 502, 502])
    expect(codes.slice(ANTHROPIC_RPM)).toEqual(["all_keys_exhausted", "all_keys_exhausted"])
    const after = (await (await fetch(`${set.simulatorUrl}/__control/requests`)).json()) as Array<{ path: string }>
    const reachedAnthropic = (log: Array<{ path: string }>) => log.filter((entry) => entry.path === "/v1/messages").length
    expect(reachedAnthropic(after) - reachedAnthropic(before)).toBe(ANTHROPIC_RPM)
    recordFigure({
      suite: "test/replicas.test.ts",
      tried: `requests alternating between replicas on an upstream key allowed ${ANTHROPIC_RPM} a minute`,
      volume: `${statuses.length} requests`,
      held: `${ANTHROPIC_RPM} reached the vendor, the rest 502 all_keys_exhausted: one budget in Redis`
    })
  })

  it("bills 200 requests split across both against a balance for 8 holds, and the ledger reconciles exactly", async () => {
    const prompt = "reconcile me across replicas"
    // Each hold covers max_tokens 2000; each answer is a few dozen tokens: the balance holds 8 requests at once, 12 are
    // sent at once, and it pays for far more than 200 answers.
    const estimate = await makeClient(a.baseUrl).call("GET", "/v1/inference/estimate?model=openai/gpt-4.1&promptTokens=20&completionTokens=2000", undefined, { ip: nextIp() })
    expect(estimate.status, JSON.stringify(estimate.body)).toBe(200)
    const hold = BigInt(estimate.body.reservedWei)
    const owner = await newAccount(a, 8n * hold)
    const key = await issueKey(a, owner, "reconcile")

    const answers: Array<{ status: number; body: any }> = []
    let next = 0
    const worker = async () => {
      while (next < 200) {
        const index = next++
        answers[index] = await chat(index % 2 === 0 ? a : b, key.secret, gpt41(`${prompt} ${index}`, 2000))
      }
    }
    await Promise.all(Array.from({ length: 12 }, worker))

    const answered = answers.filter((answer) => answer.status === 200)
    const refused = answers.filter((answer) => answer.status !== 200)
    for (const answer of refused) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(402)
      expect(answer.body.error.code).toBe("insufficient_balance")
    }
    expect(answered.length).toBeGreaterThan(100)

    // No hold left live; reserved back to zero.
    await waitFor("no live hold", async () => (await set.query("SELECT 1 FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL", [owner.accountId])).length === 0, 10_000)
    const [account] = await set.query("SELECT balance_wei::text AS balance, reserved_wei::text AS reserved FROM accounts WHERE id = $1", [owner.accountId])
    expect(account.reserved).toBe("0")
    // The entries sum to the balance.
    const [sum] = await set.query("SELECT coalesce(sum(amount_wei), 0)::text AS total FROM ledger_entries WHERE account_id = $1", [owner.accountId])
    expect(sum.total).toBe(account.balance)
    // One charge per answered request, each the catalogue price + 5% of the counts it answered with.
    const charges = await set.query("SELECT reference, (-amount_wei)::text AS wei FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'", [owner.accountId])
    expect(charges).toHaveLength(answered.length)
    const chargeOf = new Map(charges.map((row) => [row.reference as string, BigInt(row.wei)]))
    for (const answer of answered) {
      const usage = answer.body.usage as { prompt_tokens: number; completion_tokens: number }
      expect(chargeOf.get(answer.body.id), answer.body.id).toBe(
        expectedChargeWei([[usage.prompt_tokens, GPT41.input], [usage.completion_tokens, GPT41.output]])
      )
    }
    recordFigure({
      suite: "test/replicas.test.ts",
      tried: "billed requests split across two replicas, 12 at once, against a balance for 8 holds",
      volume: `200 requests: ${answered.length} answered, ${refused.length} refused 402`,
      held: "one charge per answer, each the catalogue price + 5% of its counts; entries sum to the balance; no live hold"
    })
  }, 180_000)

  it("runs each background job on one replica at a time; killed mid-stream, its jobs move to the other, its hold is swept uncharged", async () => {
    const jobs = ["price-scan", "chain-sync", "deposit-watch", "hold-sweep", "points-reconcile"]
    const pidOf = (instance: string) => Number(instance.split(":")[1])
    const runs = () =>
      set.query("SELECT job, instance_id, started_at, finished_at FROM job_runs ORDER BY job, started_at, id") as Promise<
        Array<{ job: string; instance_id: string; started_at: Date; finished_at: Date | null }>
      >
    // Every job has run by now (the replicas have been up for the whole suite).
    await waitFor("a run of every job", async () => {
      const seen = new Set((await runs()).map((run) => run.job))
      return jobs.every((job) => seen.has(job))
    }, 20_000)

    // A stream on A, cut by killing A.
    const owner = await newAccount(a, 10n ** 18n)
    const key = await issueKey(a, owner, "killed mid-stream")
    await fetch(`${set.simulatorUrl}/__control/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4.1", fault: "slow_stream", delayMs: 300 })
    })
    const response = await fetch(`${a.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ ...gpt41("a stream the crash cuts"), stream: true })
    })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(first.done).toBe(false)
    const [live] = await set.query("SELECT request_id FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL", [owner.accountId])
    expect(live, "the stream's hold is live").toBeDefined()
    const killedAt = new Date()
    await a.process.stop("SIGKILL")
    // The client sees the stream end without its [DONE].
    let rest = ""
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (chunk.done) break
      rest += new TextDecoder().decode(chunk.value)
    }
    expect(rest).not.toContain("[DONE]")

    // B serves on.
    expect((await chat(b, key.secret, gpt41("still here"))).status).toBe(200)

    // A's hold is released by B's sweeper once it expires, and nothing is charged for the cut stream.
    await waitFor(
      "the dead replica's hold to be swept",
      async () => (await set.query("SELECT 1 FROM holds WHERE request_id = $1 AND released_at IS NOT NULL AND settled_at IS NULL", [live.request_id])).length === 1,
      (HOLD_TTL_SECONDS + 10) * 1_000
    )
    expect(await set.query("SELECT 1 FROM ledger_entries WHERE kind = 'charge' AND reference = $1", [live.request_id])).toEqual([])
    const [account] = await set.query("SELECT reserved_wei::text AS reserved FROM accounts WHERE id = $1", [owner.accountId])
    expect(account.reserved).toBe("0")

    // Every job now runs on B.
    const bPid = b.process.child.pid!
    let missing: Array<string> = jobs
    await waitFor("every job to run on B after the kill", async () => {
      const after = (await runs()).filter((run) => run.started_at > killedAt)
      missing = jobs.filter((job) => !after.some((run) => run.job === job && pidOf(run.instance_id) === bPid))
      return missing.length === 0
    }, 20_000).catch((error: Error) => {
      throw new Error(`${error.message}; still missing: ${missing.join(", ")}`)
    })

    // Never two runs of one job at once, whichever replica held it (a run A never finished ended with A).
    const all = await runs()
    for (const job of jobs) {
      const ofJob = all.filter((run) => run.job === job)
      for (let i = 1; i < ofJob.length; i++) {
        const previous = ofJob[i - 1]!
        const end = previous.finished_at ?? killedAt
        expect(end.getTime(), `${job}: a run began on ${ofJob[i]!.instance_id} before ${previous.instance_id}'s ended`).toBeLessThanOrEqual(ofJob[i]!.started_at.getTime())
      }
    }
    recordFigure({
      suite: "test/replicas.test.ts",
      tried: "replica A SIGKILLed mid-stream while both ran every background job each second",
      volume: `${all.length} job runs of ${jobs.length} jobs; 1 stream cut`,
      held: "no two runs of a job overlapped; every job ran on B after the kill; B served on; A's hold swept after its TTL, uncharged"
    })
  }, 120_000)
})
