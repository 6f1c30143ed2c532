/**
 * `/models` and `/models/<vendor>/<model>`, the price browser rendered on the server (DESIGN.md section 13), in
 * Debian's chromium against a real service on a scratch database. With JavaScript off: every row, the search form,
 * the sort links, a model's page opened by URL (its prices, marks, tiers, price history and a price-at lookup the
 * server answers), and an embedding model's page. With it on: hydration changes no figure, the search and sort work
 * in place (the address following, no navigation), the chart zooms. The old `?model=` address redirects, an unknown
 * model is a 404 page, every page passes axe-core's WCAG 2 A/AA rules, and a phone has no horizontal scroll. Each
 * figure the pages show is checked against the API's own JSON, and billed prices against exact bigint arithmetic on
 * the pricing list's wei.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { modelPath } from "../domain/oracle/publicPages.ts"
import type { CatalogResponse, PriceAtResponse, PriceHistoryResponse, PricingResponse } from "../domain/oracle/schemas.ts"
import { formatScaled, parseScaled, plainNumber, utc, weiToUsd } from "../web/shared/format.ts"
import { launchBrowser, nextVisitorIp, openPage, type PagesService, startPagesService } from "./support/browser.ts"
import { projectRoot } from "./support/process.ts"

const SUITE = "browser-models"
const require = createRequire(import.meta.url)

let service: PagesService
let browser: Browser
let catalog: CatalogResponse
let pricing: PricingResponse

type Entry = CatalogResponse["models"][number]
type EmbeddingEntry = CatalogResponse["embeddingModels"][number]

/** The API's own answer, as a visitor of its own: the rate limit is per address, so a fresh one is never refused. */
const api = async <A>(path: string, expectStatus = 200): Promise<{ status: number; body: A }> => {
  const response = await fetch(`${service.baseUrl}${path}`, { headers: { "x-forwarded-for": nextVisitorIp() } })
  expect(response.status, `${path}`).toBe(expectStatus)
  return { status: response.status, body: (await response.json()) as A }
}

/** Billed USD per million as the pages must show it: weiToUsd of the pricing list's wei at its peg. */
const billed = (wei: string) => weiToUsd(wei, pricing.pegUsd)
/** The same, written here from the definition: wei x peg / 10^18, exact, 6 places (truncated). */
const billedByDefinition = (wei: string) => formatScaled(((BigInt(wei) * parseScaled(plainNumber(pricing.pegUsd))) / 10n ** 18n).toString(), 18, 6)

const matching = (text: string) => {
  const needle = text.trim().toLowerCase()
  return catalog.models.filter((m) => [m.modelKey, m.displayName, m.provider.key, m.provider.name, m.family].some((f) => f.toLowerCase().includes(needle)))
}

/** The catalog in the order the page must show it sorted by listed input price: ties by model key. */
const byInput = (dir: "ascending" | "descending") =>
  [...catalog.models]
    .sort((a, b) => (a.currentPrice.inputPriceUsdPerMillion - b.currentPrice.inputPriceUsdPerMillion) * (dir === "ascending" ? 1 : -1) || a.modelKey.localeCompare(b.modelKey, "en"))
    .map((m) => m.modelKey)

const rowKeys = (page: Page) => page.locator("[data-testid=models-table] tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-model") ?? ""))

const modelUrl = (key: string) => `${service.baseUrl}${modelPath(key)}`

const openModels = async (page: Page, query = "") => {
  await page.goto(`${service.baseUrl}/models${query}`)
  await page.locator("[data-testid=model-count]").waitFor()
}

/** A model whose list price changed over time (so a price-at lookup can tell a past price from today's), if any. */
const detailModel = (): Entry =>
  catalog.models.find((m) => m.modelKey === "deepseek/deepseek-v4-pro") ??
  catalog.models.find((m) => m.indexMember) ??
  catalog.models[0]!

const slug = (text: string) => text.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 80)

/** A page with JavaScript off: what a crawler, a reader or a script-blocking browser gets, as its own visitor. */
const openStaticPage = async (test: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; context: BrowserContext }> => {
  const context = await browser.newContext({ viewport, javaScriptEnabled: false, extraHTTPHeaders: { "x-forwarded-for": nextVisitorIp() } })
  const page = await context.newPage()
  onTestFinished(async (finished) => {
    if (finished.task.result?.state === "fail") {
      const dir = Path.join(projectRoot, "test-results", slug(SUITE), slug(`${test} no js`))
      Fs.mkdirSync(dir, { recursive: true })
      await page.screenshot({ path: Path.join(dir, "failure.png"), fullPage: true }).catch(() => undefined)
      console.error(`[browser] kept ${dir}/failure.png`)
    }
    await context.close()
  })
  return { page, context }
}

/** Every row of the models table as the page shows it. */
const tableRows = (page: Page) =>
  page.locator("[data-testid=models-table] tbody tr").evaluateAll((trs) =>
    trs.map((tr) => {
      const cell = (col: string) => tr.querySelector(`td[data-col="${col}"]`)?.textContent ?? null
      return {
        key: tr.getAttribute("data-model") ?? "",
        inputListed: cell("input-listed"),
        inputBilled: cell("input-billed"),
        outputListed: cell("output-listed"),
        outputBilled: cell("output-billed"),
        cacheRead: cell("cache-read"),
        routable: cell("routable"),
        href: tr.querySelector("a.model-key")?.getAttribute("href") ?? null
      }
    })
  )

/** The models table against the API: every catalog model once, listed figures as sent, billed exactly from wei. */
const expectCatalogTable = async (page: Page) => {
  const rows = await tableRows(page)
  expect(rows.map((r) => r.key)).toEqual(catalog.models.map((m) => m.modelKey).sort((a, b) => a.localeCompare(b, "en")))
  const byKey = new Map(catalog.models.map((m) => [m.modelKey, m]))
  let fractional = 0
  for (const row of rows) {
    const entry = byKey.get(row.key)!
    const marked = pricing.models[row.key]!
    expect(row.inputListed, row.key).toBe(plainNumber(entry.currentPrice.inputPriceUsdPerMillion))
    expect(row.outputListed, row.key).toBe(plainNumber(entry.currentPrice.outputPriceUsdPerMillion))
    expect(row.inputBilled, row.key).toBe(billed(marked.input.weiPerMillion))
    expect(row.outputBilled, row.key).toBe(billed(marked.output.weiPerMillion))
    expect(billed(marked.input.weiPerMillion), row.key).toBe(billedByDefinition(marked.input.weiPerMillion))
    expect(row.routable, row.key).toBe(entry.integrated ? "yes" : "no")
    // A real link to the model's own page, relative to the page's base.
    expect(row.href, row.key).toBe(`.${modelPath(row.key)}`)
    const cached = entry.cache?.cachedInput
    if (cached?.usdPerMillion != null && marked.cache?.cachedInput) {
      expect(row.cacheRead, row.key).toBe(`${plainNumber(cached.usdPerMillion)}billed ${billed(marked.cache.cachedInput.weiPerMillion)}`)
    }
    if (billed(marked.input.weiPerMillion).includes(".")) fractional++
  }
  // The billed price is the list price plus 5%, not a copy of it.
  expect(fractional).toBeGreaterThan(0)
  const one = catalog.models.find((m) => m.currentPrice.inputPriceUsdPerMillion === 5) ?? catalog.models[0]!
  const shown = rows.find((r) => r.key === one.modelKey)!
  expect(shown.inputBilled).not.toBe(shown.inputListed)
  return rows
}

/** The embedding table against the API. */
const expectEmbeddingTable = async (page: Page) => {
  const embeddings = catalog.embeddingModels
  const section = page.getByTestId("embedding-models")
  expect(await section.getByRole("heading", { level: 2 }).textContent()).toBe("Embedding models")
  const rows = await section.locator("[data-testid=embedding-models-table] tbody tr").evaluateAll((trs) =>
    trs.map((tr) => {
      const cell = (col: string) => tr.querySelector(`td[data-col="${col}"]`)?.textContent ?? null
      return { key: tr.getAttribute("data-model") ?? "", listed: cell("input-listed"), billed: cell("input-billed"), dimensions: cell("dimensions"), output: cell("output-listed") }
    })
  )
  expect(rows.map((r) => r.key)).toEqual(embeddings.map((m) => m.modelKey).sort((a, b) => a.localeCompare(b, "en")))
  for (const row of rows) {
    const entry = embeddings.find((m) => m.modelKey === row.key)!
    expect(row.listed, row.key).toBe(plainNumber(entry.currentPrice.inputPriceUsdPerMillion))
    expect(row.billed, row.key).toBe(billed(pricing.embeddingModels[row.key]!.input.weiPerMillion))
    expect(row.dimensions, row.key).toContain(entry.dimensions!.toLocaleString("en"))
    // Input only: no output column.
    expect(row.output, row.key).toBeNull()
  }
  const small = rows.find((r) => r.key === "openai/text-embedding-3-small")!
  expect(small).toMatchObject({ listed: "0.02", billed: "0.021", dimensions: "1,536 (any size up to 1,536)" })
}

type Source = Entry["priceSources"]["input"]
const numbers = (m: Entry): ReadonlyArray<readonly [string, Source | null]> => [
  ["input", m.priceSources.input],
  ["output", m.priceSources.output],
  ["cache read", m.priceSources.cachedInput],
  ["cache write, 5 min", m.priceSources.cacheWrite5m],
  ["cache write, 1 h", m.priceSources.cacheWrite1h],
  ["reasoning output", m.reasoning === null ? null : m.priceSources.reasoningOutput]
]

/** A model page against the API: every price listed and billed, its mark and source, tiers, family, basket and routing. */
const expectModelPrices = async (page: Page, model: Entry) => {
  const key = model.modelKey
  const marked = pricing.models[key]!
  expect(await page.locator("#model-detail-heading").textContent()).toBe(`${key} (${model.displayName})`)
  expect(await page.getByTestId("detail-input-listed").textContent()).toBe(plainNumber(model.currentPrice.inputPriceUsdPerMillion))
  expect(await page.getByTestId("detail-output-listed").textContent()).toBe(plainNumber(model.currentPrice.outputPriceUsdPerMillion))
  expect(await page.getByTestId("detail-input-billed").textContent()).toBe(billed(marked.input.weiPerMillion))
  expect(await page.getByTestId("detail-output-billed").textContent()).toBe(billed(marked.output.weiPerMillion))
  const prices = page.getByTestId("detail-prices")
  const components = [
    ["cache read", model.cache?.cachedInput ?? null, marked.cache?.cachedInput],
    ["cache write, 5 min", model.cache?.cacheWrite5m ?? null, marked.cache?.cacheWrite5m],
    ["cache write, 1 h", model.cache?.cacheWrite1h ?? null, marked.cache?.cacheWrite1h],
    ["reasoning output", model.reasoning?.reasoningOutput ?? null, marked.reasoning?.reasoningOutput]
  ] as const
  for (const [label, component, figure] of components) {
    const cells = await prices.locator(`tr[data-price="${label}"] td`).allTextContents()
    if (component === null) {
      expect(cells.slice(0, 2), label).toEqual(["none", "none"])
      continue
    }
    const listed = component.usdPerMillion !== null ? plainNumber(component.usdPerMillion) : `${plainNumber(component.ratioOfInput!)} × input`
    expect(cells.slice(0, 3), label).toEqual([listed, figure == null ? "n/a" : billed(figure.weiPerMillion), component.provenance])
  }
  // Each number's mark beside the vendor page it was read on, or what an inferred number was derived from.
  for (const [label, source] of numbers(model)) {
    if (source === null) continue
    const cells = prices.locator(`tr[data-price="${label}"] td`)
    expect(await cells.nth(2).textContent(), label).toBe(source.provenance)
    const shown = cells.nth(3)
    if (source.sourceUrl === null) {
      expect(await shown.textContent(), label).toBe(`derived: ${source.derivedFrom ?? "no source recorded"}${source.promotionUntil === null ? "" : ` until ${source.promotionUntil.slice(0, 10)}`}`)
      expect(await shown.locator("a").count(), label).toBe(0)
    } else {
      expect(await shown.locator("a").getAttribute("href"), label).toBe(source.sourceUrl)
      if (source.checkedAt !== null) expect(await shown.textContent(), label).toContain(`read ${source.checkedAt.slice(0, 10)}`)
    }
  }
  if (model.priceSources.note !== null) expect(await page.getByTestId("price-note").textContent()).toContain(model.priceSources.note)

  // Context tiers: from which prompt length each list price holds.
  const tiers = model.contextTiers ?? []
  if (tiers.length === 0) {
    expect(await page.getByTestId("detail-tiers").count()).toBe(0)
  } else {
    const shownTiers = await page.getByTestId("detail-tiers").locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 4).map((td) => td.textContent)))
    expect(shownTiers).toEqual(tiers.map((t) => [t.fromInputTokens.toLocaleString("en"), plainNumber(t.inputPriceUsdPerMillion), plainNumber(t.outputPriceUsdPerMillion), t.provenance]))
  }

  // Basket, routing and family.
  expect(await page.getByTestId("detail-index-member").textContent()).toBe(model.indexMember ? "yes: this model represents its family" : "no")
  expect(await page.getByTestId("detail-routable").textContent()).toMatch(model.integrated ? /^yes/ : /^no/)
  const family = catalog.models.filter((m) => m.family === model.family && m.modelKey !== key)
  if (family.length === 0) {
    expect(await page.getByTestId("family-members").count()).toBe(0)
  } else {
    const links = await page.getByTestId("family-members").locator("a").evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href")]))
    expect(new Set(links.map(([text, href]) => `${text} ${href}`))).toEqual(new Set(family.map((m) => `${m.modelKey} .${modelPath(m.modelKey)}`)))
  }
}

const historyOf = async (key: string) => (await api<PriceHistoryResponse>(`/v1/oracle/models/${encodeURIComponent(key)}/price-history?granularity=per-revision`)).body

/** The price-history table against the API's per-revision history, row for row. */
const expectHistoryTable = async (page: Page, history: PriceHistoryResponse) => {
  expect(history.data.length).toBeGreaterThan(0)
  const rows = await page.getByTestId("price-history-table").locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)))
  expect(rows).toEqual(
    history.data.map((p) => [
      utc(p.date),
      plainNumber(p.inputPriceUsdPerMillion),
      plainNumber(p.outputPriceUsdPerMillion),
      p.source === "manifest" ? `manifest of revision #${p.revisionVersion}` : "catalog"
    ])
  )
  // The chart is an SVG figure drawn by the server, its data as a table inside a <details>.
  const chart = page.getByTestId("price-history-chart")
  expect(await chart.locator("svg.svg-chart path[data-series]").evaluateAll((ps) => ps.map((p) => [p.getAttribute("data-series"), (p.getAttribute("d") ?? "").startsWith("M")]))).toEqual([
    ["input", true],
    ["output", true]
  ])
  const instants = new Set(history.data.map((p) => new Date(p.date).getTime()))
  expect(await chart.locator("details table tbody tr").count()).toBe(instants.size)
}

/** The text of `main`, without the chart's zoom buttons (drawn only after hydration). */
const mainText = (page: Page): Promise<string> =>
  page.evaluate(`(() => {
    const main = document.querySelector("main").cloneNode(true)
    main.querySelectorAll(".chart-zoom").forEach((zoom) => zoom.remove())
    return main.textContent
  })()`)

/** Counts the documents a page loads from now on: an in-place update loads none. */
const countNavigations = (page: Page) => {
  const seen = { documents: 0 }
  page.on("request", (request) => {
    if (request.resourceType() === "document") seen.documents += 1
  })
  return seen
}

beforeAll(async () => {
  service = await startPagesService()
  browser = await launchBrowser()
  catalog = (await api<CatalogResponse>("/v1/oracle/catalog")).body
  pricing = (await api<PricingResponse>("/v1/oracle/pricing")).body
  expect(catalog.models.length).toBeGreaterThan(1)
}, 360_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
}, 180_000)

describe("/models with JavaScript off: the whole browser as HTML", () => {
  it("lists every catalog model with its listed prices as the API sends them and its billed prices exactly from wei, and the embedding models apart", { timeout: 90_000 }, async () => {
    const { page } = await openStaticPage("listed and billed")
    await openModels(page)
    const total = catalog.models.length
    expect(await page.getByTestId("model-count").textContent()).toBe(`${total} of ${total} models`)
    await expectCatalogTable(page)
    // The chat table holds none of the embedding models; they have their own.
    const chatKeys = new Set(await rowKeys(page))
    expect(catalog.embeddingModels.length, "the bundled cards carry embedding models").toBeGreaterThan(0)
    expect(catalog.embeddingModels.filter((m) => chatKeys.has(m.modelKey))).toEqual([])
    await expectEmbeddingTable(page)

    // The catalog table has room for one mark pair per row: it links each page behind the input and output prices.
    for (const m of catalog.models.slice(0, 12)) {
      const pages = [...new Set([m.priceSources.input.sourceUrl, m.priceSources.output.sourceUrl].filter((u) => u !== null))]
      const links = page.locator(`[data-testid=models-table] tr[data-model="${m.modelKey}"] td[data-col=mark] a`)
      expect(await links.evaluateAll((as) => as.map((a) => a.getAttribute("href"))), m.modelKey).toEqual(pages)
    }
  })

  it("filters with the search form: the address carries q=, the rows are exactly the matching models; the provider filter too", { timeout: 90_000 }, async () => {
    const { page } = await openStaticPage("search form")
    await openModels(page)
    const total = catalog.models.length
    // A key from the catalog that is also part of other models' keys (`openai/gpt-5` in `openai/gpt-5-mini`), typed in upper case.
    const term = [...catalog.models]
      .map((m) => ({ key: m.modelKey, hits: matching(m.modelKey).length }))
      .sort((a, b) => b.hits - a.hits || a.key.localeCompare(b.key))[0]!.key
    const expected = matching(term).map((m) => m.modelKey)
    expect(expected.length).toBeLessThan(total)
    expect(expected.length).toBeGreaterThan(1)
    await page.getByLabel("Search models").fill(term.toUpperCase())
    await page.getByLabel("Search models").press("Enter")
    await page.waitForURL((url) => url.searchParams.get("q") === term.toUpperCase())
    expect(await page.getByTestId("model-count").textContent()).toBe(`${expected.length} of ${total} models`)
    expect(new Set(await rowKeys(page))).toEqual(new Set(expected))
    expect(await page.getByLabel("Search models").inputValue()).toBe(term.toUpperCase())

    // A provider from the select, by the Filter button, no text.
    const provider = [...catalog.models].sort((a, b) => a.modelKey.localeCompare(b.modelKey))[0]!.provider
    const byProvider = catalog.models.filter((m) => m.provider.key === provider.key).map((m) => m.modelKey)
    expect(byProvider.length).toBeLessThan(total)
    await page.getByLabel("Search models").fill("")
    await page.getByLabel("Provider").selectOption(provider.key)
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForURL((url) => url.searchParams.get("provider") === provider.key)
    expect(new Set(await rowKeys(page))).toEqual(new Set(byProvider))
    expect(await page.getByTestId("model-count").textContent()).toBe(`${byProvider.length} of ${total} models`)

    // Routable only.
    await page.getByLabel("Provider").selectOption("")
    await page.getByLabel("Routable only").check()
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForURL((url) => url.searchParams.get("routable") === "1")
    const routable = catalog.models.filter((m) => m.integrated).map((m) => m.modelKey)
    expect(new Set(await rowKeys(page))).toEqual(new Set(routable))

    // No match says so.
    await openModels(page, "?q=no-such-model-anywhere")
    expect(await page.getByTestId("model-count").textContent()).toBe(`0 of ${total} models`)
    expect(await page.getByTestId("no-match").textContent()).toContain("No model matches “no-such-model-anywhere”")
  })

  it("sorts by the listed input price through the column header's link, ascending then descending, and says so in aria-sort", { timeout: 90_000 }, async () => {
    const { page } = await openStaticPage("sort links")
    await openModels(page)
    const header = page.locator("[data-testid=models-table] th[data-sort=input]")
    expect(await header.getAttribute("aria-sort")).toBeNull()
    expect(await page.locator("[data-testid=models-table] th[data-sort=model]").getAttribute("aria-sort")).toBe("ascending")
    const price = new Map(catalog.models.map((m) => [m.modelKey, m.currentPrice.inputPriceUsdPerMillion]))

    await header.locator("a.sort").click()
    await page.waitForURL((url) => url.searchParams.get("sort") === "input")
    expect(new URL(page.url()).searchParams.get("dir")).toBeNull()
    expect(await header.getAttribute("aria-sort")).toBe("ascending")
    expect(await page.locator("[data-testid=models-table] th[aria-sort]").count()).toBe(1)
    expect(await rowKeys(page)).toEqual(byInput("ascending"))

    await page.locator("[data-testid=models-table] th[data-sort=input] a.sort").click()
    await page.waitForURL((url) => url.searchParams.get("dir") === "descending")
    expect(await page.locator("[data-testid=models-table] th[data-sort=input]").getAttribute("aria-sort")).toBe("descending")
    const descending = byInput("descending")
    expect(await rowKeys(page)).toEqual(descending)
    expect(price.get(descending[0]!)).toBe(Math.max(...price.values()))
    // The cells show the API's figures in that order.
    const cells = await page.locator("[data-testid=models-table] tbody td[data-col=input-listed]").allTextContents()
    expect(cells).toEqual(descending.map((key) => plainNumber(price.get(key)!)))
  })

  it("opens a model's page by URL: every price, mark and source, its tiers, family, price history and a price-at lookup the server answers", { timeout: 120_000 }, async () => {
    const model = detailModel()
    const key = model.modelKey
    const { page } = await openStaticPage("model page")
    const response = await page.goto(modelUrl(key))
    expect(response?.status()).toBe(200)
    await expectModelPrices(page, model)
    const history = await historyOf(key)
    await expectHistoryTable(page, history)

    // A past moment whose price differs from today's when the history has one.
    const now = model.currentPrice.inputPriceUsdPerMillion
    const past = history.data.find((p) => p.inputPriceUsdPerMillion !== now) ?? history.data[0]!
    const day = past.date.slice(0, 10)
    const at = (await api<PriceAtResponse>(`/v1/oracle/models/${encodeURIComponent(key)}/price-at?date=${day}T12:00:00Z`)).body
    await page.getByLabel("Date (UTC)").fill(day)
    await page.getByLabel(/^Time \(UTC/).fill("12:00")
    await page.getByRole("button", { name: "Look up the price" }).click()
    await page.waitForURL((url) => url.searchParams.get("date") === day)
    expect(new URL(page.url()).pathname).toBe(modelPath(key))
    expect(new URL(page.url()).searchParams.get("time")).toBe("12:00")
    expect(await page.getByTestId("price-at-input").textContent()).toBe(plainNumber(at.inputPriceUsdPerMillion))
    expect(await page.getByTestId("price-at-output").textContent()).toBe(plainNumber(at.outputPriceUsdPerMillion))
    expect(await page.getByTestId("price-at-source").textContent()).toContain(at.source === "manifest" ? `revision #${at.revisionVersion}` : "catalog")
    // The form keeps what was asked.
    expect(await page.getByLabel("Date (UTC)").inputValue()).toBe(day)

    // Before the model was priced: the API's own message.
    const refused = (await api<{ error: { message: string } }>(`/v1/oracle/models/${encodeURIComponent(key)}/price-at?date=2001-01-01`, 404)).body
    await page.getByLabel("Date (UTC)").fill("2001-01-01")
    await page.getByLabel(/^Time \(UTC/).fill("")
    await page.getByRole("button", { name: "Look up the price" }).click()
    await page.waitForURL((url) => url.searchParams.get("date") === "2001-01-01")
    expect(await page.getByTestId("price-at-result").textContent()).toContain(refused.error.message)
    expect(await page.getByTestId("price-at-input").count()).toBe(0)
  })

  it("shows each number's mark beside the vendor page it was read on, or what an inferred number was derived from, and a model's context tiers", { timeout: 90_000 }, async () => {
    // A model whose numbers carry both kinds of source, so both renderings are checked on one page.
    const marked = catalog.models.find((m) => {
      const marks = numbers(m).flatMap(([, s]) => (s === null ? [] : [s.provenance]))
      return marks.includes("verified") && marks.includes("inferred")
    })
    expect(marked, "a model with verified and inferred numbers").toBeDefined()
    const tiered = catalog.models.find((m) => (m.contextTiers ?? []).length > 0)
    expect(tiered, "a model with context tiers").toBeDefined()
    const { page } = await openStaticPage("sources and tiers")
    for (const model of [marked!, tiered!]) {
      expect((await page.goto(modelUrl(model.modelKey)))?.status()).toBe(200)
      await expectModelPrices(page, model)
    }
    expect(await page.getByTestId("detail-tiers").locator("tbody tr").count()).toBe(tiered!.contextTiers!.length)
  })

  it("opens an embedding model's page by URL: its price now, listed and billed, its vectors and its dated prices", { timeout: 90_000 }, async () => {
    const entry: EmbeddingEntry = catalog.embeddingModels.find((m) => m.priceHistory.length > 1) ?? catalog.embeddingModels[0]!
    const { page } = await openStaticPage("embedding page")
    expect((await page.goto(modelUrl(entry.modelKey)))?.status()).toBe(200)
    expect(await page.locator("#model-detail-heading").textContent()).toContain(entry.modelKey)
    expect(await page.getByTestId("detail-input-listed").textContent()).toBe(plainNumber(entry.currentPrice.inputPriceUsdPerMillion))
    expect(await page.getByTestId("detail-input-billed").textContent()).toBe(billed(pricing.embeddingModels[entry.modelKey]!.input.weiPerMillion))
    expect(await page.getByTestId("detail-dimensions").textContent()).toContain(entry.dimensions!.toLocaleString("en"))
    const rows = await page.getByTestId("embedding-price-history").locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)))
    expect(rows).toEqual(entry.priceHistory.map((p) => [utc(p.effectiveFrom), plainNumber(p.inputPriceUsdPerMillion), p.provenance]))
  })
})

describe("/models with JavaScript on: hydrated, not re-rendered", () => {
  it("hydration changes no figure: the text of /models and of a model page is the same with JavaScript on and off", { timeout: 120_000 }, async () => {
    const key = detailModel().modelKey
    const { page: staticPage } = await openStaticPage("hydration")
    const { page } = await openPage(browser, SUITE, "hydration")
    await openModels(staticPage)
    await openModels(page)
    // The hydrated table still holds the API's figures, every one.
    await expectCatalogTable(page)
    await expectEmbeddingTable(page)
    const modelsText = await mainText(staticPage)
    expect(modelsText).toContain(`${catalog.models.length} of ${catalog.models.length} models`)
    expect(await mainText(page)).toBe(modelsText)

    await staticPage.goto(modelUrl(key))
    await page.goto(modelUrl(key))
    // The zoom buttons are drawn once the chart has hydrated.
    await page.locator(".chart-zoom").waitFor()
    expect(await staticPage.locator(".chart-zoom").count()).toBe(0)
    const modelText = await mainText(staticPage)
    expect(modelText).toContain(plainNumber(detailModel().currentPrice.inputPriceUsdPerMillion))
    expect(await mainText(page)).toBe(modelText)
    await expectModelPrices(page, detailModel())
  })

  it("searches in place: the rows narrow as one types, the address follows (q=) and no page is loaded", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "search")
    await openModels(page)
    const total = catalog.models.length
    const navigations = countNavigations(page)
    const term = [...catalog.models]
      .map((m) => ({ key: m.modelKey, hits: matching(m.modelKey).length }))
      .sort((a, b) => b.hits - a.hits || a.key.localeCompare(b.key))[0]!.key
    const expected = matching(term).map((m) => m.modelKey)
    expect(expected.length).toBeLessThan(total)
    const search = page.getByLabel("Search models")
    await search.fill(term.toUpperCase())
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${expected.length} of ${total} models`)
    expect(new Set(await rowKeys(page))).toEqual(new Set(expected))
    await expect.poll(() => new URL(page.url()).searchParams.get("q")).toBe(term.toUpperCase())

    // A provider's name finds its models too.
    const provider = catalog.models[0]!.provider
    await search.fill(provider.name.toLowerCase())
    await expect.poll(() => rowKeys(page).then((keys) => new Set(keys))).toEqual(new Set(matching(provider.name).map((m) => m.modelKey)))

    // Enter does not submit: the table is already filtered.
    await search.press("Enter")
    await search.fill("no-such-model-anywhere")
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`0 of ${total} models`)
    expect(await page.getByTestId("no-match").textContent()).toContain("No model matches")

    await search.fill("")
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(total)
    expect(await page.getByTestId("model-count").textContent()).toBe(`${total} of ${total} models`)
    await expect.poll(() => new URL(page.url()).search).toBe("")
    expect(navigations.documents).toBe(0)
  })

  it("sorts in place by the listed input price, ascending then descending: aria-sort and the address follow, no page is loaded", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "sort")
    await openModels(page)
    const navigations = countNavigations(page)
    const header = page.locator("[data-testid=models-table] th[data-sort=input]")
    const link = header.getByRole("link")

    await link.click()
    await expect.poll(() => header.getAttribute("aria-sort")).toBe("ascending")
    expect(await rowKeys(page)).toEqual(byInput("ascending"))
    // Only one column claims the sort.
    expect(await page.locator("[data-testid=models-table] th[aria-sort]").count()).toBe(1)
    await expect.poll(() => new URL(page.url()).searchParams.get("sort")).toBe("input")

    await link.click()
    await expect.poll(() => header.getAttribute("aria-sort")).toBe("descending")
    const descending = byInput("descending")
    expect(await rowKeys(page)).toEqual(descending)
    const price = new Map(catalog.models.map((m) => [m.modelKey, m.currentPrice.inputPriceUsdPerMillion]))
    const cells = await page.locator("[data-testid=models-table] tbody td[data-col=input-listed]").allTextContents()
    expect(cells).toEqual(descending.map((key) => plainNumber(price.get(key)!)))
    await expect.poll(() => new URL(page.url()).searchParams.get("dir")).toBe("descending")
    // The link now points at the reverse order, for a reader who opens it in a new tab.
    expect(new URL((await link.getAttribute("href"))!, page.url()).search).toBe("?sort=input")
    expect(navigations.documents).toBe(0)

    // A sorted address opens sorted, and hydrates to the same order.
    await openModels(page, "?sort=input&dir=descending")
    expect(await rowKeys(page)).toEqual(descending)
  })

  it("links each model to its own page, whose chart zooms in place", { timeout: 90_000 }, async () => {
    const model = detailModel()
    const { page } = await openPage(browser, SUITE, "chart zoom")
    await openModels(page)
    await page.locator(`[data-testid=models-table] tr[data-model="${model.modelKey}"] a.model-key`).click()
    await page.waitForURL((url) => url.pathname === modelPath(model.modelKey))
    expect(await page.locator("#model-detail-heading").textContent()).toContain(model.modelKey)
    const chart = page.getByTestId("price-history-chart")
    const zoom = chart.locator(".chart-zoom")
    await zoom.waitFor()
    expect(await zoom.getByRole("button", { name: "All" }).getAttribute("aria-pressed")).toBe("true")

    const history = await historyOf(model.modelKey)
    const first = new Date(history.data[0]!.date).getTime()
    const end = Math.max(new Date(history.to).getTime(), new Date(history.data.at(-1)!.date).getTime())
    const DAY = 86_400_000
    // The narrowest zoom shorter than the history, so narrowing shows.
    const choice = [{ label: "30 days", days: 30 }, { label: "90 days", days: 90 }, { label: "1 year", days: 365 }].find((z) => end - z.days * DAY > first)
    expect(choice, `a history longer than 30 days (${history.data[0]!.date} to ${history.to})`).toBeDefined()
    const ticks = () => chart.locator("svg.svg-chart .svg-chart-x text").evaluateAll((ts) => ts.map((t) => t.textContent ?? "").filter((t) => /^\d{4}-/.test(t)))
    const before = await ticks()
    const line = chart.locator("svg.svg-chart path[data-series=input]")
    const pathBefore = await line.getAttribute("d")
    await zoom.getByRole("button", { name: choice!.label }).click()
    await expect.poll(() => zoom.getByRole("button", { name: choice!.label }).getAttribute("aria-pressed")).toBe("true")
    expect(await zoom.getByRole("button", { name: "All" }).getAttribute("aria-pressed")).toBe("false")
    await expect.poll(() => line.getAttribute("d")).not.toBe(pathBefore)
    // Every date on the axis now lies within the window.
    const after = await ticks()
    expect(after).not.toEqual(before)
    const from = new Date(end - choice!.days * DAY).toISOString().slice(0, 10)
    for (const tick of after) expect(tick >= from, `${tick} >= ${from}`).toBe(true)
    expect(before.some((tick) => tick < from)).toBe(true)
    // The figures do not change with the view.
    await expectHistoryTable(page, history)
  })
})

describe("model addresses", () => {
  it("redirects /models?model=<key> and a key in another case to the model's page, and answers an unknown model with a 404 page", { timeout: 90_000 }, async () => {
    const model = catalog.models.find((m) => m.modelKey !== detailModel().modelKey && m.modelKey.includes("/")) ?? catalog.models[0]!
    const key = model.modelKey
    const first = await fetch(`${service.baseUrl}/models?model=${encodeURIComponent(key)}`, { redirect: "manual", headers: { "x-forwarded-for": nextVisitorIp() } })
    expect(first.status).toBe(301)
    expect(new URL(first.headers.get("location")!, `${service.baseUrl}/models`).href).toBe(modelUrl(key))
    const upper = key.toUpperCase()
    expect(upper).not.toBe(key)
    const cased = await fetch(`${service.baseUrl}${modelPath(upper)}`, { redirect: "manual", headers: { "x-forwarded-for": nextVisitorIp() } })
    expect(cased.status).toBe(301)
    expect(new URL(cased.headers.get("location")!, `${service.baseUrl}${modelPath(upper)}`).href).toBe(modelUrl(key))

    const { page } = await openPage(browser, SUITE, "addresses")
    for (const address of [`/models?model=${encodeURIComponent(key)}`, `/models?model=${key}`, modelPath(upper)]) {
      const response = await page.goto(`${service.baseUrl}${address}`)
      expect(response?.status(), address).toBe(200)
      expect(page.url(), address).toBe(modelUrl(key))
      expect(await page.locator("#model-detail-heading").textContent(), address).toBe(`${key} (${model.displayName})`)
      expect(await page.getByTestId("detail-output-listed").textContent(), address).toBe(plainNumber(model.currentPrice.outputPriceUsdPerMillion))
    }

    const missing = await page.goto(`${service.baseUrl}/models/nope/nothing`)
    expect(missing?.status()).toBe(404)
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("No such page")
    expect(await page.locator("main").textContent()).toContain("The catalog has no model with the key “nope/nothing”.")
    const unknown = await page.goto(`${service.baseUrl}/models?model=no-such/model`)
    expect(unknown?.status()).toBe(404)
    expect(page.url()).toBe(`${service.baseUrl}/models/no-such/model`)
  })
})

describe("accessibility and phone width", () => {
  const axePath = require.resolve("axe-core/axe.min.js")

  it("passes axe-core's WCAG 2 A and AA rules on /models, a model's page and an embedding model's page", { timeout: 120_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "axe")
    const embedding = catalog.embeddingModels[0]!
    for (const address of ["/models", modelPath(detailModel().modelKey), modelPath(embedding.modelKey)]) {
      expect((await page.goto(`${service.baseUrl}${address}`))?.status(), address).toBe(200)
      await page.locator("main h1").waitFor()
      // Evaluated through the DevTools protocol: the page's policy (script-src 'self') refuses an injected <script>.
      await page.evaluate(Fs.readFileSync(axePath, "utf8"))
      const violations = await page.evaluate<ReadonlyArray<{ id: string; impact: string | null; help: string; nodes: ReadonlyArray<string> }>>(`
        axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } }).then((result) =>
          result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target) + ": " + (n.failureSummary || "")) }))
        )
      `)
      expect(violations, `${address}: ${JSON.stringify(violations, null, 2)}`).toEqual([])
    }
  })

  it("fits a phone (360 px): no horizontal scroll on /models or a model's page, and the search box works", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "phone width", { width: 360, height: 740 })
    const overflow = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    await openModels(page)
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(catalog.models.length)
    expect(await overflow()).toBeLessThanOrEqual(0)
    const search = page.getByLabel("Search models")
    const box = (await search.boundingBox())!
    expect(box.x).toBeGreaterThanOrEqual(0)
    expect(box.x + box.width).toBeLessThanOrEqual(360)
    expect(box.width).toBeGreaterThan(150)
    const model = catalog.models[0]!
    await search.click()
    await page.keyboard.type(model.modelKey)
    await expect.poll(() => rowKeys(page)).toContain(model.modelKey)
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${matching(model.modelKey).length} of ${catalog.models.length} models`)
    expect(await overflow()).toBeLessThanOrEqual(0)

    // The model's page fits too, its chart included.
    await page.locator(`tr[data-model="${model.modelKey}"] a.model-key`).click()
    await page.waitForURL((url) => url.pathname === modelPath(model.modelKey))
    await page.getByTestId("price-history-chart").locator(".chart-zoom").waitFor()
    expect(await overflow()).toBeLessThanOrEqual(0)
    await page.goto(modelUrl(detailModel().modelKey))
    await page.getByTestId("price-history-chart").locator(".chart-zoom").waitFor()
    expect(await overflow()).toBeLessThanOrEqual(0)
  })
})
