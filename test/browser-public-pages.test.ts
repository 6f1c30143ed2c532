/**
 * The server-rendered public pages besides the index (DESIGN.md section 13), in Debian's chromium against a real
 * service process: `/revisions` and a revision page opened by its URL, `/methodology`, each complete with JavaScript
 * OFF and equal to the API's JSON; every page's title, description, canonical URL and Open Graph tags; the sitemap
 * and robots.txt; the ETag and its 304; links between pages that are real links; and, hydrated, an accessibility
 * check (axe-core), phone width and a quiet console.
 */
import canonicalize from "canonicalize"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import { keccak256, toBytes } from "viem"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import type { CatalogResponse, MethodologyChangelog, ReconstitutionLog, RevisionResponse } from "../domain/oracle/schemas.ts"
import { formatScaled, plainNumber, utc } from "../web/shared/format.ts"
import { launchBrowser, nextVisitorIp, openPage, type PagesService, startPagesService } from "./support/browser.ts"

const SUITE = "browser-public-pages"
const require = createRequire(import.meta.url)
const AXE = require.resolve("axe-core/axe.min.js")

let service: PagesService
let browser: Browser
let history: ReadonlyArray<HistoryPoint>
let reconstitutions: ReconstitutionLog["entries"]
let catalog: CatalogResponse
let methodology: MethodologyChangelog

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

const headers = () => ({ "x-forwarded-for": nextVisitorIp() })

const api = async <A>(path: string): Promise<A> => {
  const response = await fetch(`${service.baseUrl}${path}`, { headers: headers() })
  expect(response.status, path).toBe(200)
  return (await response.json()) as A
}

const modelPath = (key: string) => `/models/${key.split("/").map(encodeURIComponent).join("/")}`

/** The revision shown by URL: the last one, and one whose reconstitution changed something (not the genesis). */
const lastVersion = () => history.at(-1)!.revisionVersion
const reconstitutedVersion = () => {
  const entry = [...reconstitutions].reverse().find((e) => e.previousVersion !== null && e.changes.length > 0 && e.revisionVersion !== lastVersion())
  expect(entry, "a reconstitution besides the genesis and the last revision").toBeDefined()
  return entry!.revisionVersion
}

/** A page with JavaScript OFF: what the server sent, and nothing else. Closed when the test ends. */
const openStatic = async (viewport = { width: 1280, height: 900 }): Promise<{ page: Page; context: BrowserContext }> => {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport, extraHTTPHeaders: headers() })
  onTestFinished(() => context.close())
  return { page: await context.newPage(), context }
}

/** A hydrated page, its console's errors and warnings collected; resolved once its bundle has run and gone quiet. */
const openLive = async (name: string, path: string, viewport?: { width: number; height: number }) => {
  const { page } = await openPage(browser, SUITE, `${name} ${path}`, viewport)
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`${message.type()}: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
  const response = await page.goto(`${service.baseUrl}${path}`)
  expect(response?.status(), path).toBe(200)
  await page.waitForLoadState("networkidle")
  // The index's chart shows its zoom only once hydrated: a witness that the bundle ran.
  if (path === "/") await page.locator(".chart-zoom").first().waitFor({ timeout: 15_000 })
  return { page, problems }
}

const hrefOf = (page: Page, selector: string) => page.locator(selector).evaluate((a) => (a as unknown as Dom).href)

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startPagesService(), launchBrowser()])
  history = (await api<{ data: ReadonlyArray<HistoryPoint> }>("/v1/oracle/history?granularity=per-revision")).data
  reconstitutions = (await api<ReconstitutionLog>("/v1/oracle/reconstitutions")).entries
  catalog = await api<CatalogResponse>("/v1/oracle/catalog")
  methodology = await api<MethodologyChangelog>("/v1/oracle/methodology")
  expect(history.length).toBeGreaterThan(2)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
}, 60_000)

describe("the public pages with JavaScript off", () => {
  it("/revisions lists every revision the API has, each linked to its page", async () => {
    const { page } = await openStatic()
    const response = await page.goto(`${service.baseUrl}/revisions`)
    expect(response?.status()).toBe(200)
    const rows = await page.getByTestId("all-revisions-table").locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        revision: tr.getAttribute("data-revision"),
        cells: Array.from((tr as unknown as Dom).querySelectorAll("td")).map((td) => td.textContent ?? ""),
        href: (tr as unknown as Dom).querySelector("td a")?.href ?? null
      }))
    )
    const newestFirst = [...history].reverse()
    expect(rows.map((r) => r.revision)).toEqual(newestFirst.map((p) => String(p.revisionVersion)))
    expect(rows.map((r) => [r.cells[0], r.cells[1], r.cells[3]])).toEqual(
      newestFirst.map((p) => [`#${p.revisionVersion}`, utc(p.date), p.computeIndex === null ? "n/a" : plainNumber(p.computeIndex)])
    )
    expect(rows.map((r) => r.href)).toEqual(newestFirst.map((p) => `${service.baseUrl}/revisions/${p.revisionVersion}`))
    // The SCU column, for the newest and the oldest, exactly as the API's wei string.
    for (const at of [0, rows.length - 1]) {
      const revision = await api<RevisionResponse>(`/v1/oracle/revisions/${newestFirst[at]!.revisionVersion}`)
      expect(rows[at]!.cells[2]).toBe(formatScaled(revision.scuUsd18, 18, 18))
    }
  }, 60_000)

  it("a revision page opened by its URL shows the API's revision, its manifest and its reconstitution's changes", async () => {
    const versions = history.map((p) => p.revisionVersion)
    for (const version of [lastVersion(), reconstitutedVersion()]) {
      const revision = await api<RevisionResponse>(`/v1/oracle/revisions/${version}`)
      const point = history.find((p) => p.revisionVersion === version)!
      const { page } = await openStatic()
      const response = await page.goto(`${service.baseUrl}/revisions/${version}`)
      expect(response?.status()).toBe(200)
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`Revision #${version}`)
      expect(await page.getByTestId("revision-scu").textContent()).toBe(formatScaled(revision.scuUsd18, 18, 18))
      expect(await page.getByTestId("revision-index").textContent()).toBe(point.computeIndex === null ? "n/a" : plainNumber(point.computeIndex))
      expect(await page.getByTestId("revision-tx").textContent()).toBe(revision.txHash)
      expect(await page.getByTestId("revision-block").textContent()).toBe(String(revision.publishedBlock))
      const manifest = page.getByTestId("revision-manifest")
      expect(await manifest.textContent()).toBe(point.metadataHash)
      if (revision.manifestUrl !== null) expect(revision.manifestUrl.endsWith(`/v1/oracle/manifest/${point.metadataHash}`)).toBe(true)
      const manifestHref = await manifest.evaluate((a) => (a as unknown as Dom).href)
      expect(manifestHref).toBe(`${service.baseUrl}/v1/oracle/manifest/${point.metadataHash}`)
      const body = (await (await fetch(manifestHref, { headers: headers() })).json()) as unknown
      expect(keccak256(toBytes(canonicalize(body)!))).toBe(point.metadataHash)

      // What its reconstitution changed, in the log's order and words.
      const entry = reconstitutions.find((e) => e.revisionVersion === version)
      if (entry === undefined || entry.changes.length === 0) {
        expect(await page.getByTestId("revision-change-list").count()).toBe(0)
      } else {
        const types: Record<string, string> = { ModelAdded: "Added", ModelRemoved: "Removed" }
        expect(await page.getByTestId("revision-change-list").locator("li").allTextContents()).toEqual(
          entry.changes.map((c) => `${types[c.type] ?? "Price"} ${c.modelKey}: ${c.description}`)
        )
        expect(await page.getByText(entry.summary, { exact: true }).count()).toBe(1)
      }
      // The basket it priced, by family, with the manifest's prices exactly.
      const basket = await page.getByTestId("revision-basket-table").locator("tbody tr").evaluateAll((trs) =>
        trs.map((tr) => Array.from((tr as unknown as Dom).querySelectorAll("td")).map((td) => td.textContent ?? ""))
      )
      expect(basket).toEqual(
        [...revision.basket.models]
          .sort((a, b) => a.family.localeCompare(b.family, "en"))
          .map((m) => [m.family, m.modelKey, formatScaled(m.inputPrice, 18, 18), formatScaled(m.outputPrice, 18, 18)])
      )

      // Previous and next, as real links.
      const at = versions.indexOf(version)
      const previous = versions[at - 1]
      const next = versions[at + 1]
      expect(await page.locator("a[rel=prev]").count()).toBe(previous === undefined ? 0 : 1)
      expect(await page.locator("a[rel=next]").count()).toBe(next === undefined ? 0 : 1)
      if (previous !== undefined) expect(await hrefOf(page, "a[rel=prev]")).toBe(`${service.baseUrl}/revisions/${previous}`)
      if (next !== undefined) expect(await hrefOf(page, "a[rel=next]")).toBe(`${service.baseUrl}/revisions/${next}`)
      if (previous !== undefined) {
        await page.locator("a[rel=prev]").click()
        await page.waitForURL(`${service.baseUrl}/revisions/${previous}`)
        expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`Revision #${previous}`)
        expect(await page.locator("a[rel=next]").evaluate((a) => (a as unknown as Dom).href)).toBe(`${service.baseUrl}/revisions/${version}`)
      }
    }
  }, 90_000)

  it("a revision that does not exist is a 404 page", async () => {
    const { page } = await openStatic()
    const response = await page.goto(`${service.baseUrl}/revisions/99999`)
    expect(response?.status()).toBe(404)
    expect(response?.headers()["content-type"]).toMatch(/^text\/html/)
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("No such page")
    expect(await page.locator("main").textContent()).toContain("No confirmed revision #99999.")
    expect(await page.locator('meta[name="robots"]').getAttribute("content")).toBe("noindex")
  }, 60_000)

  it("/methodology shows the published document and every methodology version", async () => {
    const markdown = Fs.readFileSync(new URL("../docs/methodology.md", import.meta.url), "utf8")
    const sections = markdown.split("\n").filter((line) => line.startsWith("## ")).map((line) => line.slice(3).trim())
    expect(sections.length).toBeGreaterThan(3)
    const { page } = await openStatic()
    const response = await page.goto(`${service.baseUrl}/methodology`)
    expect(response?.status()).toBe(200)
    const document = page.getByTestId("methodology-document")
    expect(await document.locator("h1").allTextContents()).toEqual(["Methodology"])
    expect(await document.locator("h2").allTextContents()).toEqual(sections)
    const items = page.getByTestId("methodology-versions").locator("li")
    expect(await items.count()).toBe(methodology.entries.length)
    for (const [i, entry] of methodology.entries.entries()) {
      const text = (await items.nth(i).locator("strong").textContent())!
      expect(text).toBe(`Version ${entry.version}${entry.version === methodology.activeVersion ? " (in force)" : ""}: ${entry.title}.`)
      expect(await items.nth(i).textContent()).toContain(entry.formulaSummary)
    }
  }, 60_000)
})

describe("shareable and crawlable", () => {
  it("every page has its title, a description naming its figures, its canonical URL and Open Graph tags", async () => {
    const last = await api<RevisionResponse>(`/v1/oracle/revisions/${lastVersion()}`)
    const scuText = formatScaled(last.scuUsd18, 18, 18)
    const model = catalog.models.find((m) => m.modelKey.includes("/"))!
    const pages: ReadonlyArray<{ path: string; figures: ReadonlyArray<string> }> = [
      { path: "/", figures: [`SCU ${scuText} USD`, `compute index ${plainNumber(history.at(-1)!.computeIndex!)}`, `#${lastVersion()}`] },
      { path: "/models", figures: [`${catalog.models.length} language models`, `${catalog.embeddingModels.length} embedding models`] },
      { path: modelPath(model.modelKey), figures: [model.displayName, `${plainNumber(model.currentPrice.inputPriceUsdPerMillion)} USD input`] },
      { path: "/revisions", figures: [`(${history.length})`] },
      { path: `/revisions/${lastVersion()}`, figures: [`SCU ${scuText} USD`, last.txHash, `Revision #${lastVersion()}`] },
      { path: "/methodology", figures: [`methodology version ${methodology.activeVersion}`] }
    ]
    const { page } = await openStatic()
    for (const { path, figures } of pages) {
      const response = await page.goto(`${service.baseUrl}${path}`)
      expect(response?.status(), path).toBe(200)
      const head = (await page.evaluate(`(() => {
        const content = (selector) => document.head.querySelector(selector)?.getAttribute("content") ?? null
        return {
          title: document.title,
          description: content('meta[name="description"]'),
          canonical: document.head.querySelector('link[rel="canonical"]')?.getAttribute("href") ?? null,
          ogTitle: content('meta[property="og:title"]'),
          ogDescription: content('meta[property="og:description"]'),
          ogUrl: content('meta[property="og:url"]'),
          canonicals: document.head.querySelectorAll('link[rel="canonical"]').length
        }
      })()`)) as { title: string; description: string | null; canonical: string | null; ogTitle: string | null; ogDescription: string | null; ogUrl: string | null; canonicals: number }
      expect(head.title.trim(), path).not.toBe("")
      expect(head.canonicals, path).toBe(1)
      expect(head.canonical, path).toBe(`${service.baseUrl}${path}`)
      for (const figure of figures) expect(head.description, path).toContain(figure)
      expect(head.ogTitle, path).toBe(head.title)
      expect(head.ogDescription, path).toBe(head.description)
      expect(head.ogUrl, path).toBe(head.canonical)
    }
  }, 90_000)

  it("/sitemap.xml lists every page, each of which answers; /robots.txt names the sitemap", async () => {
    const response = await fetch(`${service.baseUrl}/sitemap.xml`, { headers: headers() })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/xml/)
    const xml = await response.text()
    const locs = [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replace(/&amp;/g, "&").replace(/&lt;/g, "<"))
    const expected = [
      "/",
      "/models",
      ...catalog.models.map((m) => modelPath(m.modelKey)),
      ...catalog.embeddingModels.map((m) => modelPath(m.modelKey)),
      "/revisions",
      ...history.map((p) => `/revisions/${p.revisionVersion}`),
      "/methodology"
    ].map((path) => `${service.baseUrl}${path}`)
    expect(locs.length).toBe(new Set(locs).size)
    expect([...locs].sort()).toEqual([...expected].sort())

    const sample = [
      "/",
      "/models",
      modelPath(catalog.models[0]!.modelKey),
      ...catalog.embeddingModels.slice(0, 1).map((m) => modelPath(m.modelKey)),
      "/revisions",
      `/revisions/${history[0]!.revisionVersion}`,
      `/revisions/${lastVersion()}`,
      "/methodology"
    ].map((path) => `${service.baseUrl}${path}`)
    for (const url of sample) {
      expect(locs, url).toContain(url)
      const page = await fetch(url, { headers: headers() })
      expect(page.status, url).toBe(200)
      expect(page.headers.get("content-type"), url).toMatch(/^text\/html/)
      expect(await page.text(), url).toMatch(/^<!doctype html>/)
    }

    const robots = await fetch(`${service.baseUrl}/robots.txt`, { headers: headers() })
    expect(robots.status).toBe(200)
    expect((await robots.text()).split("\n")).toContain(`Sitemap: ${service.baseUrl}/sitemap.xml`)
  }, 90_000)

  it("answers a page with an ETag, and 304 with no body to a request naming it", async () => {
    const first = await fetch(`${service.baseUrl}/`, { headers: headers() })
    expect(first.status).toBe(200)
    expect(first.headers.get("cache-control")).toBe("no-cache")
    const firstBody = await first.text()
    expect(firstBody.length).toBeGreaterThan(0)
    let etag = first.headers.get("etag")
    expect(etag).toMatch(/^"[^"]+"$/)
    // The index says how long ago its revision was: its page (and ETag) may change at a minute's turn, never within one.
    let matched: Response | undefined
    for (let attempt = 0; attempt < 3 && matched === undefined; attempt++) {
      const again = await fetch(`${service.baseUrl}/`, { headers: { ...headers(), "if-none-match": etag! } })
      if (again.status === 304) {
        matched = again
      } else {
        expect(again.status).toBe(200)
        const renewed = again.headers.get("etag")
        expect(renewed, "a 200 to a request naming the ETag must carry a new one").not.toBe(etag)
        etag = renewed
        await again.arrayBuffer()
      }
    }
    expect(matched?.status).toBe(304)
    expect(matched!.headers.get("etag")).toBe(etag)
    expect(await matched!.text()).toBe("")

    const other = await fetch(`${service.baseUrl}/`, { headers: { ...headers(), "if-none-match": '"not-this-one"' } })
    expect(other.status).toBe(200)
    expect(other.headers.get("etag")).toMatch(/^"[^"]+"$/)
    expect((await other.text()).length).toBeGreaterThan(0)

    // A revision page does not move with the clock: its ETag holds.
    const revision = await fetch(`${service.baseUrl}/revisions/${lastVersion()}`, { headers: headers() })
    const revisionTag = revision.headers.get("etag")!
    await revision.arrayBuffer()
    const revisionAgain = await fetch(`${service.baseUrl}/revisions/${lastVersion()}`, { headers: { ...headers(), "if-none-match": revisionTag } })
    expect(revisionAgain.status).toBe(304)
  }, 60_000)

  it("links between pages are real links: each in the main content answers", async () => {
    const { page } = await openStatic()
    const targets = new Set<string>()
    for (const path of ["/", `/revisions/${reconstitutedVersion()}`, "/methodology"]) {
      const response = await page.goto(`${service.baseUrl}${path}`)
      expect(response?.status(), path).toBe(200)
      const hrefs = await page.locator("main a[href]").evaluateAll((as) => as.map((a) => (a as unknown as Dom).href))
      expect(hrefs.length, path).toBeGreaterThan(0)
      for (const href of hrefs) {
        if (href.startsWith("data:")) continue
        const url = new URL(href)
        if (url.origin !== service.baseUrl) continue
        url.hash = ""
        targets.add(`${url.href}\t${path}`)
      }
    }
    const unique = new Map([...targets].map((t) => [t.split("\t")[0]!, t.split("\t")[1]!]))
    expect(unique.size).toBeGreaterThan(10)
    const broken: Array<string> = []
    const queue = [...unique.entries()]
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [url, from] = next
        const response = await fetch(url, { headers: headers(), redirect: "manual" })
        await response.arrayBuffer()
        if (!(response.status === 200 || (response.status >= 301 && response.status <= 308))) broken.push(`${response.status} ${url} (on ${from})`)
      }
    }
    await Promise.all(Array.from({ length: 6 }, worker))
    expect(broken).toEqual([])
  }, 120_000)
})

describe("the hydrated pages", () => {
  const PATHS = () => ["/", "/revisions", `/revisions/${reconstitutedVersion()}`, "/methodology"]

  it("pass an accessibility check (axe-core, WCAG 2 A and AA)", async (context) => {
    const found: Record<string, unknown> = {}
    for (const path of PATHS()) {
      const { page } = await openLive(context.task.name, path)
      // Evaluated through the DevTools protocol: the page's policy (script-src 'self') refuses an injected <script>.
      await page.evaluate(Fs.readFileSync(AXE, "utf8"))
      const violations = (await page.evaluate(
        `axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + n.failureSummary) })))`
      )) as ReadonlyArray<unknown>
      if (violations.length > 0) {
        found[path] = violations
        console.error(`[axe] ${path}:\n${JSON.stringify(violations, null, 2)}`)
      }
    }
    expect(found).toEqual({})
  }, 120_000)

  it("fit a phone (360 px) with no horizontal scroll", async (context) => {
    const overflowing: Record<string, unknown> = {}
    for (const path of PATHS()) {
      const { page } = await openLive(context.task.name, path, { width: 360, height: 740 })
      const widths = (await page.evaluate("({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })")) as { scroll: number; client: number }
      expect(widths.client, path).toBe(360)
      if (widths.scroll > widths.client) overflowing[path] = widths
    }
    expect(overflowing).toEqual({})
  }, 120_000)

  it("log no console error or warning", async (context) => {
    const logged: Record<string, ReadonlyArray<string>> = {}
    for (const path of PATHS()) {
      const { problems } = await openLive(context.task.name, path)
      if (problems.length > 0) logged[path] = problems
    }
    expect(logged).toEqual({})
  }, 120_000)
})
