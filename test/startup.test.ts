/**
 * `npm start` on embedded defaults, as an operator runs it: first start on an empty DATA_DIR, graceful
 * shutdown on SIGTERM with a request in flight, and a restart on the same DATA_DIR.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cleanEnv, type LogRecord, logRecords, type ServiceProcess, startProcess } from "./support/process.ts"
import { freePort } from "./support/ports.ts"

const started: Array<ServiceProcess> = []
const dataDirs: Array<string> = []

afterAll(async () => {
  await Promise.all(started.map((service) => service.stop("SIGKILL")))
  for (const dir of dataDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const emptyDataDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-data-"))
  dataDirs.push(dir)
  return dir
}

const track = (service: ServiceProcess) => {
  started.push(service)
  return service
}

/** Polls until `url` answers 200, returning the milliseconds it took. */
const until200 = async (url: string, timeoutMs: number, since: number): Promise<number> => {
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return Date.now() - since
    } catch {
      // not listening yet
    }
    if (Date.now() - since > timeoutMs) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The service's `ready` lines: there must be exactly one per start. */
const readyLines = (service: ServiceProcess): Array<LogRecord> =>
  logRecords(service.output()).filter((record) => String(record.message).startsWith("ready at "))

describe("npm start on embedded defaults", () => {
  it("serves /openapi.json within 30 seconds on an empty DATA_DIR, stops cleanly, and restarts on it", async () => {
    const dataDir = emptyDataDir()
    const port = await freePort()
    const chainPort = await freePort()
    const env = cleanEnv({ PORT: String(port), DATA_DIR: dataDir, EMBEDDED_CHAIN_PORT: String(chainPort), LOG_FORMAT: "json" })

    const since = Date.now()
    // At debug level, to see the replay's per-revision detail beside its few INFO lines.
    const first = track(startProcess("npm", ["start", "--silent"], { ...env, LOG_LEVEL: "debug" }))
    const firstStartMs = await until200(`http://127.0.0.1:${port}/openapi.json`, 30_000, since)
    console.log(`[startup] first start on an empty DATA_DIR served /openapi.json after ${firstStartMs} ms`)
    expect(firstStartMs).toBeLessThan(30_000)
    expect(first.output()).toMatch(/applied \d+ migration/)
    const serviceStatus = (await (await fetch(`http://127.0.0.1:${port}/v1/status`)).json()) as { database: { backend: string } }
    expect(serviceStatus.database.backend).toBe("pglite")
    expect(Fs.existsSync(Path.join(dataDir, "pglite"))).toBe(true)

    // The history is replayed on the embedded chain in the background, with progress in the log.
    const replayed = await first.waitForLog(/history replayed: \d+ revisions published/, 90_000)
    const published = Number(/history replayed: (\d+)/.exec(replayed)![1])
    console.log(`[startup] history replay published ${published} revisions after ${Date.now() - since} ms`)
    expect(published).toBeGreaterThanOrEqual(5)
    const replayLines = logRecords(first.output()).filter((record) => record.annotations.job === "history-replay")
    const replayInfo = replayLines.filter((record) => record.logLevel === "INFO").map((record) => String(record.message))
    expect(replayInfo.length, replayInfo.join("\n")).toBeLessThanOrEqual(15)
    expect(replayInfo).toContainEqual(expect.stringMatching(/^replaying index history: 50% \(\d+\/\d+ instants, \d+ revisions\)$/))
    const replayDebug = replayLines.filter((record) => record.logLevel === "DEBUG").map((record) => String(record.message))
    expect(replayDebug).toContainEqual(expect.stringMatching(/^replay 1\/\d+: revision 1 at 2025-06-17T00:00:00.000Z: Genesis basket/))
    expect(replayDebug).toContain(`revision ${published} confirmed`)

    // Ready once the replay is done, and said once, with where to go next.
    await first.waitForLog(/"ready at /, 30_000)
    const [ready, ...moreReady] = readyLines(first)
    expect(moreReady).toEqual([])
    const url = `http://127.0.0.1:${port}`
    expect(ready!.message).toBe(`ready at ${url}`)
    expect(ready!.logLevel).toBe("INFO")
    expect(ready!.annotations).toEqual({ url, docsUrl: `${url}/v1/docs`, revisionsConfirmed: published, seconds: expect.any(Number) })
    const seconds = ready!.annotations.seconds as number
    expect(Math.round(seconds * 10) / 10).toBe(seconds)
    expect(seconds).toBeGreaterThan(0)
    const lines = first.output().split("\n")
    expect(lines.findIndex((line) => line.includes('"ready at '))).toBeGreaterThan(
      lines.findIndex((line) => line.includes("history replayed:"))
    )

    // `/` is the public index page, built from source at start (the browser suites check what it shows).
    const root = await fetch(`${url}/`, { redirect: "manual" })
    expect(root.status).toBe(200)
    expect(root.headers.get("content-type")).toMatch(/^text\/html/)
    expect(root.headers.get("cache-control")).toBe("no-cache")
    const script = /<script type="module" src="\.\/(assets\/[^"]+\.js)"/.exec(await root.text())
    expect(script).not.toBeNull()
    const asset = await fetch(`${url}/${script![1]}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")

    // The command line does not open the embedded database while the service has it: it asks the service.
    const cli = (command: string) =>
      track(startProcess(process.execPath, ["--import", "tsx", "src/cli.ts", "oracle", command], env))
    const beside = cli("status")
    expect(await beside.exited).toBe(0)
    expect(beside.output()).toMatch(/the command runs there/)
    expect(beside.output()).toMatch(new RegExp(`revisions on chain: ${published}; confirmed in the database: ${published}`))

    // npm relays SIGTERM to the service (the start script execs it) and reports how it ended.
    expect(await first.stop("SIGTERM")).toBe(0)
    expect(first.output()).toMatch(/embedded database closed/)

    const status = cli("status")
    expect(await status.exited).toBe(0)
    expect(status.output()).toMatch(new RegExp(`revisions on chain: ${published}; confirmed in the database: ${published}`))
    const verify = cli("verify")
    expect(await verify.exited).toBe(0)
    expect(verify.output()).toMatch(new RegExp(`${published} revisions checked: ${published} verified, 0 mismatched`))

    const restartSince = Date.now()
    const second = track(startProcess(process.execPath, ["--import", "tsx", "src/main.ts"], env))
    const restartMs = await until200(`http://127.0.0.1:${port}/openapi.json`, 30_000, restartSince)
    console.log(`[startup] restart on the same DATA_DIR served /openapi.json after ${restartMs} ms`)
    expect(second.output()).toMatch(/database schema is current/)
    expect(second.output()).toMatch(/"fresh":false/)
    expect(second.output()).not.toMatch(/replaying index history/)
    await second.waitForLog(/"ready at /, 30_000)
    expect(readyLines(second).map((record) => record.annotations.revisionsConfirmed)).toEqual([published])
    expect(await second.stop("SIGINT")).toBe(0)
  }, 180_000)
})

describe("graceful shutdown", () => {
  it("lets an in-flight request finish, refuses new connections, and closes the database", async () => {
    const port = await freePort()
    const service = track(
      startProcess(
        process.execPath,
        ["--import", "tsx", "test/support/probeServerMain.ts"],
        cleanEnv({ PORT: String(port), DATA_DIR: emptyDataDir(), EMBEDDED_CHAIN_PORT: String(await freePort()), PRICE_SCAN_INTERVAL_HOURS: "0" })
      )
    )
    // Not "listening on": the socket is bound before the API's handler is attached, and a request sent in between
    // is never answered. `ready` comes after both.
    await service.waitForLog(/"ready at /, 30_000)

    const inFlight = fetch(`http://127.0.0.1:${port}/test/slow?ms=1500`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    service.child.kill("SIGTERM")
    await new Promise((resolve) => setTimeout(resolve, 300))
    await expect(fetch(`http://127.0.0.1:${port}/v1/status`)).rejects.toThrow()

    const stopping = Date.now()
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ sleptMs: 1500 })
    expect(await service.exited).toBe(0)
    console.log(`[startup] exited ${Date.now() - stopping} ms after the in-flight request was answered`)
    expect(service.output()).toMatch(/embedded database closed/)
  }, 60_000)
})
