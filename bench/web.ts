/**
 * `npm run bench:web`: the public pages' budget (DESIGN.md section 13; docs/performance.md). Two figures:
 *  - JavaScript per page, gzip: what a first visit to `/` downloads before and after its first figures (the
 *    build's own manifest, checked against what the browser actually fetched);
 *  - time to usable: navigation start to the index's figures on screen (the page's `cx:index-figures-shown`
 *    performance mark), in Debian's chromium against the service on this machine, cold and warm (assets cached).
 * The reference in the same run: the same browser loading the service's own Swagger UI page (`/v1/docs`, a static
 * page with its assets inline) to `load`, which is what the machine and the browser cost before any of our code.
 * The console (bench/webConsole.ts): a first visit's JavaScript, and each signed-in page's time to usable.
 * Settings: BENCH_WEB_LOADS (default 10).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { chromium } from "playwright-core"
import { cleanUp, freePort, log, onCleanup, positiveNumber, projectRoot } from "./common.ts"
import { CONSOLE_BUDGET_KB, measureConsole } from "./webConsole.ts"

const loads = positiveNumber("BENCH_WEB_LOADS", 10)
const BUDGET_KB = 120
const USABLE_MS = 1000

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const main = async () => {
  const port = await freePort()
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-web-"))
  onCleanup("data dir", async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
  log(`[web] starting the service on embedded defaults (port ${port}); the first start replays the index's history...`)
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: projectRoot,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, EMBEDDED_CHAIN_PORT: String(await freePort()), LOG_FORMAT: "json", EXCHANGE_SIMULATOR: "off", TRUST_PROXY: "true" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  onCleanup("service", async () => {
    child.kill("SIGTERM")
    await exited
  })
  let output = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service was not ready in 120 s:\n${output}`)), 120_000)
    const onData = (data: Buffer) => {
      output += data.toString("utf8")
      if (output.includes('"ready at ')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
  })
  const base = `http://127.0.0.1:${port}`
  const manifest = JSON.parse(Fs.readFileSync(Path.join(projectRoot, "web/dist/manifest.json"), "utf8")) as {
    assets: ReadonlyArray<{ path: string; gzipBytes: number }>
  }
  const gzipOf = new Map(manifest.assets.map((a) => [Path.basename(a.path), a.gzipBytes]))

  const browser = await chromium.launch({
    executablePath: process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
  onCleanup("browser", () => browser.close())

  let visitor = 0
  /** One visit: a fresh context (cold cache) or the same one again (warm); its own client address for the rate limit. */
  const visit = async (context: Awaited<ReturnType<typeof browser.newContext>>) => {
    const page = await context.newPage()
    const scripts: Array<string> = []
    page.on("response", (response) => {
      if (response.url().endsWith(".js")) scripts.push(Path.basename(new URL(response.url()).pathname))
    })
    await page.goto(`${base}/`)
    await page.waitForFunction("performance.getEntriesByName('cx:index-figures-shown').length > 0", undefined, { timeout: 15_000 })
    const usable = (await page.evaluate("performance.getEntriesByName('cx:index-figures-shown')[0].startTime")) as number
    await page.waitForLoadState("networkidle")
    const all = [...scripts]
    await page.close()
    return { usable, scripts: all }
  }
  const newVisitor = () => browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.18.0.${(visitor += 1) % 250}` } })

  log(`[web] ${loads} cold and ${loads} warm loads of / ...`)
  const cold: Array<number> = []
  const warm: Array<number> = []
  let fetched: ReadonlyArray<string> = []
  for (let i = 0; i < loads; i++) {
    const context = await newVisitor()
    const first = await visit(context)
    cold.push(first.usable)
    fetched = first.scripts
    // Warm: the same browser (assets cached) as a visitor arriving later, not a reload within the rate limit's window.
    await context.setExtraHTTPHeaders({ "x-forwarded-for": `198.19.0.${(visitor += 1) % 250}` })
    warm.push((await visit(context)).usable)
    await context.close()
    // The oracle allows a client 20 reads per 10 s; each visitor has its own address, and the service its breath.
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
  const reference: Array<number> = []
  for (let i = 0; i < loads; i++) {
    const context = await newVisitor()
    const page = await context.newPage()
    await page.goto(`${base}/v1/docs`, { waitUntil: "load" })
    reference.push((await page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")) as number)
    await context.close()
  }

  const js = [...new Set(fetched)].map((file) => ({ file, gzip: gzipOf.get(file) ?? Number.NaN }))
  const totalKb = js.reduce((sum, f) => sum + f.gzip, 0) / 1024
  // The chart library is imported after the figures are on screen; the build's metafile says which file holds it.
  const metafile = JSON.parse(Fs.readFileSync(Path.join(projectRoot, "web/dist/metafile.json"), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>
  }
  const chartFiles = new Set(
    Object.entries(metafile.outputs)
      .filter(([file, output]) =>
        file.endsWith(".js") &&
        Object.entries(output.inputs).some(([input, used]) => input.includes("node_modules/uplot/") && input.endsWith(".js") && used.bytesInOutput > 0)
      )
      .map(([file]) => Path.basename(file))
  )
  const mainKb = js.filter((f) => !chartFiles.has(f.file)).reduce((sum, f) => sum + f.gzip, 0) / 1024
  log("")
  log("| figure | value | budget | verdict |")
  log("|---|---:|---:|---|")
  log(`| JavaScript fetched by a first visit to /, gzip | ${totalKb.toFixed(1)} KB (${js.length} files) | ${BUDGET_KB} KB | ${totalKb <= BUDGET_KB ? "MET" : "MISS"} |`)
  log(`| of which the entry before the chart library | ${mainKb.toFixed(1)} KB | | |`)
  log(`| / usable (figures on screen), cold, p50 / p95 | ${percentile(cold, 50).toFixed(0)} / ${percentile(cold, 95).toFixed(0)} ms | ${USABLE_MS} ms | ${percentile(cold, 95) <= USABLE_MS ? "MET" : "MISS"} |`)
  log(`| / usable, warm (assets cached), p50 / p95 | ${percentile(warm, 50).toFixed(0)} / ${percentile(warm, 95).toFixed(0)} ms | ${USABLE_MS} ms | ${percentile(warm, 95) <= USABLE_MS ? "MET" : "MISS"} |`)
  log(`| reference: /v1/docs (Swagger UI, inline) to load, p50 | ${percentile(reference, 50).toFixed(0)} ms | | |`)
  log("")
  log(`files: ${js.map((f) => `${f.file} ${(f.gzip / 1024).toFixed(1)} KB`).join(", ")}`)

  const consoleFigures = await measureConsole(browser, base, gzipOf, loads)
  log("")
  log("| console figure | value | budget | verdict |")
  log("|---|---:|---:|---|")
  log(`| JavaScript fetched by a first visit to /console, gzip | ${consoleFigures.firstVisitKb.toFixed(1)} KB (${consoleFigures.files.length} files) | ${CONSOLE_BUDGET_KB} KB | ${consoleFigures.firstVisitKb <= CONSOLE_BUDGET_KB ? "MET" : "MISS"} |`)
  for (const entry of consoleFigures.pages) {
    const p95 = percentile(entry.usable, 95)
    log(`| ${entry.path} usable, p50 / p95 | ${percentile(entry.usable, 50).toFixed(0)} / ${p95.toFixed(0)} ms | ${USABLE_MS} ms | ${p95 <= USABLE_MS ? "MET" : "MISS"} |`)
  }
  log("")
  log(`console files: ${consoleFigures.files.map((f) => `${f.file} ${(f.gzip / 1024).toFixed(1)} KB`).join(", ")}`)
}

main()
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(cleanUp)
