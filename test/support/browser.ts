/**
 * Browser suites (DESIGN.md section 9): Debian's chromium driven by playwright-core (no browser download), headless,
 * against a real service process on a scratch database. A failing test keeps a screenshot and a Playwright trace
 * under test-results/<suite>/<test>/ (open the trace with `npx playwright show-trace`, or trace.playwright.dev).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { onTestFinished } from "vitest"
import { createMigratedDatabase, type TestDatabase } from "./database.ts"
import { cleanEnv, projectRoot, type ServiceProcess, startService } from "./process.ts"
import { freePort } from "./ports.ts"

export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

/** The flags this machine needs: no sandbox as root, and nothing that reaches for the network. */
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

export const launchBrowser = (): Promise<Browser> => {
  if (!Fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does, or set CHROMIUM_PATH`)
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true })
}

let visitors = 0
/** A documentation-range address per page or reader, so suites do not share one rate-limit budget. */
export const nextVisitorIp = () => {
  visitors += 1
  return `198.18.${(process.pid % 250) + 1}.${(visitors % 250) + 1}`
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 80)

/**
 * A fresh context and page for one test, traced; on failure the screenshot and trace are kept, and the context is
 * closed when the test ends. Call it inside the test (it registers its hooks on the running test).
 */
export const openPage = async (browser: Browser, suite: string, test: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; context: BrowserContext }> => {
  // Each page is its own visitor for the oracle's per-IP rate limit (the service trusts X-Forwarded-For: TRUST_PROXY).
  const context = await browser.newContext({ viewport, extraHTTPHeaders: { "x-forwarded-for": nextVisitorIp() } })
  await context.tracing.start({ screenshots: true, snapshots: true })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  // After the test: on failure keep what it saw, then close the context (never before the capture).
  onTestFinished(async (finished) => {
    if (finished.task.result?.state === "fail") {
      const dir = Path.join(projectRoot, "test-results", slug(suite), slug(test))
      Fs.mkdirSync(dir, { recursive: true })
      await page.screenshot({ path: Path.join(dir, "failure.png"), fullPage: true }).catch(() => undefined)
      await context.tracing.stop({ path: Path.join(dir, "trace.zip") }).catch(() => undefined)
      Fs.writeFileSync(Path.join(dir, "console.txt"), problems.join("\n"))
      console.error(`[browser] kept ${dir}/failure.png and trace.zip`)
    } else {
      await context.tracing.stop().catch(() => undefined)
    }
    await context.close()
  })
  return { page, context }
}

export interface PagesService {
  readonly baseUrl: string
  readonly service: ServiceProcess
  readonly database: TestDatabase
  readonly close: () => Promise<void>
}

/** The service as an operator starts it, on a scratch database and chain, ready (its history replayed). */
export const startPagesService = async (env: Record<string, string> = {}): Promise<PagesService> => {
  const database = await createMigratedDatabase()
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-pages-"))
  const port = await freePort()
  const service = startService(
    cleanEnv({
      DATABASE_URL: database.url,
      PORT: String(port),
      DATA_DIR: dataDir,
      EMBEDDED_CHAIN_PORT: String(await freePort()),
      LOG_LEVEL: "INFO",
      TRUST_PROXY: "true",
      ...env
    })
  )
  const close = async () => {
    await service.stop("SIGTERM")
    await database.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
  // The first start replays the index's history: about 25 s alone, minutes on a machine running other suites.
  await service.waitForLog(/"ready at http:/, 300_000).catch(async (error: unknown) => {
    await close()
    throw error
  })
  return { baseUrl: `http://127.0.0.1:${port}`, service, database, close }
}
