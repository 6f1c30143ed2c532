/**
 * The embedded chain's anvil does not outlive the process that started it (services/chain/anvil.ts): a holder process
 * starts anvil through the service's own module and is SIGKILLed, so none of its finalizers run; the kernel's
 * parent-death signal must stop anvil anyway. Linux only (read through /proc).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { waitFor } from "./support/polling.ts"
import { freePort } from "./support/ports.ts"
import { projectRoot } from "./support/process.ts"

/** A /proc/<pid>/stat field by its number (1-based, as in proc(5)); undefined once the pid is gone. */
const statField = (pid: number, field: number): string | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return rest[field - 3]
  } catch {
    return undefined
  }
}

/** Running means present and not a zombie (a zombie has ended; only its exit status waits for a reaper). */
const running = (pid: number) => {
  const state = statField(pid, 3)
  return state !== undefined && state !== "Z" && state !== "X"
}

const leftovers: Array<number> = []

afterAll(() => {
  for (const pid of leftovers) {
    try {
      if (running(pid)) process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
})

describe.skipIf(process.platform !== "linux")("an anvil whose parent is SIGKILLed", () => {
  it("ends by itself within seconds", async () => {
    const port = await freePort()
    const holder = spawn(process.execPath, ["--import", "tsx", "test/support/anvilHolder.ts", String(port)], {
      cwd: projectRoot,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    holder.stdout!.on("data", (data: Buffer) => (output += data.toString("utf8")))
    const exited = new Promise<void>((resolve) => holder.once("exit", () => resolve()))
    const anvilPid = await waitFor("the holder to report its anvil", async () => {
      const match = /\{"anvilPid":([0-9]+)\}/.exec(output)
      return match === null ? undefined : Number(match[1])
    }, 30_000, 50)
    leftovers.push(anvilPid)

    // It is anvil itself (setpriv exec'd into it), the holder's child, answering on its port.
    expect(Fs.readFileSync(`/proc/${anvilPid}/cmdline`, "utf8").split("\0")[0]).toMatch(/anvil$/)
    expect(statField(anvilPid, 4)).toBe(String(holder.pid))
    const answer = await fetch(`http://127.0.0.1:${port}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })
    })
    expect(((await answer.json()) as { result: string }).result).toBe("0x2105")

    holder.kill("SIGKILL")
    await exited
    await waitFor(`anvil (pid ${anvilPid}) to end after its parent was killed`, async () => !running(anvilPid), 10_000, 50)
    // And its port is free again.
    await expect(fetch(`http://127.0.0.1:${port}`, { method: "POST", body: "{}" })).rejects.toThrow()
  }, 60_000)
})
