/**
 * `npm run bench:web`: the public pages' budget (DESIGN.md section 13: the pages are rendered on the server;
 * docs/performance.md). The figures, each against its budget:
 *  - the HTML's answer time over real HTTP from this process (node:http, one kept-alive connection, each request its
 *    own client address): `/` and a model page, the cached answer (the same request again) and a first render (a
 *    URL the service has not rendered under the current snapshot: the very first request after the start, then
 *    `/?bench=<n>` and `/?granularity=...`, and each catalog model's page the first time it is asked for);
 *  - `/`'s first contentful paint (`performance.getEntriesByName("first-contentful-paint")`) in Debian's chromium,
 *    cold (a fresh context per load) and warm (the same context again: assets cached), with the SCU
 *    (`[data-testid=scu-usd]`) checked in the server's HTML and in the page with JavaScript disabled;
 *  - the JavaScript a first visit to `/` fetches, gzip (the build's manifest), and that no script blocks rendering
 *    (every external script in the served HTML is `type="module"`, `defer` or `async`; the scripts' response end
 *    against the FCP);
 *  - the HTML's size, gzip (node:zlib level 6, zlib's default): `/`, the model page, and the largest catalog model page.
 * The reference in the same run: the same browser loading the service's own Swagger UI page (`/v1/docs`, a static
 * page with its assets inline) to `load`, which is what the machine and the browser cost before any of our code.
 * The console (bench/webConsole.ts): a first visit's JavaScript, and each signed-in page's time to usable.
 * Settings: BENCH_WEB_LOADS (browser loads per figure, default 10), BENCH_WEB_REQUESTS (HTTP requests per figure,
 * default 200).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { chromium } from "playwright-core"
import { cleanUp, cpuBusyPercent, freePort, log, onCleanup, positiveNumber, projectRoot } from "./common.ts"
import { CONSOLE_BUDGET_KB, measureConsole } from "./webConsole.ts"

const loads = positiveNumber("BENCH_WEB_LOADS", 10)
const requests = positiveNumber("BENCH_WEB_REQUESTS", 200)
/** The issue's budgets: HTML answer p50, first contentful paint p95 cold, JavaScript and HTML gzip. */
const INDEX_HTML_MS = 30
const MODEL_HTML_MS = 20
const FCP_MS = 300
const JS_BUDGET_KB = 150
const MODEL_HTML_KB = 60
const USABLE_MS = 1000
const GZIP_LEVEL = 6

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const verdict = (met: boolean) => (met ? "MET" : "MISS")
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1))
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const gzipBytes = (body: Buffer) => Zlib.gzipSync(body, { level: GZIP_LEVEL }).length

interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Buffer
  /** Request written to the last byte of the body read, in ms. */
  readonly ms: number
}

const main = async () => {
  const machine = async () => `load average ${Os.loadavg().map((l) => l.toFixed(1)).join(" / ")}, ${await cpuBusyPercent(1000)}% of ${Os.cpus().length} cores busy`
  log(`[web] the machine before the run: ${await machine()}`)
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
  const started = performance.now()
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
  log(`[web] the service is ready after ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const base = `http://127.0.0.1:${port}`
  // Read after the start: the service rebuilds the pages first when their sources changed.
  const manifest = JSON.parse(Fs.readFileSync(Path.join(projectRoot, "web/dist/manifest.json"), "utf8")) as {
    assets: ReadonlyArray<{ path: string; gzipBytes: number }>
  }
  const gzipOf = new Map(manifest.assets.map((a) => [Path.basename(a.path), a.gzipBytes]))

  // --- The HTML over HTTP -------------------------------------------------------------------------------------
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  onCleanup("http agent", async () => agent.destroy())
  let client = 0
  /** One GET over the kept-alive connection, as its own client (so the per-IP rate limit is not what is measured). */
  const get = (path: string, headers: Record<string, string> = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      client += 1
      const address = `198.51.${(client >> 8) % 250}.${client % 250}`
      const start = performance.now()
      const request = Http.request(`${base}${path}`, { agent, headers: { "x-forwarded-for": address, ...headers } }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks), ms: performance.now() - start }))
        response.on("error", reject)
      })
      request.on("error", reject)
      request.end()
    })
  const html = async (path: string) => {
    const answer = await get(path)
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}`)
    return answer
  }
  const times = async (path: string, count: number) => {
    const out: Array<number> = []
    for (let i = 0; i < count; i++) out.push((await html(path)).ms)
    return out
  }

  log(`[web] HTML over HTTP: the first request to / after the start, then a model page...`)
  const firstIndex = await html("/")
  const scu = JSON.parse((await get("/v1/oracle/scu")).body.toString("utf8")) as {
    breakdown: { familyRepresentatives: ReadonlyArray<{ modelKey: string }> }
  }
  const modelKey = scu.breakdown.familyRepresentatives[0]?.modelKey
  if (modelKey === undefined) throw new Error("/v1/oracle/scu has no index member")
  const modelPath = `/models/${modelKey.split("/").map(encodeURIComponent).join("/")}`
  const firstModel = await html(modelPath)
  log(`[web]   first / ${ms(firstIndex.ms)} ms, first ${modelPath} ${ms(firstModel.ms)} ms`)

  log(`[web] ${requests} cached answers each of / and ${modelPath} (after 20 warm-up requests)...`)
  await times("/", 20)
  await times(modelPath, 20)
  const indexCached = await times("/", requests)
  const modelCached = await times(modelPath, requests)
  const etag = String((await html("/")).headers["etag"] ?? "")
  const notModified: Array<number> = []
  for (let i = 0; i < requests; i++) {
    const answer = await get("/", { "if-none-match": etag })
    if (answer.status === 304) notModified.push(answer.ms)
  }

  log(`[web] ${requests} first renders of / (/?bench=<n>: a URL not yet rendered) and /?granularity=daily|weekly...`)
  const granularity: Array<string> = []
  for (const g of ["daily", "weekly"]) granularity.push(`${g} ${ms((await html(`/?granularity=${g}`)).ms)} ms`)
  const indexFirst: Array<number> = []
  for (let i = 0; i < requests; i++) indexFirst.push((await html(`/?bench=${i}`)).ms)

  log(`[web] every catalog model's page, each rendered the first time (from /sitemap.xml)...`)
  const sitemap = (await get("/sitemap.xml")).body.toString("utf8")
  const modelPaths = [...sitemap.matchAll(/<loc>[^<]*?(\/models\/[^<]+)<\/loc>/g)].map((m) => m[1]!.replace(/&amp;/g, "&")).filter((p) => p !== modelPath)
  const modelFirst: Array<number> = []
  let largest = { path: modelPath, raw: firstModel.body.length, gzip: gzipBytes(firstModel.body) }
  const sweepStart = performance.now()
  for (const path of modelPaths) {
    const answer = await html(path)
    modelFirst.push(answer.ms)
    const size = gzipBytes(answer.body)
    if (size > largest.gzip) largest = { path, raw: answer.body.length, gzip: size }
  }
  log(`[web]   ${modelPaths.length} model pages in ${((performance.now() - sweepStart) / 1000).toFixed(1)} s`)

  const indexHtml = firstIndex.body.toString("utf8")
  const indexGzip = gzipBytes(firstIndex.body)
  const modelGzip = gzipBytes(firstModel.body)
  const scuInHtml = /data-testid="scu-usd"[^>]*>([^<]*)</.exec(indexHtml)?.[1]?.trim()
  const scriptTags = [...indexHtml.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!)
  const external = scriptTags.filter((attrs) => /\bsrc=/.test(attrs))
  const deferred = external.filter((attrs) => /type="module"/.test(attrs) || /\b(defer|async)\b/.test(attrs))
  const inlineExecutable = scriptTags.filter((attrs) => !/\bsrc=/.test(attrs) && !/type="application\/(ld\+)?json"/.test(attrs))

  // --- The browser ---------------------------------------------------------------------------------------------
  const browser = await chromium.launch({
    executablePath: process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
  onCleanup("browser", () => browser.close())

  let visitor = 0
  type Context = Awaited<ReturnType<typeof browser.newContext>>
  /** One visit to `/`: its first contentful paint, the scripts it fetched and when their responses ended. */
  const visit = async (context: Context) => {
    const page = await context.newPage()
    const scripts: Array<string> = []
    page.on("response", (response) => {
      if (response.url().endsWith(".js")) scripts.push(Path.basename(new URL(response.url()).pathname))
    })
    await page.goto(`${base}/`, { waitUntil: "load" })
    // A function, not a string: the pages' Content-Security-Policy forbids eval.
    await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0, undefined, { timeout: 15_000 })
    const timing = (await page.evaluate(`(() => {
      const fcp = performance.getEntriesByName("first-contentful-paint")[0].startTime
      const html = performance.getEntriesByType("navigation")[0].responseEnd
      const js = performance.getEntriesByType("resource").filter((e) => e.name.endsWith(".js")).map((e) => e.responseEnd)
      const scu = document.querySelector("[data-testid=scu-usd]")
      return { fcp, html, jsEnd: js.length === 0 ? null : Math.max(...js), scu: scu === null ? null : scu.textContent.trim() }
    })()`)) as { fcp: number; html: number; jsEnd: number | null; scu: string | null }
    await page.waitForLoadState("networkidle")
    const all = [...scripts]
    await page.close()
    return { ...timing, scripts: all }
  }
  const newVisitor = () => browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.18.0.${(visitor += 1) % 250}` } })

  const machineAtBrowser = await machine()
  log(`[web] the machine before the browser loads: ${machineAtBrowser}`)
  log(`[web] / with JavaScript disabled: is the SCU on the page, in the first screen?`)
  const noJs = await browser.newContext({ javaScriptEnabled: false, extraHTTPHeaders: { "x-forwarded-for": "198.18.8.1" } })
  const noJsPage = await noJs.newPage()
  await noJsPage.goto(`${base}/`, { waitUntil: "load" })
  const noJsScu = noJsPage.locator("[data-testid=scu-usd]").first()
  const noJsScuText = (await noJsScu.count()) === 0 ? undefined : (await noJsScu.textContent())?.trim()
  const noJsBox = (await noJsScu.count()) === 0 ? null : await noJsScu.boundingBox()
  const viewport = noJsPage.viewportSize()
  const aboveFold = noJsBox !== null && viewport !== null && noJsBox.y + noJsBox.height <= viewport.height && noJsBox.width > 0
  await noJs.close()

  log(`[web] ${loads} cold and ${loads} warm loads of / (first contentful paint)...`)
  const cold: Array<Awaited<ReturnType<typeof visit>>> = []
  const warm: Array<Awaited<ReturnType<typeof visit>>> = []
  for (let i = 0; i < loads; i++) {
    const context = await newVisitor()
    cold.push(await visit(context))
    // Warm: the same browser (assets cached) as a visitor arriving later.
    await context.setExtraHTTPHeaders({ "x-forwarded-for": `198.19.0.${(visitor += 1) % 250}` })
    warm.push(await visit(context))
    await context.close()
  }
  log(`[web] ${loads} loads of the reference, /v1/docs (Swagger UI) to load...`)
  const reference: Array<number> = []
  for (let i = 0; i < loads; i++) {
    const context = await newVisitor()
    const page = await context.newPage()
    await page.goto(`${base}/v1/docs`, { waitUntil: "load" })
    reference.push((await page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")) as number)
    await context.close()
  }

  const fetched = [...new Set(cold.flatMap((v) => v.scripts))]
  const js = fetched.map((file) => ({ file, gzip: gzipOf.get(file) ?? Number.NaN }))
  const jsKb = js.reduce((sum, f) => sum + f.gzip, 0) / 1024
  const coldFcp = cold.map((v) => v.fcp)
  const warmFcp = warm.map((v) => v.fcp)
  const jsAfterFcp = cold.filter((v) => v.jsEnd !== null && v.jsEnd > v.fcp).length
  const jsEnd = cold.flatMap((v) => (v.jsEnd === null ? [] : [v.jsEnd]))
  const scuInBrowser = cold.every((v) => v.scu !== null && v.scu !== "")
  const nonBlocking = external.length > 0 && deferred.length === external.length && inlineExecutable.length === 0

  log("")
  log("| figure | value | budget | verdict |")
  log("|---|---:|---:|---|")
  log(`| HTML of \`/\`, cached, p50 / p95 (${requests} requests) | ${ms(percentile(indexCached, 50))} / ${ms(percentile(indexCached, 95))} ms | ${INDEX_HTML_MS} ms p50 | ${verdict(percentile(indexCached, 50) <= INDEX_HTML_MS)} |`)
  log(`| HTML of \`/\`, first render, p50 / p95 (${requests} URLs) | ${ms(percentile(indexFirst, 50))} / ${ms(percentile(indexFirst, 95))} ms | ${INDEX_HTML_MS} ms p50 | ${verdict(percentile(indexFirst, 50) <= INDEX_HTML_MS)} |`)
  log(`| HTML of \`/\`, the first request after the start | ${ms(firstIndex.ms)} ms | | |`)
  log(`| HTML of \`/\`, If-None-Match -> 304, p50 / p95 | ${notModified.length === 0 ? "no 304" : `${ms(percentile(notModified, 50))} / ${ms(percentile(notModified, 95))} ms`} | | |`)
  log(`| HTML of a model page, cached, p50 / p95 (${requests} requests) | ${ms(percentile(modelCached, 50))} / ${ms(percentile(modelCached, 95))} ms | ${MODEL_HTML_MS} ms p50 | ${verdict(percentile(modelCached, 50) <= MODEL_HTML_MS)} |`)
  log(`| HTML of a model page, first render, p50 / p95 (${modelFirst.length} models) | ${ms(percentile(modelFirst, 50))} / ${ms(percentile(modelFirst, 95))} ms | ${MODEL_HTML_MS} ms p50 | ${verdict(percentile(modelFirst, 50) <= MODEL_HTML_MS)} |`)
  log(`| \`/\` first contentful paint, cold, p50 / p95 | ${percentile(coldFcp, 50).toFixed(0)} / ${percentile(coldFcp, 95).toFixed(0)} ms | ${FCP_MS} ms p95 | ${verdict(percentile(coldFcp, 95) <= FCP_MS && scuInHtml !== undefined)} |`)
  log(`| \`/\` first contentful paint, warm (assets cached), p50 / p95 | ${percentile(warmFcp, 50).toFixed(0)} / ${percentile(warmFcp, 95).toFixed(0)} ms | ${FCP_MS} ms p95 | ${verdict(percentile(warmFcp, 95) <= FCP_MS)} |`)
  log(`| the SCU in the server's HTML / with JavaScript off / in the first screen | ${scuInHtml === undefined ? "no" : `yes ("${scuInHtml}")`} / ${noJsScuText === undefined ? "no" : "yes"} / ${aboveFold ? "yes" : "no"} | present | ${verdict(scuInHtml !== undefined && noJsScuText !== undefined)} |`)
  log(`| JavaScript fetched by a first visit to \`/\`, gzip | ${jsKb.toFixed(1)} KB (${js.length} file${js.length === 1 ? "" : "s"}) | ${JS_BUDGET_KB} KB | ${verdict(jsKb <= JS_BUDGET_KB)} |`)
  log(`| its scripts not render-blocking (external: module/defer/async; inline executable) | ${deferred.length}/${external.length}; ${inlineExecutable.length} | all; 0 | ${verdict(nonBlocking)} |`)
  log(`| cold: the HTML's response end, p50 / p95 | ${percentile(cold.map((v) => v.html), 50).toFixed(0)} / ${percentile(cold.map((v) => v.html), 95).toFixed(0)} ms | | |`)
  log(`| cold: the script's response end, p50 (loads where it ended after the FCP) | ${jsEnd.length === 0 ? "none" : `${percentile(jsEnd, 50).toFixed(0)} ms`} (${jsAfterFcp}/${cold.length}) | | |`)
  log(`| model page HTML, gzip (level ${GZIP_LEVEL}) | ${kb(modelGzip)} (${kb(firstModel.body.length)} raw) | ${MODEL_HTML_KB} KB | ${verdict(modelGzip <= MODEL_HTML_KB * 1024)} |`)
  log(`| largest of the ${modelPaths.length + 1} catalog model pages, gzip | ${kb(largest.gzip)} (${kb(largest.raw)} raw) | ${MODEL_HTML_KB} KB | ${verdict(largest.gzip <= MODEL_HTML_KB * 1024)} |`)
  log(`| \`/\` HTML, gzip | ${kb(indexGzip)} (${kb(firstIndex.body.length)} raw) | | |`)
  log(`| reference: \`/v1/docs\` (Swagger UI, inline) to load, p50 | ${percentile(reference, 50).toFixed(0)} ms | | |`)
  log("")
  log(`machine before the browser loads: ${machineAtBrowser} (other work on it inflates the browser's figures and the reference alike)`)
  log(`model page: ${modelPath}; largest: ${largest.path}; first renders of / by granularity: ${granularity.join(", ")}`)
  log(`files: ${js.map((f) => `${f.file} ${(f.gzip / 1024).toFixed(1)} KB`).join(", ")}`)
  if (!scuInBrowser) log(`odd: some cold loads showed no SCU in the page`)

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
