/**
 * `npm run bench:exchange`: the floor DESIGN.md section 10 puts under every billed request, measured on the bench's own
 * database in the same run. DESIGN fixes the hot path's budget at one reserve statement (which locks the account row,
 * checks balance and caps, and commits asynchronously) and one share of a settle batch (charge and release) per
 * request; this phase runs exactly those two statements (`ledger_reserve`, `ledger_settle_batch` with one item,
 * migration 0019) over a bare `pg` client, with no HTTP,
 * no Effect and no upstream, so what it measures is a bound no implementation of that design can beat here:
 *   pair p50   one reserve + settle pair at 1 connection (the latency floor of the added p50);
 *   one acct   pairs per second at BENCH_CONNECTIONS connections on ONE account, as the bench's load is (its row lock
 *              serialises every reservation and settlement of that account: the throughput ceiling);
 *   many accts the same spread over BENCH_CONNECTIONS accounts (no shared row: what the database itself allows).
 * The accounts are scratch rows of the bench database (credited directly: only the statements' cost is measured).
 */
import pg from "pg"
import { percentiles } from "./exchangeMeasure.ts"
import type { TargetKey } from "./exchangeRequests.ts"
import { settings, TARGET_ADDED_P50_MS, TARGET_VS_BARE, TARGET_VS_PORTKEY } from "./exchangeSettings.ts"

export interface LedgerFloor {
  readonly pairP50Ms: number
  readonly pairP99Ms: number
  readonly oneAccountPairsPerSecond: number
  readonly manyAccountsPairsPerSecond: number
}

const HOLD_WEI = "1000000000000"
const CHARGE_WEI = "900000000000"

export const measureLedgerFloor = async (databaseUrl: string, pairs: number): Promise<LedgerFloor> => {
  const clients = await Promise.all(
    Array.from({ length: settings.connections }, async () => {
      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      return client
    })
  )
  try {
    const first = clients[0]!
    const accounts: Array<string> = []
    for (let i = 0; i < settings.connections; i++) {
      const row = await first.query<{ id: string }>(
        "INSERT INTO accounts (kind, balance_wei) VALUES ('organization', 10::numeric ^ 30) RETURNING id::text AS id"
      )
      accounts.push(row.rows[0]!.id)
    }
    let sequence = 0
    const pair = async (client: pg.Client, account: string) => {
      const request = `floor_${sequence++}`
      const at = new Date()
      await client.query(
        "SELECT outcome FROM ledger_reserve($1::bigint, $2, $3::numeric, NULL, NULL, NULL, $4, $4, $4, $4, $5, NULL)",
        [account, request, HOLD_WEI, at, new Date(at.getTime() + 600_000)]
      )
      await client.query("SELECT outcome FROM ledger_settle_batch($1::jsonb, $2)", [
        JSON.stringify([{ request_id: request, charge: String(CHARGE_WEI), account_id: account, api_key_id: null, member: null }]),
        new Date()
      ])
    }

    for (let i = 0; i < 50; i++) await pair(first, accounts[0]!) // warm-up
    const samples: Array<number> = []
    for (let i = 0; i < pairs; i++) {
      const started = process.hrtime.bigint()
      await pair(first, accounts[0]!)
      samples.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
    const latency = percentiles(samples)

    const rate = async (accountOf: (worker: number) => string) => {
      let done = 0
      const until = Date.now() + settings.durationSeconds * 1000
      const started = Date.now()
      await Promise.all(
        clients.map(async (client, worker) => {
          while (Date.now() < until) {
            await pair(client, accountOf(worker))
            done++
          }
        })
      )
      return done / ((Date.now() - started) / 1000)
    }
    const oneAccount = await rate(() => accounts[0]!)
    const manyAccounts = await rate((worker) => accounts[worker]!)
    return { pairP50Ms: latency.p50, pairP99Ms: latency.p99, oneAccountPairsPerSecond: oneAccount, manyAccountsPairsPerSecond: manyAccounts }
  } finally {
    await Promise.all(clients.map((client) => client.end()))
  }
}

/**
 * What the ledger floor says of each target: a target the floor already misses cannot be met by any implementation
 * that keeps DESIGN.md's hot-path budget (one reserve and one settle transaction per request). For the added latency
 * the floor is the two statements plus the one HTTP hop the bare proxy measures.
 */
export const floorLines = (
  floor: LedgerFloor,
  rps: (key: TargetKey) => number | undefined,
  /** The bare proxy's added p50: one HTTP hop, which any gateway pays besides its ledger. */
  hopMs: number | undefined
): Array<string> => {
  const lines = [
    `Ledger floor (DESIGN.md section 10: one reserve and one settle transaction per billed request; the two statements alone over bare pg, no HTTP, no upstream):` +
      ` pair p50 ${floor.pairP50Ms.toFixed(2)} ms (p99 ${floor.pairP99Ms.toFixed(2)}); ${settings.connections} connections on one account` +
      ` ${Math.round(floor.oneAccountPairsPerSecond)} pairs/s; on ${settings.connections} accounts ${Math.round(floor.manyAccountsPairsPerSecond)} pairs/s.`
  ]
  const reach = (name: string, needed: number | undefined, floorValue: number, what: string, unit: string, higherIsBetter: boolean) => {
    if (needed === undefined) return
    const reachable = higherIsBetter ? floorValue >= needed : floorValue <= needed
    lines.push(
      `- ${reachable ? "within the floor" : "BELOW THE FLOOR"}: ${name} needs ${needed.toFixed(higherIsBetter ? 0 : 2)} ${unit}; ${what} give ${floorValue.toFixed(higherIsBetter ? 0 : 2)} ${unit}` +
        (reachable ? "" : " (unreachable while every request reserves and settles in its own transactions on the account row)")
    )
  }
  if (hopMs !== undefined) {
    // Reserve before the upstream call, settle after it: the two statements and the hop add up.
    reach(`added p50 <= ${TARGET_ADDED_P50_MS} ms`, TARGET_ADDED_P50_MS, floor.pairP50Ms + hopMs, `the ledger statements (${floor.pairP50Ms.toFixed(2)} ms) plus the bare proxy's hop (${hopMs.toFixed(2)} ms)`, "ms", false)
  }
  const portkey = rps("portkey")
  reach(`throughput >= ${TARGET_VS_PORTKEY}x Portkey (one account)`, portkey === undefined ? undefined : TARGET_VS_PORTKEY * portkey, floor.oneAccountPairsPerSecond, "the ledger statements alone", "req/s", true)
  const bare = rps("bare")
  reach(`throughput >= ${TARGET_VS_BARE}x the bare proxy (one account)`, bare === undefined ? undefined : TARGET_VS_BARE * bare, floor.oneAccountPairsPerSecond, "the ledger statements alone", "req/s", true)
  return lines
}
