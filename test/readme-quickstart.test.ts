/**
 * The README's quickstart, read from README.md itself (never copied here): `npm start` on a fresh DATA_DIR with no
 * variable set, then the README's commands in another shell, must end in a billed chat completion and its bill,
 * answered by the simulated vendors the service runs beside itself. The only changes made to the commands are the
 * ones a second terminal implies: the port of this run instead of 8080, and npm pointed at the checkout from a
 * scratch directory (so `jar` and `headers` are not written into the repository).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cleanEnv, logRecords, projectRoot, type ServiceProcess, startProcess } from "./support/process.ts"
import { freePort } from "./support/ports.ts"

const readme = Fs.readFileSync(Path.join(projectRoot, "README.md"), "utf8")

/** The ```sh block right after `<!-- quickstart:<name> -->`. */
const block = (name: string): string => {
  const found = new RegExp(`<!-- quickstart:${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(readme)
  if (found === null) throw new Error(`README.md has no quickstart:${name} block`)
  return found[1]!
}

const scratch: Array<string> = []
const services: Array<ServiceProcess> = []
const pidsToReap: Array<number> = []

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop("SIGKILL")))
  for (const pid of pidsToReap) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  for (const dir of scratch) Fs.rmSync(dir, { recursive: true, force: true })
})

const tempDir = (prefix: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  scratch.push(dir)
  return dir
}

const runShell = (script: string, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (data: Buffer) => (stdout += data.toString("utf8")))
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString("utf8")))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

const childrenOf = (pid: number): Array<number> => {
  try {
    return Fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((p) => p !== "").map(Number)
  } catch {
    return []
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("the README's quickstart", () => {
  it("gives a billed answer from a fresh npm start, with no other process and no variable set", async () => {
    const dataDir = tempDir("cx-quickstart-data-")
    const work = tempDir("cx-quickstart-shell-")
    const port = await freePort()
    const env = cleanEnv({ PORT: String(port), DATA_DIR: dataDir, EMBEDDED_CHAIN_PORT: String(await freePort()), LOG_FORMAT: "json" })

    const service = startProcess("bash", ["-c", block("service")], env)
    services.push(service)
    await service.waitForLog(/"ready at http:\/\/127\.0\.0\.1:\d+"/, 90_000)
    // npm runs the service, which runs the embedded chain and the simulator: all reaped at the end, whatever happens.
    const servicePid = childrenOf(service.child.pid!).flatMap((pid) => [pid, ...childrenOf(pid)]).find((pid) => childrenOf(pid).length >= 2)
    expect(servicePid, "the service process under npm").toBeDefined()
    const helpers = childrenOf(servicePid!)
    pidsToReap.push(servicePid!, ...helpers)

    const commands = block("commands").replaceAll("localhost:8080", `localhost:${port}`)
    // xtrace: a failing command is named in the failure, with the service's own log.
    const script = `set -xeuo pipefail\nnpm() { command npm --prefix ${JSON.stringify(projectRoot)} "$@"; }\n${commands}\n`
    const run = await runShell(script, work, env)
    expect(run.code, `${run.stdout}\n${run.stderr}\n--- service (exit ${service.child.exitCode}) ---\n${service.output().slice(-6000)}`).toBe(0)

    // The chat completion: an answer, billed.
    const [answerLine] = run.stdout.split("\n").filter((line) => line.includes('"object":"chat.completion"'))
    const answer = JSON.parse(answerLine!.slice(answerLine!.indexOf('{"id"'))) as {
      id: string
      choices: Array<{ message: { content: string } }>
      x_credits_used: number
    }
    expect(answer.choices[0]!.message.content.length).toBeGreaterThan(0)
    expect(answer.x_credits_used).toBeGreaterThan(0)
    const headers = Fs.readFileSync(Path.join(work, "headers"), "utf8").toLowerCase()
    expect(headers).toMatch(/^http\/1\.1 200/)
    expect(headers).toContain("x-upstream-simulated: true")

    // Its bill, whose charge is its legs at their rates plus 5%, at the peg.
    const bill = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as {
      id: string
      status: string
      modelRequested: string
      bill: {
        legs: Array<{ tokens: number; rateUsd18PerMillion: string }>
        subtotalUsd18: string
        pegUsd18: string
        chargeWei: string
        revision: { revisionVersion: number; metadataHash: string }
      }
    }
    expect(bill.id).toBe(answer.id)
    expect(bill.status).toBe("completed")
    const subtotal = bill.bill.legs.reduce((sum, leg) => sum + (BigInt(leg.tokens) * BigInt(leg.rateUsd18PerMillion)) / 1_000_000n, 0n)
    expect(BigInt(bill.bill.subtotalUsd18)).toBe(subtotal)
    const charge = (((subtotal * 105n) / 100n) * 10n ** 18n) / BigInt(bill.bill.pegUsd18)
    expect(BigInt(bill.bill.chargeWei)).toBe(charge)
    expect(charge).toBeGreaterThan(0n)
    expect(bill.bill.revision.metadataHash).toMatch(/^0x[0-9a-f]{64}$/)

    // Said once, loudly, at start.
    const warnings = logRecords(service.output()).filter((r) => String(r.message).startsWith("simulated vendors:"))
    expect(warnings.map((r) => [r.logLevel, r.message])).toEqual([
      ["WARN", "simulated vendors: answers are synthetic; set vendor keys or PROVIDERS_FILE for real ones"]
    ])

    // No simulator outlives the service, however it dies. (The embedded chain's anvil is reaped here.)
    const simulatorPid = helpers.find((pid) => Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("simulator/main.ts"))
    expect(simulatorPid).toBeDefined()
    process.kill(servicePid!, "SIGKILL")
    for (let i = 0; i < 100 && alive(simulatorPid!); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(alive(simulatorPid!)).toBe(false)
  }, 240_000)
})
