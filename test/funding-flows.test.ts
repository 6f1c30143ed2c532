/**
 * Deposits and withdrawals over real sockets (issue 9 item 6): the account's funding details, the deposit watcher
 * crediting a deposit exactly once (a re-scan and a second instance credit nothing twice), a deposit to an unknown
 * reference recorded and not credited, and withdrawals through the relayer with their failures mapped to
 * contract_error and refunded.
 */
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { createPublicClient, createWalletClient, type Hex, http, keccak256, toHex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { foundry } from "viem/chains"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { creditTokenAbi, treasuryAbi } from "../services/chain/funding.ts"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { createTestDatabase, queryDatabase, type TestDatabase } from "./support/database.ts"
import { cleanEnv, startProcess } from "./support/process.ts"
import { freePort, startTestServer, type TestServer } from "./support/server.ts"

// anvil's public development keys 1 and 2: the embedded chain's relayer and minter.
const RELAYER_KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
const MINTER_KEY: Hex = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"
const MAINTAINER_TOKEN = "funding-flows-maintainer-token"
const IP = "203.0.113.61"
const ONE = 10n ** 18n

let database: TestDatabase
let first: TestServer
let second: TestServer | undefined
let rpcUrl: string
let cookie: string
let cfId: string
let funding: { chainId: number; token: Hex; treasury: Hex; accountRef: Hex; decimals: number; confirmations: number }
const userKey: Hex = generatePrivateKey()
const user = privateKeyToAccount(userKey)

const api = () => makeClient(first.baseUrl)
const balance = async () => BigInt((await api().call("GET", "/v1/account", undefined, { cookie, ip: IP })).body.balanceWei as string)
const chainOf = (chainId: number) => ({ ...foundry, id: chainId, rpcUrls: { default: { http: [rpcUrl] } } })
const publicClient = () => createPublicClient({ chain: chainOf(funding.chainId), transport: http(rpcUrl), pollingInterval: 50 })
const walletOf = (key: Hex) => createWalletClient({ chain: chainOf(funding.chainId), transport: http(rpcUrl), account: privateKeyToAccount(key) })
const rpc = (method: string, params: ReadonlyArray<unknown> = []) => publicClient().request({ method: method as never, params: params as never })
const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(database, text, values)
const waitFor = async (check: () => Promise<boolean>, what: string, ms = 20_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}
const send = async (key: Hex, request: { address: Hex; abi: typeof creditTokenAbi | typeof treasuryAbi; functionName: string; args: ReadonlyArray<unknown> }) => {
  const hash = await walletOf(key).writeContract(request as never)
  const receipt = await publicClient().waitForTransactionReceipt({ hash })
  expect(receipt.status).toBe("success")
  return receipt
}
const deposit = async (key: Hex, accountRef: Hex, amount: bigint) => {
  const from = privateKeyToAccount(key).address
  await send(MINTER_KEY, { address: funding.token, abi: creditTokenAbi, functionName: "mint", args: [from, amount] })
  await send(key, { address: funding.token, abi: creditTokenAbi, functionName: "approve", args: [funding.treasury, amount] })
  return send(key, { address: funding.treasury, abi: treasuryAbi, functionName: "deposit", args: [accountRef, amount] })
}
/** Rewinds the watcher's position to block 0 and waits until it has scanned past `block` again. */
const rescanPast = async (block: bigint) => {
  await query("UPDATE funding_scan_state SET next_block = 0")
  await waitFor(async () => {
    const rows = await query("SELECT next_block::text AS n FROM funding_scan_state")
    return rows.length > 0 && BigInt(rows[0].n as string) > block
  }, "the re-scan")
}

beforeAll(async () => {
  database = await createTestDatabase()
  const chainPort = await freePort()
  rpcUrl = `http://127.0.0.1:${chainPort}`
  first = await startTestServer({
    DATABASE_URL: database.url,
    EMBEDDED_CHAIN_PORT: String(chainPort),
    RATE_LIMIT_ENABLED: "false",
    MAINTAINER_TOKEN,
    FUNDING_SCAN_INTERVAL_SECONDS: "0.2",
    // A withdrawal not confirmed within 3 s answers confirmation_pending (the tests below stop mining for that).
    CHAIN_CONFIRMATION_TIMEOUT_MS: "3000"
  })
  const signedIn = await signInByWallet(api(), user, IP)
  cookie = signedIn.cookie
  cfId = signedIn.me.cf_id
  const answer = await api().call("GET", "/v1/account/funding", undefined, { cookie, ip: IP })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  funding = answer.body
  // The user pays gas for approve and deposit.
  await publicClient().request({ method: "anvil_setBalance" as never, params: [user.address, toHex(10n ** 20n)] as never })
}, 120_000)

afterAll(async () => {
  await second?.close()
  await first?.close()
  await database?.close()
})

describe("GET /v1/account/funding", () => {
  it("names the embedded chain's contracts, one confirmation and a stable bytes32 reference of this account", async () => {
    expect(funding).toMatchObject({ decimals: 18, confirmations: 1 })
    expect(funding.token).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(funding.treasury).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(funding.accountRef).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await publicClient().getChainId()).toBe(funding.chainId)
    const again = await api().call("GET", "/v1/account/funding", undefined, { cookie, ip: IP })
    expect(again.body.accountRef).toBe(funding.accountRef)
    const other = await signInByWallet(api(), privateKeyToAccount(generatePrivateKey()), IP)
    const theirs = await api().call("GET", "/v1/account/funding", undefined, { cookie: other.cookie, ip: IP })
    expect(theirs.body.accountRef).not.toBe(funding.accountRef)
    expect((await api().call("GET", "/v1/account/funding", undefined, { ip: IP })).status).toBe(401)
  })
})

describe("the deposit watcher", () => {
  let depositBlock: bigint
  const amount = 7n * ONE + 123n

  it("credits a deposit with the account's reference by exactly its amount, once", async () => {
    const before = await balance()
    const receipt = await deposit(userKey, funding.accountRef, amount)
    depositBlock = receipt.blockNumber
    await waitFor(async () => (await balance()) === before + amount, "the deposit to be credited")
    const ledger = await api().call("GET", "/v1/account/ledger", undefined, { cookie, ip: IP })
    const deposits = (ledger.body.data as Array<{ kind: string; reference: string; amountWei: string }>).filter((e) => e.kind === "deposit")
    expect(deposits).toHaveLength(1)
    expect(deposits[0]).toMatchObject({ amountWei: amount.toString() })
    expect(deposits[0]!.reference).toMatch(new RegExp(`^${receipt.transactionHash}:\\d+$`))
  })

  it("records a deposit to an unknown reference as unmatched and credits nobody", async () => {
    const before = await balance()
    const unknownRef = keccak256(toHex("nobody's reference"))
    const receipt = await deposit(userKey, unknownRef, ONE)
    await waitFor(async () => (await query("SELECT 1 FROM funding_unmatched_deposits WHERE tx_hash = $1", [receipt.transactionHash])).length === 1, "the unmatched record")
    const [row] = await query("SELECT account_ref, amount_wei::text AS amount FROM funding_unmatched_deposits WHERE tx_hash = $1", [receipt.transactionHash])
    expect(row).toEqual({ account_ref: unknownRef, amount: ONE.toString() })
    expect(await balance()).toBe(before)
  })

  it("credits nothing twice when the same range is scanned again", async () => {
    const before = await balance()
    await rescanPast(depositBlock)
    expect(await balance()).toBe(before)
    expect(await query("SELECT count(*)::int AS n FROM funding_unmatched_deposits")).toEqual([{ n: 1 }])
  })

  it("credits nothing twice when a second instance scans the same chain and database", async () => {
    const before = await balance()
    const registry = (await api().call("GET", "/v1/oracle/contract-metadata")).body.address as string
    second = await startTestServer({
      DATABASE_URL: database.url,
      RPC_URL: rpcUrl,
      CHAIN_ID: String(funding.chainId),
      CHAIN_CONFIRMATIONS: "1",
      REGISTRY_ADDRESS: registry,
      TREASURY_ADDRESS: funding.treasury,
      CREDIT_TOKEN_ADDRESS: funding.token,
      RATE_LIMIT_ENABLED: "false",
      FUNDING_SCAN_INTERVAL_SECONDS: "0.2"
    })
    await rescanPast(depositBlock)
    await rescanPast(depositBlock)
    expect(await balance()).toBe(before)
    const deposits = await query("SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'deposit'")
    expect(deposits).toEqual([{ n: 1 }])
  }, 60_000)
})

describe("POST /v1/account/withdrawals", () => {
  const withdraw = (body: unknown) => api().call("POST", "/v1/account/withdrawals", body, { cookie, ip: IP })
  const tokenBalance = (address: Hex) =>
    publicClient().readContract({ address: funding.token, abi: creditTokenAbi, functionName: "balanceOf", args: [address] })
  const listed_ = async () => {
    const page = await api().call("GET", "/v1/account/withdrawals?limit=100", undefined, { cookie, ip: IP })
    expect(page.status, JSON.stringify(page.body)).toBe(200)
    return page.body.data as Array<{ id: string; status: string; txHash: string | null; failureReason: string | null }>
  }
  const statusOf = async (id: string) => (await listed_()).find((w) => w.id === id)?.status
  const entriesOf = async (kind: string) =>
    ((await api().call("GET", "/v1/account/ledger?limit=100", undefined, { cookie, ip: IP })).body.data as Array<{ kind: string; reference: string }>).filter((e) => e.kind === kind)

  it("debits the ledger and sends the tokens from the treasury", async () => {
    const before = await balance()
    const to = privateKeyToAccount(generatePrivateKey()).address
    const answer = await withdraw({ to, amountWei: (2n * ONE).toString() })
    expect(answer.status, JSON.stringify(answer.body)).toBe(201)
    expect(answer.body).toMatchObject({
      to: to.toLowerCase(),
      amountWei: (2n * ONE).toString(),
      balanceWei: (before - 2n * ONE).toString(),
      status: "confirmed",
      failureReason: null
    })
    expect(answer.body.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await tokenBalance(to)).toBe(2n * ONE)
    const listed = await listed_()
    expect(listed[0]).toMatchObject({ id: answer.body.id, status: "confirmed", txHash: answer.body.txHash })
    expect(await balance()).toBe(before - 2n * ONE)
    expect((await entriesOf("withdrawal")).map((e) => e.reference)).toContain(answer.body.id)
  })

  it("accepts a signed request instead of a session", async () => {
    const before = await balance()
    const to = privateKeyToAccount(generatePrivateKey()).address
    const body = JSON.stringify({ to, amountWei: ONE.toString() })
    const timestamp = Math.floor(Date.now() / 1000)
    const nonce = randomBytes(12).toString("hex")
    const bodyHash = createHash("sha256").update(body).digest("hex")
    const message = `CF-SIGNED-REQUEST\nPOST\n/v1/account/withdrawals\n${timestamp}\n${nonce}\n${bodyHash}`
    const answer = await api().call("POST", "/v1/account/withdrawals", body, {
      ip: IP,
      headers: { "x-cf-address": user.address, "x-cf-timestamp": String(timestamp), "x-cf-nonce": nonce, "x-cf-signature": await user.signMessage({ message }) }
    })
    expect(answer.status, JSON.stringify(answer.body)).toBe(201)
    expect(await tokenBalance(to)).toBe(ONE)
    expect(await balance()).toBe(before - ONE)
  })

  it("refuses bad input with 422 and too large an amount with 402, writing nothing", async () => {
    const before = await balance()
    const count = (await entriesOf("withdrawal")).length
    const to = privateKeyToAccount(generatePrivateKey()).address
    for (const body of [{ to: "not-an-address", amountWei: "1" }, { to, amountWei: "0" }, { to, amountWei: "-5" }, { to }, {}]) {
      const answer = await withdraw(body)
      expect(answer.status, JSON.stringify(body)).toBe(422)
      expect(answer.body.error.code).toBe("validation_failed")
    }
    const tooMuch = await withdraw({ to, amountWei: (before + 1n).toString() })
    expect(tooMuch.status).toBe(402)
    expect(tooMuch.body.error.code).toBe("insufficient_balance")
    expect(await balance()).toBe(before)
    expect(await entriesOf("withdrawal")).toHaveLength(count)
  })

  it("answers contract_error contract_rejected and refunds when the treasury holds too little", async () => {
    const granted = await api().call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: (1000n * ONE).toString() }, {
      headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
    })
    expect(granted.status, JSON.stringify(granted.body)).toBeLessThan(300)
    const before = await balance()
    const answer = await withdraw({ to: privateKeyToAccount(generatePrivateKey()).address, amountWei: (500n * ONE).toString() })
    expect(answer.status, JSON.stringify(answer.body)).toBe(500)
    expect(answer.body.error.code).toBe("contract_error")
    expect(answer.body.error.details.chainFailure.reason).toBe("contract_rejected")
    expect(answer.body.error.message).toMatch(/treasury refused the call: InsufficientTreasuryBalance/)
    expect(answer.body.error.details.withdrawal).toMatchObject({ status: "refunded", txHash: null })
    expect((await listed_()).find((w) => w.id === answer.body.error.details.withdrawal.id)).toMatchObject({
      status: "refunded",
      failureReason: expect.stringMatching(/^contract_rejected: /)
    })
    expect(await balance()).toBe(before)
    const refunds = await entriesOf("withdrawal_refund")
    expect(refunds).toHaveLength(1)
  })

  it("answers contract_error relayer_unfunded and refunds when the relayer has no gas", async () => {
    const relayer = privateKeyToAccount(RELAYER_KEY).address
    const gas = await publicClient().getBalance({ address: relayer })
    await publicClient().request({ method: "anvil_setBalance" as never, params: [relayer, "0x0"] as never })
    try {
      const before = await balance()
      const answer = await withdraw({ to: privateKeyToAccount(generatePrivateKey()).address, amountWei: ONE.toString() })
      expect(answer.status, JSON.stringify(answer.body)).toBe(500)
      expect(answer.body.error.code).toBe("contract_error")
      expect(answer.body.error.details.chainFailure.reason, answer.body.error.message).toBe("relayer_unfunded")
      expect(answer.body.error.details.withdrawal.status).toBe("refunded")
      expect(await balance()).toBe(before)
      expect(await entriesOf("withdrawal_refund")).toHaveLength(2)
    } finally {
      await publicClient().request({ method: "anvil_setBalance" as never, params: [relayer, toHex(gas)] as never })
    }
  })

  it("answers contract_error chain_unavailable and refunds when the chain does not answer", async () => {
    const before = await balance()
    // Every process listening on the node's port, whatever it is: nothing may answer there once they are stopped.
    const port = new URL(rpcUrl).port
    const listening = execFileSync("ss", ["-Htlnp", `sport = :${port}`]).toString()
    const pids = [...new Set([...listening.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])))]
    expect(pids.length, listening).toBeGreaterThan(0)
    expect(pids, `this test's own process listens on the node's port: ${listening}`).not.toContain(process.pid)
    const commands = pids.map((pid) => `${pid}: ${Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()}`).join("; ")
    for (const pid of pids) process.kill(pid, "SIGSTOP")
    let answer: Awaited<ReturnType<typeof withdraw>>
    try {
      // A stop takes effect once each of the node's threads leaves what it is doing (a state dump to disk, say): wait
      // until the kernel reports every one stopped, or the node may still answer the first calls.
      const stopped = (pid: number) => /^State:\s+T/m.test(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
      await waitFor(async () => pids.every(stopped), `the node's processes (${commands}) to stop`)
      // The stopped node must be the one the service talks to: nothing may answer on its port now.
      const stillAnswers = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        signal: AbortSignal.timeout(1_000)
      }).then(async (r) => `${r.status} ${await r.text()}`, () => undefined)
      expect(stillAnswers, `${rpcUrl} still answers after stopping ${commands} (ss: ${listening.trim()})`).toBeUndefined()
      answer = await withdraw({ to: privateKeyToAccount(generatePrivateKey()).address, amountWei: ONE.toString() })
    } finally {
      for (const pid of pids) process.kill(pid, "SIGCONT")
    }
    expect(answer.status, JSON.stringify(answer.body)).toBe(500)
    expect(answer.body.error.code).toBe("contract_error")
    expect(answer.body.error.details.chainFailure.reason).toBe("chain_unavailable")
    expect(answer.body.error.details.withdrawal.status).toBe("refunded")
    expect(await balance()).toBe(before)
    expect(await entriesOf("withdrawal_refund")).toHaveLength(3)
  }, 90_000)

  it("answers confirmation_pending without a refund when the transfer is not mined in time, then confirms it", async () => {
    const before = await balance()
    const to = privateKeyToAccount(generatePrivateKey()).address
    await rpc("evm_setAutomine", [false])
    let answer: Awaited<ReturnType<typeof withdraw>>
    try {
      answer = await withdraw({ to, amountWei: ONE.toString() })
      expect(answer.status, JSON.stringify(answer.body)).toBe(500)
      expect(answer.body.error.code).toBe("contract_error")
      expect(answer.body.error.details.chainFailure.reason).toBe("confirmation_pending")
      expect(answer.body.error.details.withdrawal).toMatchObject({ status: "pending", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
      expect(await balance()).toBe(before - ONE)
      expect(await statusOf(answer.body.error.details.withdrawal.id)).toBe("pending")
    } finally {
      await rpc("evm_setAutomine", [true])
    }
    await rpc("evm_mine")
    const id = answer.body.error.details.withdrawal.id as string
    await waitFor(async () => (await statusOf(id)) === "confirmed", "the watcher to confirm the withdrawal")
    expect(await tokenBalance(to)).toBe(ONE)
    expect(await balance()).toBe(before - ONE)
    expect((await entriesOf("withdrawal_refund")).map((e) => e.reference)).not.toContain(id)
  }, 60_000)

  it("refunds a pending withdrawal once its relayer nonce went to another transaction, and pays nothing", async () => {
    const before = await balance()
    const to = privateKeyToAccount(generatePrivateKey()).address
    await rpc("evm_setAutomine", [false])
    let id: string
    try {
      const answer = await withdraw({ to, amountWei: ONE.toString() })
      expect(answer.body.error?.details?.chainFailure?.reason, JSON.stringify(answer.body)).toBe("confirmation_pending")
      id = answer.body.error.details.withdrawal.id
      const [row] = await query("SELECT nonce::int AS nonce, tx_hash FROM funding_withdrawals WHERE id = $1", [id])
      // The node forgets the transfer and the relayer's nonce goes to a self-transfer that outbids any resend of it.
      await rpc("anvil_dropTransaction", [row!.tx_hash])
      const relayer = privateKeyToAccount(RELAYER_KEY)
      await walletOf(RELAYER_KEY).sendTransaction({
        to: relayer.address,
        value: 0n,
        nonce: row!.nonce as number,
        maxFeePerGas: 500n * 10n ** 9n,
        maxPriorityFeePerGas: 100n * 10n ** 9n
      })
      await rpc("evm_mine")
    } finally {
      await rpc("evm_setAutomine", [true])
    }
    await waitFor(async () => (await statusOf(id)) === "refunded", "the watcher to refund the withdrawal")
    expect(await balance()).toBe(before)
    expect((await entriesOf("withdrawal_refund")).map((e) => e.reference)).toContain(id)
    expect(await tokenBalance(to)).toBe(0n)
    const [row] = await query("SELECT failure_reason FROM funding_withdrawals WHERE id = $1", [id])
    expect(row!.failure_reason).toMatch(/went to another transaction/)
  }, 60_000)
})

describe("npm run accounts -- faucet", () => {
  const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
    const cli = startProcess(process.execPath, ["--import", "tsx", "src/cli.ts", "accounts", ...args], cleanEnv(env))
    const code = await cli.exited
    return { code, output: cli.output() }
  }

  it("mints test tokens on the embedded chain and refuses a configured network", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-faucet-"))
    try {
      const to = privateKeyToAccount(generatePrivateKey()).address
      const env = { DATA_DIR: dataDir, EMBEDDED_CHAIN_PORT: String(await freePort()), LOG_LEVEL: "WARN" }
      const minted = await runCli(["faucet", to, "2.5"], env)
      expect(minted.code, minted.output).toBe(0)
      expect(minted.output).toMatch(new RegExp(`minted in 0x[0-9a-f]{64} \\(block \\d+\\); ${to} holds 2\\.5 credits \\(2500000000000000000 wei\\)`))
      const again = await runCli(["faucet", to, "1"], env)
      expect(again.output).toMatch(/holds 3\.5 credits/)
      const refused = await runCli(["faucet", to, "1"], { ...env, RPC_URL: rpcUrl, REGISTRY_ADDRESS: funding.treasury })
      expect(refused.code).not.toBe(0)
      expect(refused.output).toMatch(/embedded chain only/)
      const bad = await runCli(["faucet", "nope", "1"], env)
      expect(bad.code).not.toBe(0)
      expect(bad.output).toMatch(/not an address/)
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})
