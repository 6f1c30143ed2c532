/**
 * The operator command line beside a running service on the same DATA_DIR (the embedded database and chain, which
 * one process at a time may open): every command works both while the service runs (it is sent to the service,
 * which runs it on its own database and chain) and while it is stopped (the command opens DATA_DIR itself), and
 * neither way corrupts or locks out the service.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanEnv, type ServiceProcess, startProcess, startService } from "./support/process.ts"
import { freePort } from "./support/ports.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-cli-beside-"))
let env: NodeJS.ProcessEnv
let baseUrl: string
let service: ServiceProcess | undefined
let cookie = ""
const email = "operator-trial@example.com"
const wallet = privateKeyToAccount(generatePrivateKey()).address
const RUNS_THERE = /the service is running on this DATA_DIR \(process \d+\): the command runs there/

const start = async () => {
  service = startService({ ...env, LOG_LEVEL: "INFO" })
  await service.waitForLog(/"ready at http:/, 90_000)
}

const stop = async () => {
  expect(await service!.stop("SIGTERM")).toBe(0)
  service = undefined
}

const cli = async (...args: Array<string>) => {
  const run = startProcess(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], env)
  const code = await run.exited
  return { code, output: run.output() }
}

/** A command that succeeds, and whether it ran inside the service. */
const ok = async (...args: Array<string>) => {
  const run = await cli(...args)
  expect(run.code, run.output).toBe(0)
  return run.output
}

const balanceWei = async () => {
  const response = await fetch(`${baseUrl}/v1/account`, { headers: { cookie } })
  expect(response.status).toBe(200)
  return ((await response.json()) as { balanceWei: string }).balanceWei
}

beforeAll(async () => {
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  env = cleanEnv({
    PORT: String(port),
    DATA_DIR: dataDir,
    EMBEDDED_CHAIN_PORT: String(await freePort()),
    LOG_LEVEL: "WARN",
    LOG_FORMAT: "json",
    EXCHANGE_SIMULATOR: "off"
  })
  await start()
}, 120_000)

afterAll(async () => {
  await service?.stop("SIGTERM")
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("the operator command line beside a running service", () => {
  it("runs every command inside the service while it runs, and on DATA_DIR itself once it is stopped", async () => {
    // The local credential: owner-only, gone when the service stops.
    const file = Path.join(dataDir, "operator.json")
    expect(Fs.statSync(file).mode & 0o777).toBe(0o600)

    // Sign in with the code the command line reads back from the service's outbox.
    expect((await fetch(`${baseUrl}/v1/auth/email/start`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) })).status).toBe(202)
    const codeRun = await ok("accounts", "code", email)
    expect(codeRun).toMatch(RUNS_THERE)
    const code = /^([0-9]{6})$/m.exec(codeRun)![1]!
    const verified = await fetch(`${baseUrl}/v1/auth/email/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, code })
    })
    expect(verified.status).toBe(200)
    cookie = verified.headers.get("set-cookie")!.split(";")[0]!
    const model = ((await (await fetch(`${baseUrl}/v1/oracle/catalog`)).json()) as { models: Array<{ modelKey: string }> }).models[0]!.modelKey

    // While it runs: each command is sent to the service and says so.
    /** Every command but `code`, in the same order both ways; grants and mints take their amounts. */
    const everyCommand = async (granted: string, minted: string) => ({
      grant: await ok("accounts", "grant", email, granted),
      faucet: await ok("accounts", "faucet", wallet, minted),
      routingSet: await ok("accounts", "routing", "set", model),
      routingShow: await ok("accounts", "routing", "show"),
      routingClear: await ok("accounts", "routing", "clear"),
      status: await ok("oracle", "status"),
      basket: await ok("oracle", "basket"),
      scan: await ok("oracle", "scan"),
      sync: await ok("oracle", "sync"),
      verify: await ok("oracle", "verify"),
      publish: await ok("oracle", "publish"),
      refork: await ok("oracle", "refork"),
      migrate: await ok("migrate")
    })
    const running = await everyCommand("10", "3")
    for (const [name, output] of Object.entries(running)) expect(output, name).toMatch(RUNS_THERE)
    expect(running.refork).toMatch(/the basket is unchanged: nothing pending/)
    // A revision that does not exist cannot be approved or discarded, from either place.
    for (const action of ["approve", "discard"]) {
      const missing = await cli("oracle", action, "9999")
      expect(missing.code, missing.output).toBe(1)
      expect(missing.output).toMatch(RUNS_THERE)
      expect(missing.output).toMatch(/error: .*9999/)
    }
    expect(running.grant).toMatch(/granted 10 credits \(10000000000000000000 wei\) to cf_[a-z2-7]{12} .*balance now 10 credits/)
    expect(running.faucet).toMatch(new RegExp(`${wallet} holds 3 credits \\(3000000000000000000 wei\\)`))
    expect(running.routingShow).toContain(`1. ${model}`)
    expect(running.routingClear).toMatch(/the auto list is empty/)
    const published = Number(/revisions on chain: (\d+); confirmed in the database: (\d+)/.exec(running.status)![1])
    expect(published).toBeGreaterThan(0)
    expect(running.status).toContain(`confirmed in the database: ${published}`)
    expect(running.basket).toMatch(/basket as of .*: \d+ families/)
    expect(running.scan).toMatch(/price scan #\d+ \(cli\): succeeded/)
    expect(running.sync).toMatch(/synced: \d+ revisions on chain at block \d+/)
    expect(running.verify).toMatch(/(\d+) revisions checked: \1 verified, 0 mismatched/)
    expect(running.publish).toMatch(/the basket is unchanged: nothing to publish|revision \d+ \(/)
    expect(running.migrate).toMatch(/schema is current; nothing to apply/)

    // A refusal comes back as the command's own failure, and the service serves on, its balance exact.
    const refused = await cli("accounts", "grant", "nobody@example.com", "1")
    expect(refused.code).toBe(1)
    expect(refused.output).toMatch(/error: No account belongs to nobody@example\.com/)
    expect(await balanceWei()).toBe("10000000000000000000")
    const forged = await fetch(`${baseUrl}/v1/admin/commands`, {
      method: "POST",
      headers: { authorization: "Bearer not-the-token-not-the-token-not-the-token", "content-type": "application/json" },
      body: JSON.stringify({ args: ["accounts", "grant", email, "1000"] })
    })
    expect(forged.status).toBe(401)

    await stop()
    expect(Fs.existsSync(file)).toBe(false)

    // Stopped: the same commands open DATA_DIR themselves, and see what the service wrote.
    const stopped = { code: await ok("accounts", "code", email), ...(await everyCommand("5", "1")) }
    for (const [name, output] of Object.entries(stopped)) expect(output, name).not.toMatch(RUNS_THERE)
    expect(stopped.routingShow).toContain(`1. ${model}`)
    expect(stopped.routingClear).toMatch(/the auto list is empty/)
    expect(stopped.basket).toMatch(/basket as of .*: \d+ families/)
    expect(stopped.scan).toMatch(/price scan #\d+ \(cli\): succeeded/)
    expect(stopped.sync).toMatch(/synced: \d+ revisions on chain at block \d+/)
    expect(stopped.publish).toMatch(/the basket is unchanged: nothing to publish|revision \d+ \(/)
    expect(stopped.refork).toMatch(/the basket is unchanged: nothing pending/)
    expect(stopped.migrate).toMatch(/schema is current; nothing to apply/)
    for (const action of ["approve", "discard"]) {
      const missing = await cli("oracle", action, "9999")
      expect(missing.code, missing.output).toBe(1)
      expect(missing.output).not.toMatch(RUNS_THERE)
      expect(missing.output).toMatch(/error: .*9999/)
    }
    expect(stopped.code).toMatch(new RegExp(`^${code}$`, "m"))
    expect(stopped.grant).toMatch(/balance now 15 credits/)
    expect(stopped.faucet).toMatch(new RegExp(`${wallet} holds 4 credits`))
    expect(stopped.status).toContain(`revisions on chain: ${published}; confirmed in the database: ${published}`)
    expect(stopped.verify).toMatch(new RegExp(`${published} revisions checked: ${published} verified, 0 mismatched`))

    // Started again on the same DATA_DIR: nothing lost, nothing locked, and the command line reaches it again.
    await start()
    expect(await balanceWei()).toBe("15000000000000000000")
    const again = await ok("accounts", "grant", email, "1")
    expect(again).toMatch(RUNS_THERE)
    expect(again).toMatch(/balance now 16 credits/)
    expect(await balanceWei()).toBe("16000000000000000000")
  }, 420_000)
})
