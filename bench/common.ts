/**
 * What every `npm run bench:*` shares: reading its settings from the environment, the project root, free ports, a
 * measure of how busy the machine is before a run, and the clean-up that stops whatever a bench started on every
 * path out.
 */
import type { ChildProcess } from "node:child_process"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

export const projectRoot = Path.resolve(import.meta.dirname, "..")

export const positiveNumber = (name: string, fallback: number): number => {
  const text = process.env[name]
  if (text === undefined || text.trim() === "") return fallback
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${text}"`)
  return value
}

export const flag = (name: string, fallback: boolean): boolean => {
  const text = process.env[name]?.trim().toLowerCase()
  if (text === undefined || text === "") return fallback
  if (["1", "true", "yes", "on"].includes(text)) return true
  if (["0", "false", "no", "off"].includes(text)) return false
  throw new Error(`${name} must be true or false, got "${process.env[name]}"`)
}

export const log = (line: string) => console.log(line)
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** Share of all cores' time spent busy over `ms` (to tell whether something else is running on the machine). */
export const cpuBusyPercent = async (ms: number) => {
  const totals = () =>
    Os.cpus().reduce(
      (acc, cpu) => {
        const { idle, irq, nice, sys, user } = cpu.times
        return { idle: acc.idle + idle, all: acc.all + idle + irq + nice + sys + user }
      },
      { idle: 0, all: 0 }
    )
  const before = totals()
  await sleep(ms)
  const after = totals()
  const all = after.all - before.all
  return all <= 0 ? 0 : Math.round((100 * (all - (after.idle - before.idle))) / all)
}

const cleanups: Array<{ readonly name: string; readonly run: () => Promise<void> }> = []
/** Registers something to stop at the end; the last registered is stopped first. */
export const onCleanup = (name: string, run: () => Promise<void>) => cleanups.push({ name, run })

let cleaningUp: Promise<void> | undefined
export const cleanUp = (): Promise<void> =>
  (cleaningUp ??= (async () => {
    for (const { name, run } of cleanups.splice(0).reverse()) {
      try {
        await run()
      } catch (error) {
        console.error(`clean-up of ${name} failed: ${String(error)}`)
      }
    }
  })())

/** Waits for a child to exit, up to `ms`; true when it did. */
export const exitedWithin = (child: ChildProcess, exited: Promise<unknown>, ms: number) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(true)
    : Promise.race([exited.then(() => true), sleep(ms).then(() => false)])

/**
 * Runs a bench's `main` as the process: cleans up what it started on success, failure or Ctrl-C, and exits with
 * `main`'s status (1 when it threw, 130 when interrupted).
 */
export const runBench = async (name: string, main: () => Promise<number>): Promise<never> => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping...`)
      void cleanUp().finally(() => process.exit(130))
    })
  }
  let status = 1
  try {
    status = await main()
  } catch (error) {
    console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`)
    status = 1
  } finally {
    await cleanUp()
  }
  process.exit(status)
}
