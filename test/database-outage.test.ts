/**
 * The database stops abruptly under load and comes back (DESIGN.md section 10 "Ledger", section 14; docs/decisions.md
 * "The exchange engine" and "Many replicas: what is shared, and what a dead replica leaves"). A real service process
 * runs on a PostgreSQL cluster of this suite's own, which is stopped with `pg_ctl -m immediate` (a crash: no
 * checkpoint, asynchronous commits not yet flushed are lost) while clients keep sending billed requests, then started
 * again (crash recovery). It proves:
 * - every request sent while the database is down is answered 503 `service_unavailable` in the error envelope, within
 *   the connect timeout (never a 500, never a hang); a stream already open when the database went away ends with the
 *   `stream_interrupted` frame (DESIGN.md "Streaming": a failure after the first byte) and no `[DONE]`;
 * - the service recovers by itself once the database is back, without a restart;
 * - money: every answer the client received completely has exactly one charge (the catalogue price + 5% of the counts
 *   it answered with), nothing else is charged, the entries sum to the balance, and once the holds' TTL has passed the
 *   sweeper has left no live hold and nothing reserved;
 * - the asynchronous reserve: requests whose holds were committed just before the crash (and so, usually, lost with
 *   it) and whose vendor answered after the restart are still charged, once, without their hold.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectedChargeWei } from "./support/exchangeServer.ts"
import { type OwnPostgres, startOwnPostgres } from "./support/ownPostgres.ts"
import { waitFor } from "./support/polling.ts"
import { type ChatOutcome, issueKey, newAccount, type Owner, sendChat } from "./support/replicaClient.ts"
import { recordFigure } from "./support/reliability.ts"
import { type Replica, type ReplicaSet, startReplicaSet } from "./support/replicas.ts"

const SUITE = "test/database-outage.test.ts"
const CONNECT_TIMEOUT_MS = 1_500
const HOLD_TTL_SECONDS = 5
const HOLD_SWEEP_INTERVAL_SECONDS = 2
const LOAD_CLIENTS = 8
/** How long the database stays down at least (longer if a stream open at the crash has not ended yet). */
const OUTAGE_MS = 3_000
/**
 * A 503 comes from a failed connection attempt: refused at once while the server is down, or the server's own "starting
 * up" while it recovers; at worst a connection attempt the pool gives up after the connect timeout. The slack is for
 * a 2-core machine running other suites beside this one.
 */
const UNAVAILABLE_BOUND_MS = CONNECT_TIMEOUT_MS + 1_000
/** From the restarted server accepting connections to a request sent after it being answered in full. */
const RECOVERY_BOUND_MS = 5_000
/** Streams open at the crash end with their last chunk or their interrupted frame, well before this. */
const OPEN_STREAM_BOUND_MS = 10_000
const SPANNING_REQUESTS = 4
/** The requests in flight across the crash are for this model: the gate holds them at the vendor until released. */
const SPANNING_MODEL = "openai/gpt-5"
const SPANNING_UPSTREAM_MODEL = "gpt-5"
/** Fixture rates (test/fixtures/exchange/cards/openai.yaml), USD per million tokens. */
const RATES: Record<string, { readonly input: string; readonly output: string }> = {
  "openai/gpt-4.1": { input: "2", output: "8" },
  // Reasoning is billed at the output rate (reasoningOutput = output on the card).
  [SPANNING_MODEL]: { input: "1.25", output: "10" },
  "openai/gpt-tiny": { input: "0.1", output: "0.4" }
}

/**
 * The replicas' upstream: a pass-through to the simulator that holds the requests for one upstream model until
 * released, so the requests in flight across the crash are answered by their vendor after the restart whatever the
 * restart's crash recovery takes (an fsync of the data directory: seconds on a slow disk).
 */
const startUpstreamGate = (heldModel: string) =>
  new Promise<{ url: string; target: (url: string) => void; holding: () => number; release: () => void; close: () => Promise<void> }>((resolve) => {
    let target = ""
    let released = false
    const waiting: Array<() => void> = []
    const sockets = new Set<Net.Socket>()
    const server = Http.createServer(async (request, response) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const body = Buffer.concat(chunks)
      let model: unknown
      try {
        model = JSON.parse(body.toString("utf8")).model
      } catch {
        model = undefined
      }
      if (!released && model === heldModel) await new Promise<void>((resume) => waiting.push(resume))
      if (target === "") return response.writeHead(503).end()
      const forwarded = Http.request(`${target}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      })
      forwarded.on("error", () => response.destroy())
      forwarded.end(body)
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`,
        target: (url) => (target = url),
        holding: () => waiting.length,
        release: () => {
          released = true
          for (const resume of waiting.splice(0)) resume()
        },
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      }))
  })

let gate: Awaited<ReturnType<typeof startUpstreamGate>>
let database: OwnPostgres
let set: ReplicaSet
let replica: Replica

beforeAll(async () => {
  gate = await startUpstreamGate(SPANNING_UPSTREAM_MODEL)
  // The WAL writer flushes asynchronous commits every 200 ms by default, so a crash loses the holds committed since its
  // last round. 10 s (the setting's maximum) puts the crash inside that window every time instead of most times; what
  // is lost is still PostgreSQL's doing. Everything else is the server's defaults (fsync on).
  database = await startOwnPostgres({ settings: { wal_writer_delay: "10s" } })
  set = await startReplicaSet(1, {
    database,
    env: {
      SIMULATOR_URL: gate.url,
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS),
      HOLD_SWEEP_INTERVAL_SECONDS: String(HOLD_SWEEP_INTERVAL_SECONDS),
      // The load is one key's: its request rate is not what this suite is about.
      RATE_LIMIT_ENABLED: "false",
      // Only the sweeper runs: the other jobs' synchronous commits would flush the holds the crash is meant to catch.
      CHAIN_SYNC_INTERVAL_SECONDS: "3600",
      FUNDING_SCAN_INTERVAL_SECONDS: "0",
      POINTS_RECONCILE_INTERVAL_SECONDS: "0",
      PRICE_SCAN_INTERVAL_HOURS: "24"
    }
  })
  replica = set.replicas[0]!
  gate.target(set.simulatorUrl)
}, 180_000)

afterAll(async () => {
  gate?.release()
  await set?.close()
  await Promise.all([database?.close(), gate?.close()])
})

/** One request as the client saw it, with when it was sent and answered (performance.now()). */
interface Sent extends ChatOutcome {
  readonly role: "load" | "open at the crash" | "across the crash"
  readonly model: string
  readonly sentAt: number
  readonly endedAt: number
  /** The socket failed or the request outlived its timeout: never acceptable here. */
  readonly failure?: string
}

const sent: Array<Sent> = []
let owner: Owner
const marks = { down: 0, restartBegan: 0, restarted: 0, recovered: 0 }

/** What the refusals other than 503 said, by role, model and time against the outage's marks (for a failing assertion). */
const refusals = (outcomes: ReadonlyArray<Sent>) =>
  outcomes
    .filter((s) => ![200, 503].includes(s.status))
    .slice(0, 5)
    .map((s) => `${s.role} ${s.model} sent ${Math.round(s.sentAt - marks.down)} ms after the crash: ${s.status} ${s.errorCode} ${s.errorMessage ?? ""}`)
    .join("\n")

const send = async (role: Sent["role"], model: string, secret: string, prompt: string, stream: boolean, options: Parameters<typeof sendChat>[4] = {}) => {
  const sentAt = performance.now()
  const body = { model, messages: [{ role: "user", content: prompt }], max_tokens: 16 }
  const outcome: Sent = await sendChat(replica.baseUrl, secret, body, stream, { timeoutMs: 20_000, ...options }).then(
    (answer) => ({ ...answer, role, model, sentAt, endedAt: performance.now() }),
    (error: unknown) => ({ stream, status: 0, id: undefined, usage: undefined, complete: false, errorCode: undefined, ms: 0, role, model, sentAt, endedAt: performance.now(), failure: String(error) })
  )
  sent.push(outcome)
  return outcome
}

/** Clients sending one request after another, alternately whole and streamed, until stopped; pausable. */
const startLoad = (secret: string) => {
  let stopped = false
  let paused: Promise<void> | undefined
  let resume: (() => void) | undefined
  let inFlight = 0
  const client = async (index: number) => {
    for (let n = 0; !stopped; n++) {
      if (paused !== undefined) await paused
      inFlight++
      await send("load", "openai/gpt-4.1", secret, `load ${index}.${n}`, (index + n) % 2 === 0)
      inFlight--
    }
  }
  const clients = Array.from({ length: LOAD_CLIENTS }, (_, index) => client(index))
  return {
    /** Resolves once no load request is in flight. */
    pause: async () => {
      paused = new Promise((resolve) => (resume = resolve))
      await waitFor("the load's requests in flight to end", async () => inFlight === 0, 20_000, 5)
    },
    resume: () => {
      paused = undefined
      resume?.()
    },
    stop: async () => {
      stopped = true
      resume?.()
      await Promise.all(clients)
    }
  }
}

const simulatorFault = async (fault: Record<string, unknown>) => {
  const response = await fetch(`${set.simulatorUrl}/__control/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(fault) })
  expect(response.status).toBeLessThan(300)
}

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())))

const summary = (outcomes: ReadonlyArray<Sent>) => {
  const counts = new Map<string, number>()
  for (const o of outcomes) {
    const key = `${o.role} ${o.stream ? "stream" : "whole"} ${o.status} ${o.errorCode ?? ""}${o.complete ? " complete" : ""}${o.failure ?? ""}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, n]) => `${n} x ${key}`).join("\n")
}

describe("the database crashes under load and comes back", () => {
  it("answers 503 service_unavailable within the connect timeout while it is down, ends open streams, and recovers by itself", async () => {
    owner = await newAccount(set, replica, 10n ** 20n, "198.51.100.10")
    const loadKey = await issueKey(replica, owner, "load")
    const spanningKey = await issueKey(replica, owner, "across the crash")
    const load = startLoad(loadKey.secret)
    await waitFor("24 answers before the crash", async () => sent.filter((s) => s.complete).length >= 24, 30_000)

    // Two streams open at the crash, paced by the vendor (10 chunks, 500 ms apart) to end during the outage.
    await simulatorFault({ model: "gpt-4.1-nano", fault: "slow_stream", delayMs: 500, count: 2 })
    const opened: Array<Promise<void>> = []
    const openStreams = [0, 1].map((i) => {
      let onFirstChunk!: () => void
      opened.push(new Promise((resolve) => (onFirstChunk = resolve)))
      return send("open at the crash", "openai/gpt-tiny", loadKey.secret, `open ${i}`, true, { onFirstChunk, timeoutMs: OPEN_STREAM_BOUND_MS })
    })
    await Promise.all(opened)

    // The load pauses, and the sweeper's next run is recorded: its synchronous commit makes the open streams' holds
    // durable (they outlive the crash, for the sweeper to release). What follows is the last thing written before the
    // crash, asynchronously: the holds of the requests across it.
    await load.pause()
    const watcher = new pg.Client({ connectionString: database.url })
    watcher.on("error", () => undefined)
    await watcher.connect()
    const lastSweep = async () => (await watcher.query("SELECT max(finished_at) AS at FROM job_runs WHERE job = 'hold-sweep'")).rows[0].at as Date | null
    const before = (await lastSweep())?.getTime() ?? 0
    await waitFor("a sweeper run to finish", async () => ((await lastSweep())?.getTime() ?? 0) > before, 10_000, 10)

    // The requests across the crash: held at the vendor until the database is back.
    const spanning = Array.from({ length: SPANNING_REQUESTS }, (_, i) => send("across the crash", SPANNING_MODEL, spanningKey.secret, `across ${i}`, i % 2 === 0))
    await waitFor("the requests across the crash at the vendor", async () => gate.holding() === SPANNING_REQUESTS, 10_000, 5)
    await waitFor(
      "their holds",
      async () => Number((await watcher.query("SELECT count(*) AS n FROM holds WHERE api_key_id = $1", [spanningKey.id])).rows[0].n) === SPANNING_REQUESTS,
      10_000,
      2
    )
    await database.stopImmediate()
    marks.down = performance.now()
    await watcher.end().catch(() => undefined)
    load.resume()

    // Down for OUTAGE_MS, and until the open streams have ended (or outlived their bound: a failure checked below).
    await sleepUntil(marks.down + OUTAGE_MS)
    const openOutcomes = await Promise.all(openStreams)
    marks.restartBegan = performance.now()
    await database.start()
    marks.restarted = performance.now()
    const firstAfter = await waitFor(
      "a request sent after the restart to be answered in full",
      async () => sent.find((s) => s.role === "load" && s.sentAt >= marks.restarted && s.complete),
      RECOVERY_BOUND_MS + 5_000
    )
    marks.recovered = firstAfter.endedAt
    // The vendor answers the requests across the crash now; a second of load after the recovery.
    gate.release()
    await sleepUntil(marks.recovered + 1_000)
    await load.stop()
    const spanningOutcomes = await Promise.all(spanning)
    const outcomes = [...sent]

    // Nothing failed at the socket, timed out or answered 500, at any time.
    expect(outcomes.filter((s) => s.failure !== undefined), summary(outcomes)).toEqual([])
    expect(outcomes.filter((s) => ![200, 503].includes(s.status)).map((s) => `${s.status} ${s.errorCode}`), refusals(outcomes)).toEqual([])

    // Sent while the database was down: 503 service_unavailable in the envelope, within the bound; a request that was
    // still waiting when the server came back may have been served.
    const duringOutage = outcomes.filter((s) => s.role === "load" && s.sentAt >= marks.down && s.sentAt < marks.restartBegan)
    const unavailable = outcomes.filter((s) => s.status === 503)
    expect(duringOutage.length).toBeGreaterThan(LOAD_CLIENTS)
    for (const s of duringOutage) {
      if (s.endedAt >= marks.restarted && s.complete) continue
      expect({ status: s.status, code: s.errorCode, stream: s.stream }).toEqual({ status: 503, code: "service_unavailable", stream: s.stream })
    }
    for (const s of unavailable) expect(s.errorCode).toBe("service_unavailable")
    const slowest503 = Math.max(...unavailable.map((s) => s.ms))
    expect(slowest503, `the slowest 503 took ${Math.round(slowest503)} ms`).toBeLessThan(UNAVAILABLE_BOUND_MS)

    // The streams open at the crash ended with the interrupted frame and no [DONE].
    for (const s of openOutcomes) {
      expect({ status: s.status, complete: s.complete, errorCode: s.errorCode }).toEqual({ status: 200, complete: false, errorCode: "stream_interrupted" })
    }

    // Recovered by itself: answered in full soon after the restart, and from then on.
    const recoveryMs = marks.recovered - marks.restarted
    expect(recoveryMs).toBeLessThan(RECOVERY_BOUND_MS)
    const afterRecovery = outcomes.filter((s) => s.role === "load" && s.sentAt >= marks.recovered)
    expect(afterRecovery.length).toBeGreaterThan(0)
    expect(afterRecovery.filter((s) => !s.complete).map((s) => `${s.status} ${s.errorCode}`)).toEqual([])

    // Answered by their vendor after the restart: answered in full.
    for (const s of spanningOutcomes) expect({ status: s.status, complete: s.complete }).toEqual({ status: 200, complete: true })

    recordFigure({
      suite: SUITE,
      tried: `PostgreSQL stopped -m immediate under ${LOAD_CLIENTS} clients' billed requests (whole and streamed), down ${((marks.restartBegan - marks.down) / 1000).toFixed(1)} s, then started again`,
      volume: `${outcomes.length} requests: ${outcomes.filter((s) => s.complete).length} answered in full, ${unavailable.length} answered 503, 2 streams open at the crash, ${SPANNING_REQUESTS} in flight across it`,
      held: `every request sent while it was down got 503 service_unavailable (slowest ${Math.round(slowest503)} ms, bound ${UNAVAILABLE_BOUND_MS} ms); open streams ended stream_interrupted; no 500; served in full again ${Math.round(recoveryMs)} ms after the restart, without restarting the service`
    })
  }, 90_000)

  it("charges every answer received in full exactly once and nothing else; no hold is left live", async () => {
    const complete = sent.filter((s) => s.complete)
    expect(complete.length).toBeGreaterThan(0)
    // The holds of requests that failed while the database was down are released by the sweeper once they expire.
    await waitFor(
      "no live hold",
      async () => (await set.query("SELECT 1 FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL", [owner.accountId])).length === 0,
      (HOLD_TTL_SECONDS + 3 * HOLD_SWEEP_INTERVAL_SECONDS + 5) * 1_000
    )
    const charges = await set.query("SELECT reference, (-amount_wei)::text AS wei FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'", [owner.accountId])
    const chargeOf = new Map(charges.map((row) => [row.reference as string, BigInt(row.wei)]))
    expect(chargeOf.size, "one charge per reference").toBe(charges.length)
    const charged = new Set(chargeOf.keys())
    const answeredIds = new Set(complete.map((s) => s.id!))
    expect([...charged].filter((id) => !answeredIds.has(id)), "charges without an answer received in full").toEqual([])
    expect([...answeredIds].filter((id) => !charged.has(id)), "answers received in full without their charge").toEqual([])
    for (const s of complete) {
      const rates = RATES[s.model]!
      expect(chargeOf.get(s.id!), `${s.role} ${s.id}`).toBe(expectedChargeWei([[s.usage!.prompt_tokens, rates.input], [s.usage!.completion_tokens, rates.output]]))
    }

    const [account] = await set.query("SELECT balance_wei::text AS balance, reserved_wei::text AS reserved FROM accounts WHERE id = $1", [owner.accountId])
    expect(account.reserved).toBe("0")
    const [sum] = await set.query("SELECT coalesce(sum(amount_wei), 0)::text AS total FROM ledger_entries WHERE account_id = $1", [owner.accountId])
    expect(sum.total).toBe(account.balance)

    // The requests across the crash: which holds the crash took (asynchronous commit), and each still charged once.
    const spanningIds = sent.filter((s) => s.role === "across the crash").map((s) => s.id!)
    const surviving = await set.query("SELECT request_id FROM holds WHERE request_id = ANY($1)", [spanningIds])
    const lost = spanningIds.length - surviving.length
    for (const id of spanningIds) expect(chargeOf.has(id), id).toBe(true)

    // The streams open at the crash: their holds outlived it and could not be settled or released while the database
    // was down; the sweeper released them once expired, and they were not charged.
    const openIds = sent.filter((s) => s.role === "open at the crash").map((s) => s.id)
    expect(openIds.every((id) => id !== undefined), "every stream open at the crash was read to its end").toBe(true)
    const openHolds = await set.query("SELECT released_at IS NOT NULL AS released, settled_at IS NOT NULL AS settled FROM holds WHERE request_id = ANY($1)", [openIds])
    expect(openHolds).toEqual(openIds.map(() => ({ released: true, settled: false })))
    for (const id of openIds) expect(chargeOf.has(id!), id).toBe(false)

    const unanswered = sent.filter((s) => !s.complete).length
    recordFigure({
      suite: SUITE,
      tried: "the ledger after the crash: charges against the answers the clients received in full",
      volume: `${complete.length} answers in full, ${unanswered} not; ${SPANNING_REQUESTS} requests across the crash, ${lost} of whose holds the crash lost`,
      held: `exactly one charge per answer in full (catalogue price + 5% of its counts), none for the rest; those across the crash charged once with or without their hold; the open streams' holds released by the sweeper after the ${HOLD_TTL_SECONDS} s TTL, uncharged; entries sum to the balance; nothing reserved`
    })
  }, 60_000)
})
