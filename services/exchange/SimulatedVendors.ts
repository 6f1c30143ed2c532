/**
 * The vendor simulator as the upstream of every catalogued vendor, when the service runs on the all-embedded
 * default with no upstream configured (or EXCHANGE_SIMULATOR=on): a fresh `npm start` can then serve and bill a
 * paid request with nothing else running. The simulator runs as a child process for the service's lifetime, so
 * the product process never loads its code (DESIGN.md section 10) and its work never competes with the request
 * path's event loop; it exits with the service, and also when the service dies without a goodbye (its stdin
 * closes).
 */
import { Effect, Option, Runtime } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { anyVendorKeySet, KEY_SHORTCUTS, simulatesVendors } from "../../domain/exchange/providers.ts"
import { AppConfig, readVariables } from "../platform/AppConfig.ts"
import { StartupFailure } from "../platform/Startup.ts"

const simulatorMain = new URL("../../simulator/main.ts", import.meta.url).pathname
const projectRoot = new URL("../..", import.meta.url).pathname
/** Where the simulator's ready line names its address (simulator/main.ts). */
const READY = /simulator ready at (http:\/\/\S+)/

export const SIMULATED_VENDORS_WARNING = "simulated vendors: answers are synthetic; set vendor keys or PROVIDERS_FILE for real ones"

const tail = (text: string) => text.trim().split("\n").slice(-5).join(" | ")

interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly exited: Promise<number | null>
}

const spawnSimulator = Effect.async<Running, StartupFailure>((resume) => {
  const child = spawn(process.execPath, ["--import", "tsx", simulatorMain], {
    cwd: projectRoot,
    env: { ...process.env, SIMULATOR_PORT: "0", SIMULATOR_HOST: "127.0.0.1", SIMULATOR_EXIT_WITH_PARENT: "1" },
    stdio: ["pipe", "pipe", "pipe"],
    // Its own process group: a Ctrl-C at the terminal reaches the service, which stops the simulator after its
    // requests, instead of both at once.
    detached: true
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  let output = ""
  let settled = false
  const fail = (message: string) => {
    if (settled) return
    settled = true
    resume(Effect.fail(new StartupFailure({ message })))
  }
  const onData = (data: Buffer) => {
    if (output.length < 64_000) output += data.toString("utf8")
    const ready = settled ? null : READY.exec(output)
    if (ready !== null) {
      settled = true
      resume(Effect.succeed({ child, url: ready[1]!, exited }))
    }
  }
  child.stdout!.on("data", onData)
  child.stderr!.on("data", onData)
  child.once("error", (error) => fail(`the vendor simulator could not be started: ${error.message}`))
  child.once("exit", (code) => fail(`the vendor simulator exited (code ${code}) before it was ready: ${tail(output)}`))
  return Effect.sync(() => void child.kill("SIGKILL"))
}).pipe(
  Effect.timeoutFail({
    duration: "30 seconds",
    onTimeout: () => new StartupFailure({ message: "the vendor simulator did not report ready within 30 seconds" })
  })
)

const stopSimulator = (running: Running) =>
  Effect.promise(async () => {
    if (running.child.exitCode !== null || running.child.signalCode !== null) return
    running.child.kill("SIGTERM")
    const timer = setTimeout(() => running.child.kill("SIGKILL"), 5_000)
    await running.exited
    clearTimeout(timer)
  })

export class SimulatedVendors extends Effect.Service<SimulatedVendors>()("SimulatedVendors", {
  scoped: Effect.gen(function* () {
    const config = yield* AppConfig
    const env = yield* readVariables(KEY_SHORTCUTS.flatMap((shortcut) => shortcut.variables))
    const simulate = simulatesVendors({
      setting: config.exchange.simulator,
      databaseConfigured: Option.isSome(config.database.url),
      providersFileConfigured: Option.isSome(config.exchange.providersFile),
      vendorKeyConfigured: anyVendorKeySet(env)
    })
    if (!simulate) return { url: Option.none<string>() } as const
    const running = yield* Effect.acquireRelease(spawnSimulator, stopSimulator)
    const runtime = yield* Effect.runtime<never>()
    let stopping = false
    // Runs before the release above: the simulator's own exit at shutdown is expected.
    yield* Effect.addFinalizer(() => Effect.sync(() => void (stopping = true)))
    // A simulator that dies while the service runs leaves every vendor unreachable: say so once, loudly.
    void running.exited.then((code) => {
      if (!stopping) {
        Runtime.runFork(runtime)(Effect.logError(`the vendor simulator exited (code ${code}); inference answers 502 until the service restarts`))
      }
    })
    yield* Effect.logWarning(SIMULATED_VENDORS_WARNING).pipe(Effect.annotateLogs({ simulator: running.url }))
    return { url: Option.some(running.url) } as const
  }),
  dependencies: [AppConfig.Default]
}) {}
