/**
 * The public index page (`/`) in a real browser (Debian's chromium) against a real service process: what it shows
 * must be what the API says, its chart and tables render, its revisions link to manifests that hash to what they
 * claim, a referral link lands on it with its cookie, and it holds at phone width with the basics of access.
 */
import canonicalize from "canonicalize"
import { keccak256, toBytes } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CatalogResponse } from "../domain/oracle/schemas.ts"
import { formatScaled, plainNumber } from "../web/shared/format.ts"
import { makeClient } from "./support/accounts.ts"
import { launchBrowser, nextVisitorIp, openPage, type PagesService, startPagesService } from "./support/browser.ts"
import { siweSignIn } from "./support/points.ts"

const SUITE = "browser-index"
let service: PagesService
let browser: Browser

const api = async <A>(path: string): Promise<A> => {
  const response = await fetch(`${service.baseUrl}${path}`, { headers: { "x-forwarded-for": nextVisitorIp() } })
  expect(response.status, path).toBe(200)
  return (await response.json()) as A
}

interface HistoryPoint {
  readonly date: string
  readonly computeIndex: number | null
  readonly revisionVersion: number
  readonly metadataHash: string
}

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startPagesService(), launchBrowser()])
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
})

describe("the index page", () => {
  it("shows the API's own figures: SCU exactly, the compute index, the latest revision, freshness and the registry", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await page.goto(`${service.baseUrl}/`)
    const history = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=per-revision")
    const last = history.data.at(-1)!
    const revision = await api<{ scuUsd18: string; revisionVersion: number }>(`/v1/oracle/revisions/${last.revisionVersion}`)
    const health = await api<{ stale: boolean }>("/v1/oracle/health")
    const contract = await api<{ address: string; chainId: number }>("/v1/oracle/contract-metadata")

    await expect.poll(() => page.getByTestId("scu-usd").textContent(), { timeout: 10_000 }).toBe(formatScaled(revision.scuUsd18, 18, 18))
    expect(await page.getByTestId("compute-index").textContent()).toBe(plainNumber(last.computeIndex!))
    expect(await page.getByTestId("latest-revision").textContent()).toBe(`#${revision.revisionVersion}`)
    expect(await page.getByTestId(health.stale ? "stale" : "fresh").count()).toBe(1)
    for (const span of ["24h", "7d", "30d"]) expect(await page.getByTestId(`change-${span}`).textContent()).toMatch(/^([+−±]\d+\.\d{2} %|n\/a)/)
    await expect.poll(() => page.getByTestId("registry-address").textContent(), { timeout: 10_000 }).toBe(contract.address)
    expect(await page.getByTestId("chain-id").textContent()).toBe(String(contract.chainId))
    expect(await page.title()).toMatch(/Standard Compute Unit/)
  }, 60_000)

  it("draws the index's history with its table beside it, per revision and weekly", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await page.goto(`${service.baseUrl}/`)
    const perRevision = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=per-revision")
    const weekly = await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=weekly")
    const chart = page.locator("figure.chart").first()
    await expect.poll(() => chart.locator("canvas").count(), { timeout: 10_000 }).toBeGreaterThan(0)
    const rows = chart.locator("table.data-table tbody tr")
    await expect.poll(() => rows.count()).toBe(perRevision.data.filter((p) => p.computeIndex !== null).length)
    expect(await chart.locator("figcaption a[download]").getAttribute("href")).toMatch(/^data:text\/csv/)
    await page.getByLabel("Weekly").check()
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(weekly.data.filter((p) => p.computeIndex !== null).length)
    expect(weekly.data.length).not.toBe(perRevision.data.length)
  }, 60_000)

  it("lists the basket the API reports, each with its price mark and the vendor page behind it", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await page.goto(`${service.baseUrl}/`)
    const scu = await api<{ breakdown: { familyRepresentatives: ReadonlyArray<{ family: string; modelKey: string; inputPriceUsdPerMillion: number }> } }>("/v1/oracle/scu")
    const catalog = await api<CatalogResponse>("/v1/oracle/catalog")
    const table = page.getByTestId("basket-table")
    const members = scu.breakdown.familyRepresentatives
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 10_000 }).toBe(members.length)
    for (const member of members.slice(0, 5)) {
      const row = table.locator("tbody tr", { has: page.getByRole("link", { name: member.modelKey, exact: true }) })
      const cells = await row.locator("td").allTextContents()
      expect(cells[0]).toBe(member.family)
      expect(cells[2]).toBe(plainNumber(member.inputPriceUsdPerMillion))
      const entry = catalog.models.find((m) => m.modelKey === member.modelKey)!
      expect(cells[5]).toContain(entry.currentPrice.provenance.input)
      expect(cells[5]).toContain(entry.currentPrice.provenance.output)
      // The vendor page behind each of the member's two prices, once each; none behind an inferred one.
      const pages = [...new Set([entry.priceSources.input.sourceUrl, entry.priceSources.output.sourceUrl].filter((u) => u !== null))]
      expect(await row.locator("td").nth(5).locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual(pages)
    }
  }, 60_000)

  it("links each revision to its manifest, whose keccak256 over its JCS text is the hash shown", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await page.goto(`${service.baseUrl}/`)
    const links = page.getByTestId("revisions-table").locator("tbody tr td:nth-child(4) a")
    await expect.poll(() => links.count(), { timeout: 10_000 }).toBeGreaterThan(0)
    for (const index of [0, 1]) {
      const link = links.nth(index)
      const claimed = (await link.getAttribute("title"))!
      const href = (await link.getAttribute("href"))!
      expect(href).toBe(`${service.baseUrl}/v1/oracle/manifest/${claimed}`)
      const manifest = (await (await fetch(href, { headers: { "x-forwarded-for": nextVisitorIp() } })).json()) as unknown
      expect(keccak256(toBytes(canonicalize(manifest)!))).toBe(claimed)
    }
  }, 60_000)

  it("is where a referral link lands, with its cookie set", async (context) => {
    const referrer = await siweSignIn(makeClient(service.baseUrl), privateKeyToAccount(generatePrivateKey()), "198.51.100.77")
    expect(referrer.status).toBe(200)
    const code = referrer.body.referral_code as string
    const { page, context: browserContext } = await openPage(browser, SUITE, context.task.name)
    await page.goto(`${service.baseUrl}/r?c=${code}`)
    expect(new URL(page.url()).pathname).toBe("/")
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toBe("The Standard Compute Unit")
    const cookies = await browserContext.cookies(service.baseUrl)
    expect(cookies.find((c) => c.name === "cf_ref")?.value).toBe(code)
  }, 60_000)

  it("fits a phone, with landmarks, a skip link and labelled controls", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name, { width: 390, height: 844 })
    await page.goto(`${service.baseUrl}/`)
    await page.getByTestId("scu-usd").waitFor({ timeout: 10_000 })
    await page.getByTestId("basket-table").waitFor({ timeout: 10_000 })
    const widths = await page.evaluate("({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })") as { scroll: number; client: number }
    expect(widths.scroll).toBeLessThanOrEqual(widths.client + 1)
    for (const role of ["banner", "navigation", "main", "contentinfo"] as const) expect(await page.getByRole(role).count(), role).toBeGreaterThan(0)
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content")
    await page.keyboard.press("Enter")
    expect(await page.evaluate("document.activeElement?.id")).toBe("main")
    for (const label of ["Per revision", "Daily", "Weekly"]) expect(await page.getByLabel(label).count()).toBe(1)
  }, 60_000)

  it("says so when no revision has been confirmed yet", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    // A service before its first confirmed revision answers these empty; the page must say what that means.
    await page.route("**/v1/oracle/history?**", (route) =>
      route.fulfill({ json: { from: null, to: null, granularity: "per-revision", count: 0, truncated: false, data: [] } })
    )
    await page.route("**/v1/oracle/scu", (route) => route.fulfill({ status: 204, body: "" }))
    await page.goto(`${service.baseUrl}/`)
    await expect.poll(() => page.locator(".headline .empty").textContent(), { timeout: 10_000 }).toMatch(/No revision of the index has been confirmed/)
    await expect.poll(() => page.locator("#basket ~ .empty, section:has(#basket) .empty").first().textContent(), { timeout: 10_000 }).toMatch(/basket is empty/)
  }, 60_000)
})
