/**
 * `npm run bench:exchange`: the billing check. Every 2xx answer the exchange gave the bench must have been charged:
 * an account's `spentWei` (GET /v1/account) must have grown, since the account was made, by at least the charge of
 * each request shape times the 2xx answers of that shape it got. The charges are measured first, one request at a
 * time on a settled account (all requests of a shape are alike and the simulator is deterministic); requests still in
 * flight when a load round stops are served and charged too, so the growth may exceed the sum, never fall short.
 */
import * as Http from "node:http"
import { log, sleep } from "./common.ts"
import { sequential } from "./exchangeMeasure.ts"
import { RequestFailure, type Target, timedRequest } from "./exchangeRequests.ts"
import type { BenchAccount } from "./exchangeTargets.ts"

type AccountState = Awaited<ReturnType<BenchAccount["account"]>>

/**
 * Until no hold is left on the account (every request settled or released), up to `ms`. A GET /v1/account that fails
 * meanwhile (the exchange answers 503 while its database pool is exhausted) is retried; `unavailable` counts them.
 */
export const drained = async (account: BenchAccount, ms: number) => {
  const since = Date.now()
  let unavailable = 0
  for (;;) {
    try {
      const state = await account.account()
      if (state.reservedWei === 0n || Date.now() - since > ms) return { ...state, waitedMs: Date.now() - since, unavailable }
    } catch (error) {
      unavailable++
      if (Date.now() - since > ms) throw error
    }
    await sleep(200)
  }
}

/** `drained` for every account at once: the holds left over all of them, the longest wait, the 503s. */
export const drainedAll = async (accounts: ReadonlyArray<BenchAccount>, ms: number) => {
  const states = await Promise.all(accounts.map((account) => drained(account, ms)))
  return {
    states,
    reservedWei: states.reduce((sum, state) => sum + state.reservedWei, 0n),
    waitedMs: Math.max(0, ...states.map((state) => state.waitedMs)),
    unavailable: states.reduce((sum, state) => sum + state.unavailable, 0)
  }
}

/** As `drained`, but a hold left after 30 s is a failure (used where no load ran, so nothing may be left). */
const settled = async (account: BenchAccount): Promise<AccountState> => {
  const state = await drained(account, 30_000)
  if (state.reservedWei !== 0n) throw new Error(`holds still reserved 30 s after the last request: ${state.reservedWei} wei`)
  return state
}

/** What one request costs on `account`, run alone on a settled account. */
export const chargeOf = async (account: BenchAccount, send: () => Promise<void>): Promise<bigint> => {
  const before = await settled(account)
  await send()
  const after = await settled(account)
  return after.spentWei - before.spentWei
}

export interface Charges {
  readonly perPlainWei: bigint
  readonly perStreamWei: bigint
}

/** The charge of one plain and one streaming request of the one shape (each request counted in `target.answered`). */
export const measureCharges = async (account: BenchAccount, target: Target): Promise<Charges> => {
  const perPlainWei = await chargeOf(account, () => sequential(target, false, 0).then(() => undefined))
  const perStreamWei = await chargeOf(account, () => sequential(target, true, 0).then(() => undefined))
  log(`  one non-streaming request is charged ${perPlainWei} wei, one streaming request ${perStreamWei} wei`)
  if (perPlainWei <= 0n || perStreamWei <= 0n) throw new Error(`billing did not happen: spentWei grew by ${perPlainWei} (plain) and ${perStreamWei} (stream) wei`)
  return { perPlainWei, perStreamWei }
}

export interface MixCharges {
  readonly plain: ReadonlyArray<bigint>
  readonly stream: ReadonlyArray<bigint>
}

/**
 * The charge of each of the mix's bodies, plain and streaming: the lesser of two requests each (the cached prefix is
 * dearer the first time the vendor sees it: the lesser is the cached price every later request pays at least).
 * Each request is counted in `target.answeredMix`.
 */
export const measureMixCharges = async (account: BenchAccount, target: Target): Promise<MixCharges> => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const of = async (stream: boolean) => {
      const bodies = stream ? target.mix.stream : target.mix.plain
      const counts = stream ? target.answeredMix.stream : target.answeredMix.plain
      const charges: Array<bigint> = []
      for (let kind = 0; kind < bodies.length; kind++) {
        const send = async () => {
          const answer = await timedRequest(agent, target, stream, false, bodies[kind])
          if (answer.status < 200 || answer.status >= 300) {
            throw new RequestFailure(`${target.label}: mix request ${kind} (${stream ? "stream" : "plain"}) answered ${answer.status}: ${answer.body.slice(0, 300)}`)
          }
          counts[kind] = (counts[kind] ?? 0) + 1
        }
        const first = await chargeOf(account, send)
        const second = await chargeOf(account, send)
        const charge = first < second ? first : second
        if (charge <= 0n) throw new Error(`billing did not happen: mix request ${kind} (${stream ? "stream" : "plain"}) was charged ${first} then ${second} wei`)
        charges.push(charge)
      }
      return charges
    }
    const plain = await of(false)
    const stream = await of(true)
    log(`  the mix's requests (reasoning, tools, cached prefix, plain) are charged ${plain.join(", ")} wei; streaming ${stream.join(", ")} wei`)
    return { plain, stream }
  } finally {
    agent.destroy()
  }
}

export interface BillingCheck {
  /** 2xx answers the check covers. */
  readonly answered: number
  readonly problems: ReadonlyArray<string>
  readonly lines: ReadonlyArray<string>
}

const sumCounts = (counts: ReadonlyArray<number>, charges: ReadonlyArray<bigint>) =>
  counts.reduce((sum, count, kind) => sum + BigInt(count) * (charges[kind] ?? 0n), 0n)

/** The bench's first account: every 2xx answer of the one shape and of the mix since it was made. */
export const checkMainAccount = (account: BenchAccount, state: AccountState, target: Target, charges: Charges, mix: MixCharges): BillingCheck => {
  const { plain, stream } = target.answered
  const mixPlain = target.answeredMix.plain.reduce((a, b) => a + b, 0)
  const mixStream = target.answeredMix.stream.reduce((a, b) => a + b, 0)
  const expectedWei =
    BigInt(plain) * charges.perPlainWei + BigInt(stream) * charges.perStreamWei + sumCounts(target.answeredMix.plain, mix.plain) + sumCounts(target.answeredMix.stream, mix.stream)
  const spentWei = state.spentWei - account.startSpentWei
  const extra = Number(spentWei - expectedWei) / Number(charges.perPlainWei)
  const answered = plain + stream + mixPlain + mixStream
  return {
    answered,
    problems:
      spentWei <= 0n
        ? ["the account's spentWei did not grow"]
        : spentWei < expectedWei
          ? [`the account's spentWei grew by ${spentWei} wei, less than the ${expectedWei} wei of its ${answered} answered requests`]
          : [],
    lines: [
      `one account: spentWei grew by ${spentWei} wei over ${plain} non-streaming, ${stream} streaming and ${mixPlain} + ${mixStream} mix 2xx answers (expected at least ${expectedWei} wei):` +
        ` ${extra.toFixed(1)} non-streaming requests' worth more than answered (requests in flight when a load round stopped are still served and charged)`
    ]
  }
}

/** The many-accounts phase: each account's spentWei grew by at least one charge per 2xx answer it got. */
export const checkAccounts = (accounts: ReadonlyArray<BenchAccount>, states: ReadonlyArray<AccountState>, answered: ReadonlyArray<number>, charges: Charges): BillingCheck => {
  const problems: Array<string> = []
  let spentTotal = 0n
  let expectedTotal = 0n
  accounts.forEach((account, i) => {
    const spentWei = states[i]!.spentWei - account.startSpentWei
    const expectedWei = BigInt(answered[i] ?? 0) * charges.perPlainWei
    spentTotal += spentWei
    expectedTotal += expectedWei
    if (spentWei < expectedWei || (expectedWei > 0n && spentWei <= 0n)) {
      problems.push(`account ${i + 1} (${account.cfId}): spentWei grew by ${spentWei} wei for ${answered[i]} answers (at least ${expectedWei} wei expected)`)
    }
  })
  const total = answered.reduce((a, b) => a + b, 0)
  return {
    answered: total,
    problems,
    lines: [
      `${accounts.length} accounts: spentWei grew by ${spentTotal} wei in all over ${total} 2xx answers (${Math.min(...answered)} to ${Math.max(...answered)} per account;` +
        ` at least ${expectedTotal} wei expected); ${accounts.length - problems.length} of ${accounts.length} accounts charged for every answer they got`
    ]
  }
}
