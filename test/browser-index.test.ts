/**
 * The public index page (`/`), rendered on the server (DESIGN.md section 13), in a real browser (Debian's chromium)
 * against a real service process. With JavaScript OFF every figure is there and is what the API says: the SCU, the
 * compute index, the latest revision, freshness, the registry, the chart's table per revision and weekly (the
 * granularity links), the basket, the revisions with manifests that hash to what they claim; a referral link lands on
 * it with its cookie. With JavaScript ON the page hydrates without changing a figure and without asking the API for
 * what it already holds; it fits a phone with the basics of access; and a service with no revision says so.
 */
import canonicalize from "canonicalize"
import { keccak256, toBytes } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import type { CatalogResponse } from "../domain/oracle/schemas.ts"
import { formatScaled, plainNumber, utc } from "../web/shared/format.ts"
import { makeClient } from "./support/accounts.ts"
import { launchBrowser, nextVisitorIp, openPage, type PagesService, startPagesService } from "./support/browser.ts"
import { siweSignIn } from "./support/points.ts"

const SUITE = "browser-index"
let service: PagesService
let browser: Browser
/** A service before its first confirmed revision: scans off, so no catalog and no history to replay. */
let emptyService: Promise<PagesService>

const api = async <A>(path: string, base = service.baseUrl): Promise<A> => {
  const response = await fetch(`${base}${path}`, { headers: { "x-forwarded-for": nextVisitorIp() } })
  expect(response.status, path).toBe(200)
  return (await response.json()) as A
}

/** The little of the DOM these tests touch inside the page (test/*.ts compile without the DOM's types). */
interface Dom {
  readonly href: string
  readonly textContent: string | null
  querySelector(selector: string): Dom | null
  querySelectorAll(selector: string): ArrayLike<Dom>
  cloneNode(deep: boolean): Dom
  remove(): void
}

interface HistoryPoint {
  readonly date: string
  readonly computeIndex: number | null
  readonly revisionVersion: number
  readonly metadataHash: string
}

/** A page with JavaScript OFF: what the server sent, and nothing else. Closed when the test ends. */
const openStatic = async (viewport = { width: 1280, height: 900 }): Promise<{ page: Page; context: BrowserContext }> => {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport, extraHTTPHeaders: { "x-forwarded-for": nextVisitorIp() } })
  onTestFinished(() => context.close())
  return { page: await context.newPage(), context }
}

const chartRows = (page: Page) =>
  page.getByTestId("index-chart").locator("table.data-table tbody tr").evaluateAll((rows) =>
    rows.map((row) => Array.from((row as unknown as Dom).querySelectorAll("td")).map((td) => td.textContent ?? ""))
  )

const expectedRows = (points: ReadonlyArray<HistoryPoint>) => points.filter((p) => p.computeIndex !== null).map((p) => [utc(p.date), plainNumber(p.computeIndex!)])

beforeAll(async () => {
  emptyService = startPagesService({ PRICE_SCAN_INTERVAL_HOURS: "0" })
  emptyService.catch(() => undefined)
  ;[service, browser] = await Promise.all([startPagesService(), launchBrowser()])
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
  await (await emptyService.catch(() => undefined))?.close()
}, 60_000)

describe("the index page", () => {
  it("shows the API's own figures with JavaScript off: SCU exactly, the compute index, the latest revision, freshness and the registry", async () => {
    const { page } = await openStatic()
    const response = await page.goto(`${service.baseUrl}/`)
    expect(response?.status()).toBe(200)
    const history = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=per-revision")
    const last = history.data.at(-1)!
    const revision = await api<{ scuUsd18: string; revisionVersion: number }>(`/v1/oracle/revisions/${last.revisionVersion}`)
    const health = await api<{ stale: boolean }>("/v1/oracle/health")
    const contract = await api<{ address: string; chainId: number }>("/v1/oracle/contract-metadata")

    expect(await page.getByTestId("scu-usd").textContent()).toBe(formatScaled(revision.scuUsd18, 18, 18))
    expect(await page.getByTestId("compute-index").textContent()).toBe(plainNumber(last.computeIndex!))
    const latest = page.getByTestId("latest-revision")
    expect(await latest.textContent()).toBe(`#${revision.revisionVersion}`)
    expect(await latest.evaluate((a) => (a as unknown as Dom).href)).toBe(`${service.baseUrl}/revisions/${revision.revisionVersion}`)
    expect(await page.getByTestId(health.stale ? "stale" : "fresh").count()).toBe(1)
    expect(await page.getByTestId(health.stale ? "fresh" : "stale").count()).toBe(0)
    for (const span of ["24h", "7d", "30d"]) expect(await page.getByTestId(`change-${span}`).textContent()).toMatch(/^([+−±]\d+\.\d{2} %|n\/a \(older than the index\))$/)
    expect(await page.getByTestId("registry-address").textContent()).toBe(contract.address)
    expect(await page.getByTestId("chain-id").textContent()).toBe(String(contract.chainId))
    expect(await page.title()).toMatch(/Standard Compute Unit/)
  }, 60_000)

  it("draws the index's history as SVG with its table beside it, per revision and weekly through the granularity links", async () => {
    const { page } = await openStatic()
    await page.goto(`${service.baseUrl}/`)
    const perRevision = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=per-revision")
    const weekly = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=weekly")
    const chart = page.getByTestId("index-chart")
    expect(await chart.locator("svg.svg-chart path[data-series]").count()).toBe(1)
    expect(await chart.locator("svg.svg-chart path[data-series]").getAttribute("d")).toMatch(/^M[\d.]+ [\d.]+H/)
    expect(await chartRows(page)).toEqual(expectedRows(perRevision.data))
    expect(await chart.locator("figcaption a[download]").getAttribute("href")).toMatch(/^data:text\/csv/)
    expect(await page.locator("[data-granularity=per-revision]").getAttribute("aria-current")).toBe("true")
    expect(await page.locator("[aria-current=true][data-granularity]").count()).toBe(1)
    expect(await page.locator(".chart-zoom").count()).toBe(0)

    await page.locator("[data-granularity=weekly]").click()
    await page.waitForURL((url) => url.searchParams.get("granularity") === "weekly")
    expect(new URL(page.url()).hash).toBe("#history")
    expect(await page.locator("[data-granularity=weekly]").getAttribute("aria-current")).toBe("true")
    expect(await page.locator("[aria-current=true][data-granularity]").count()).toBe(1)
    expect(await chartRows(page)).toEqual(expectedRows(weekly.data))
    expect(weekly.data.length).not.toBe(perRevision.data.length)
    // The headline does not depend on the chart's points.
    expect(await page.getByTestId("compute-index").textContent()).toBe(plainNumber(perRevision.data.at(-1)!.computeIndex!))
  }, 60_000)

  it("lists the basket the API reports, each with its price mark and the vendor page behind it", async () => {
    const { page } = await openStatic()
    await page.goto(`${service.baseUrl}/`)
    const scu = await api<{ breakdown: { familyRepresentatives: ReadonlyArray<{ family: string; modelKey: string; inputPriceUsdPerMillion: number; outputPriceUsdPerMillion: number; blendedCostUsd: number }> } }>("/v1/oracle/scu")
    const catalog = await api<CatalogResponse>("/v1/oracle/catalog")
    const table = page.getByTestId("basket-table")
    const members = scu.breakdown.familyRepresentatives
    expect(members.length).toBeGreaterThan(0)
    expect(await table.locator("tbody tr").count()).toBe(members.length)
    for (const member of members) {
      const row = table.locator("tbody tr", { has: page.getByRole("link", { name: member.modelKey, exact: true }) })
      expect(await row.count(), member.modelKey).toBe(1)
      const cells = await row.locator("td").allTextContents()
      expect(cells[0]).toBe(member.family)
      expect(cells[2]).toBe(plainNumber(member.inputPriceUsdPerMillion))
      expect(cells[3]).toBe(plainNumber(member.outputPriceUsdPerMillion))
      expect(cells[4]).toBe(plainNumber(member.blendedCostUsd))
      expect(await row.locator("td").nth(1).locator("a").evaluate((a) => (a as unknown as Dom).href)).toBe(
        `${service.baseUrl}/models/${member.modelKey.split("/").map(encodeURIComponent).join("/")}`
      )
      const entry = catalog.models.find((m) => m.modelKey === member.modelKey)!
      expect(cells[5]).toContain(entry.currentPrice.provenance.input)
      expect(cells[5]).toContain(entry.currentPrice.provenance.output)
      // The vendor page behind each of the member's two prices, once each; none behind an inferred one.
      const pages = [...new Set([entry.priceSources.input.sourceUrl, entry.priceSources.output.sourceUrl].filter((u) => u !== null))]
      expect(await row.locator("td").nth(5).locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual(pages)
    }
  }, 60_000)

  it("links each revision to its manifest, whose keccak256 over its JCS text is the hash shown", async () => {
    const { page } = await openStatic()
    await page.goto(`${service.baseUrl}/`)
    const history = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=per-revision")
    // The newest ten; /revisions lists the rest.
    const newestFirst = [...history.data].reverse().slice(0, 10)
    expect(history.data.length).toBeGreaterThan(10)
    const rows = page.getByTestId("revisions-table").locator("tbody tr")
    expect(await rows.count()).toBe(newestFirst.length)
    expect(await rows.locator("td:nth-child(1)").allTextContents()).toEqual(newestFirst.map((p) => `#${p.revisionVersion}`))
    expect(await rows.locator("td:nth-child(3)").allTextContents()).toEqual(newestFirst.map((p) => (p.computeIndex === null ? "n/a" : plainNumber(p.computeIndex))))
    const links = rows.locator("td:nth-child(4) a")
    expect(await links.evaluateAll((as) => as.map((a) => a.getAttribute("title")))).toEqual(newestFirst.map((p) => p.metadataHash))
    for (const index of [0, 1]) {
      const link = links.nth(index)
      const claimed = (await link.getAttribute("title"))!
      const href = await link.evaluate((a) => (a as unknown as Dom).href)
      expect(href).toBe(`${service.baseUrl}/v1/oracle/manifest/${claimed}`)
      const manifest = (await (await fetch(href, { headers: { "x-forwarded-for": nextVisitorIp() } })).json()) as unknown
      expect(keccak256(toBytes(canonicalize(manifest)!))).toBe(claimed)
    }
  }, 60_000)

  it("shows the newest five reconstitutions of the API's log, newest first, each linked to its revision", async () => {
    const { page } = await openStatic()
    await page.goto(`${service.baseUrl}/`)
    const log = await api<{ entries: ReadonlyArray<{ revisionVersion: number; summary: string }> }>("/v1/oracle/reconstitutions")
    expect(log.entries.length).toBeGreaterThan(5)
    const newest = [...log.entries].sort((a, b) => b.revisionVersion - a.revisionVersion).slice(0, 5)
    const items = page.locator("ol.log > li")
    expect(await items.locator("strong a").allTextContents()).toEqual(newest.map((e) => `Revision #${e.revisionVersion}`))
    const texts = await items.locator("> p").allTextContents()
    texts.forEach((text, i) => expect(text.endsWith(`: ${newest[i]!.summary}`), text).toBe(true))
    expect(await page.locator("#log ~ p a[href$='/revisions'], section:has(#log) a[href='./revisions']").count()).toBeGreaterThan(0)
  }, 60_000)

  it("hydrates without changing a figure and without asking the API for what the page holds", async (context) => {
    const { page: still } = await openStatic()
    await still.goto(`${service.baseUrl}/`)
    const serverText = await still.locator("main").textContent()

    const { page } = await openPage(browser, SUITE, context.task.name)
    const apiRequests: Array<string> = []
    const problems: Array<string> = []
    page.on("request", (request) => {
      if (new URL(request.url()).pathname.startsWith("/v1/")) apiRequests.push(request.url())
    })
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") problems.push(`${message.type()}: ${message.text()}`)
    })
    page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
    await page.goto(`${service.baseUrl}/`)
    // The zoom buttons exist only once the chart is hydrated.
    await page.locator(".chart-zoom").first().waitFor({ timeout: 15_000 })
    await page.waitForLoadState("networkidle")
    const hydratedText = await page.locator("main").evaluate((main) => {
      const copy = (main as unknown as Dom).cloneNode(true)
      Array.from(copy.querySelectorAll(".chart-zoom")).forEach((zoom) => zoom.remove())
      return copy.textContent
    })
    expect(hydratedText).toBe(serverText)
    expect(apiRequests).toEqual([])
    expect(problems).toEqual([])
  }, 60_000)

  it("is where a referral link lands, with its cookie set", async () => {
    const referrer = await siweSignIn(makeClient(service.baseUrl), privateKeyToAccount(generatePrivateKey()), "198.51.100.77")
    expect(referrer.status).toBe(200)
    const code = referrer.body.referral_code as string
    const { page, context: browserContext } = await openStatic()
    await page.goto(`${service.baseUrl}/r?c=${code}`)
    expect(new URL(page.url()).pathname).toBe("/")
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("The Standard Compute Unit")
    const cookies = await browserContext.cookies(service.baseUrl)
    expect(cookies.find((c) => c.name === "cf_ref")?.value).toBe(code)
  }, 60_000)

  it("fits a phone, with landmarks, a skip link and labelled controls", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name, { width: 390, height: 844 })
    await page.goto(`${service.baseUrl}/`)
    await page.locator(".chart-zoom").first().waitFor({ timeout: 15_000 })
    const widths = await page.evaluate("({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })") as { scroll: number; client: number }
    expect(widths.scroll).toBeLessThanOrEqual(widths.client)
    for (const role of ["banner", "navigation", "main", "contentinfo"] as const) expect(await page.getByRole(role).count(), role).toBeGreaterThan(0)
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content")
    await page.keyboard.press("Enter")
    expect(await page.evaluate("document.activeElement?.id")).toBe("main")
    const points = page.getByRole("navigation", { name: "Points of the chart" })
    for (const label of ["Per revision", "Daily", "Weekly"]) expect(await points.getByRole("link", { name: label, exact: true }).count(), label).toBe(1)
    for (const label of ["All", "1 year", "90 days", "30 days"]) expect(await page.getByRole("group", { name: "Zoom" }).getByRole("button", { name: label, exact: true }).count(), label).toBe(1)
  }, 60_000)

  it("says so when no revision has been confirmed yet", async () => {
    const empty = await emptyService
    const health = await api<{ latestRevisionVersion: number | null }>("/v1/oracle/health", empty.baseUrl)
    expect(health.latestRevisionVersion).toBeNull()
    const { page } = await openStatic()
    const response = await page.goto(`${empty.baseUrl}/`)
    expect(response?.status()).toBe(200)
    expect(await page.locator(".headline .empty").textContent()).toMatch(/^No revision of the index has been confirmed on-chain yet/)
    expect(await page.getByTestId("scu-usd").count()).toBe(0)
    expect(await page.locator("section:has(#basket) .empty").textContent()).toMatch(/^The basket is empty until the first revision is confirmed/)
    expect(await page.getByTestId("basket-table").count()).toBe(0)
    expect(await page.getByTestId("index-chart").locator(".empty").textContent()).toBe("No points yet.")
  }, 180_000)
})
