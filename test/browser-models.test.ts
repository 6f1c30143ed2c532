/**
 * `/models`, the price browser (DESIGN.md section 13), in Debian's chromium against a real service on a scratch
 * database: every row, search, sort, listed and billed prices, a model's detail with its price history and a
 * price-at lookup, the `?model=` deep link, and phone width. Each figure the page shows is checked against the
 * API's own JSON, and billed prices against exact bigint arithmetic on the pricing list's wei.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CatalogResponse, PriceAtResponse, PriceHistoryResponse, PricingResponse } from "../domain/oracle/schemas.ts"
import { formatScaled, parseScaled, plainNumber } from "../web/shared/format.ts"
import { launchBrowser, nextVisitorIp, openPage, type PagesService, startPagesService } from "./support/browser.ts"

const SUITE = "browser-models"

let service: PagesService
let browser: Browser
let catalog: CatalogResponse
let pricing: PricingResponse

type Entry = CatalogResponse["models"][number]

/** The API's own answer, as a visitor of its own: the rate limit is per address, so a fresh one is never refused. */
const api = async <A>(path: string, expectStatus = 200): Promise<{ status: number; body: A }> => {
  const response = await fetch(`${service.baseUrl}${path}`, { headers: { "x-forwarded-for": nextVisitorIp() } })
  expect(response.status, `${path}`).toBe(expectStatus)
  return { status: response.status, body: (await response.json()) as A }
}

/** Billed USD per million, written here from the definition: wei x peg / 10^18, exact, 6 places (truncated). */
const billed = (wei: string) => formatScaled(((BigInt(wei) * parseScaled(plainNumber(pricing.pegUsd))) / 10n ** 18n).toString(), 18, 6)

const matching = (text: string) => {
  const needle = text.trim().toLowerCase()
  return catalog.models.filter((m) => [m.modelKey, m.displayName, m.provider.key, m.provider.name, m.family].some((f) => f.toLowerCase().includes(needle)))
}

const rowKeys = (page: Page) => page.locator("[data-testid=models-table] tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-model") ?? ""))

const openModels = async (page: Page, query = "") => {
  await page.goto(`${service.baseUrl}/models${query}`)
  await page.locator("[data-testid=model-count]").waitFor()
}

/** A model whose list price changed over time (so a price-at lookup can tell a past price from today's), if any. */
const detailModel = (): Entry =>
  catalog.models.find((m) => m.modelKey === "deepseek/deepseek-v4-pro") ??
  catalog.models.find((m) => m.indexMember) ??
  catalog.models[0]!

beforeAll(async () => {
  service = await startPagesService()
  browser = await launchBrowser()
  catalog = (await api<CatalogResponse>("/v1/oracle/catalog")).body
  pricing = (await api<PricingResponse>("/v1/oracle/pricing")).body
  expect(catalog.models.length).toBeGreaterThan(1)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
}, 180_000)

describe("the price browser at /models", () => {
  it("lists every catalog model, and the search narrows to exactly the matching models", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "search")
    await openModels(page)
    const total = catalog.models.length
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(total)
    expect(new Set(await rowKeys(page))).toEqual(new Set(catalog.models.map((m) => m.modelKey)))
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${total} of ${total} models`)

    // A key from the catalog that is also part of other models' keys (`openai/gpt-5` in `openai/gpt-5-mini`), typed in upper case.
    const term = [...catalog.models]
      .map((m) => ({ key: m.modelKey, hits: matching(m.modelKey).length }))
      .sort((a, b) => b.hits - a.hits || a.key.localeCompare(b.key))[0]!.key
    const expected = matching(term).map((m) => m.modelKey)
    expect(expected.length).toBeLessThan(total)
    const search = page.getByLabel("Search models")
    await search.fill(term.toUpperCase())
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${expected.length} of ${total} models`)
    expect(new Set(await rowKeys(page))).toEqual(new Set(expected))

    // A provider's name finds its models too.
    const provider = catalog.models[0]!.provider
    await search.fill(provider.name.toLowerCase())
    const byProvider = matching(provider.name).map((m) => m.modelKey)
    await expect.poll(() => rowKeys(page).then((keys) => new Set(keys))).toEqual(new Set(byProvider))

    await search.fill("no-such-model-anywhere")
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`0 of ${total} models`)
    await expect.poll(() => page.getByTestId("no-match").textContent()).toContain("No model matches")

    await search.fill("")
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(total)
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${total} of ${total} models`)
  })

  it("sorts by the listed input price, ascending then descending, and says so in aria-sort", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "sort")
    await openModels(page)
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(catalog.models.length)
    const price = new Map(catalog.models.map((m) => [m.modelKey, m.currentPrice.inputPriceUsdPerMillion]))
    const header = page.locator("[data-testid=models-table] th[data-sort=input]")
    const button = header.getByRole("button")
    const prices = async () => (await rowKeys(page)).map((key) => price.get(key)!)

    await button.click()
    await expect.poll(() => header.getAttribute("aria-sort")).toBe("ascending")
    const ascending = await prices()
    expect(ascending).toHaveLength(catalog.models.length)
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b))
    // Only one column claims the sort.
    expect(await page.locator("[data-testid=models-table] th[aria-sort]").count()).toBe(1)

    await button.click()
    await expect.poll(() => header.getAttribute("aria-sort")).toBe("descending")
    const descending = await prices()
    expect(descending).toEqual([...descending].sort((a, b) => b - a))
    expect(descending[0]).toBe(Math.max(...price.values()))
    expect(descending.at(-1)).toBe(Math.min(...price.values()))

    // The cells show the API's figures in that order.
    const cells = await page.locator("[data-testid=models-table] tbody td[data-col=input-listed]").allTextContents()
    expect(cells).toEqual(descending.map(plainNumber))
  })

  it("shows each model's listed prices as the API sends them and its billed prices exactly from the pricing list's wei", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "listed and billed")
    await openModels(page)
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(catalog.models.length)
    // Billed cells fill in once the pricing list arrives.
    await expect.poll(() => page.locator("[data-testid=models-table] tbody td[data-col=input-billed]").first().textContent()).toMatch(/^\d/)
    const rows = await page.locator("[data-testid=models-table] tbody tr").evaluateAll((trs) =>
      trs.map((tr) => {
        const cell = (col: string) => tr.querySelector(`td[data-col="${col}"]`)?.textContent ?? null
        return {
          key: tr.getAttribute("data-model") ?? "",
          inputListed: cell("input-listed"),
          inputBilled: cell("input-billed"),
          outputListed: cell("output-listed"),
          outputBilled: cell("output-billed"),
          cacheRead: cell("cache-read"),
          routable: cell("routable")
        }
      })
    )
    expect(rows).toHaveLength(catalog.models.length)
    const byKey = new Map(catalog.models.map((m) => [m.modelKey, m]))
    let fractional = 0
    for (const row of rows) {
      const entry = byKey.get(row.key)!
      const marked = pricing.models[row.key]!
      expect(row.inputListed, row.key).toBe(plainNumber(entry.currentPrice.inputPriceUsdPerMillion))
      expect(row.outputListed, row.key).toBe(plainNumber(entry.currentPrice.outputPriceUsdPerMillion))
      expect(row.inputBilled, row.key).toBe(billed(marked.input.weiPerMillion))
      expect(row.outputBilled, row.key).toBe(billed(marked.output.weiPerMillion))
      expect(row.routable, row.key).toBe(entry.integrated ? "yes" : "no")
      const cached = entry.cache?.cachedInput
      if (cached?.usdPerMillion != null && marked.cache?.cachedInput) {
        expect(row.cacheRead, row.key).toBe(`${plainNumber(cached.usdPerMillion)}billed ${billed(marked.cache.cachedInput.weiPerMillion)}`)
      }
      if (billed(marked.input.weiPerMillion).includes(".")) fractional++
    }
    // The billed price is the list price plus 5%, not a copy of it.
    expect(fractional).toBeGreaterThan(0)
    const one = catalog.models.find((m) => m.currentPrice.inputPriceUsdPerMillion === 5) ?? catalog.models[0]!
    expect(rows.find((r) => r.key === one.modelKey)!.inputBilled).not.toBe(rows.find((r) => r.key === one.modelKey)!.inputListed)
  })

  it("opens a model in place: ?model= in the URL, its heading focused, its price history charted and tabled, and a price-at lookup", { timeout: 120_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "detail")
    const model = detailModel()
    const key = model.modelKey
    await openModels(page)
    await page.locator(`[data-testid=models-table] tr[data-model="${key}"] a.model-key`).click()
    await expect.poll(() => new URL(page.url()).searchParams.get("model")).toBe(key)
    const heading = page.locator("#model-detail-heading")
    await expect.poll(() => heading.textContent()).toContain(key)
    await expect.poll(() => page.evaluate("document.activeElement && document.activeElement.id")).toBe("model-detail-heading")
    expect(await page.getByTestId("detail-input-listed").textContent()).toBe(plainNumber(model.currentPrice.inputPriceUsdPerMillion))
    expect(await page.getByTestId("detail-input-billed").textContent()).toBe(billed(pricing.models[key]!.input.weiPerMillion))

    const history = (await api<PriceHistoryResponse>(`/v1/oracle/models/${encodeURIComponent(key)}/price-history?granularity=per-revision`)).body
    expect(history.data.length).toBeGreaterThan(0)
    await page.locator("[data-testid=model-detail] .chart-canvas canvas").first().waitFor({ state: "visible", timeout: 30_000 })
    const table = page.getByTestId("price-history-table")
    await expect.poll(() => table.locator("tbody tr").count()).toBe(history.data.length)
    const firstRow = await table.locator("tbody tr").first().locator("td").allTextContents()
    expect(firstRow.slice(1, 3)).toEqual([plainNumber(history.data[0]!.inputPriceUsdPerMillion), plainNumber(history.data[0]!.outputPriceUsdPerMillion)])

    // A past moment whose price differs from today's when the history has one.
    const now = model.currentPrice.inputPriceUsdPerMillion
    const past = history.data.find((p) => p.inputPriceUsdPerMillion !== now) ?? history.data[0]!
    const day = past.date.slice(0, 10)
    const at = (await api<PriceAtResponse>(`/v1/oracle/models/${encodeURIComponent(key)}/price-at?date=${day}T12:00:00Z`)).body
    await page.getByLabel("Date (UTC)").fill(day)
    await page.getByLabel(/^Time \(UTC/).fill("12:00")
    await page.getByRole("button", { name: "Look up the price" }).click()
    await expect.poll(() => page.getByTestId("price-at-input").textContent(), { timeout: 15_000 }).toBe(plainNumber(at.inputPriceUsdPerMillion))
    expect(await page.getByTestId("price-at-output").textContent()).toBe(plainNumber(at.outputPriceUsdPerMillion))
    const source = await page.getByTestId("price-at-source").textContent()
    expect(source).toContain(at.source === "manifest" ? `revision #${at.revisionVersion}` : "catalog")

    // Before the model was priced: the API's own message.
    const refused = (await api<{ error: { message: string } }>(`/v1/oracle/models/${encodeURIComponent(key)}/price-at?date=2001-01-01`, 404)).body
    await page.getByLabel("Date (UTC)").fill("2001-01-01")
    await page.getByLabel(/^Time \(UTC/).fill("")
    await page.getByRole("button", { name: "Look up the price" }).click()
    await expect.poll(() => page.getByTestId("price-at-result").textContent(), { timeout: 15_000 }).toContain(refused.error.message)
  })

  it("shows each number's mark beside the vendor page it was read on, or what an inferred number was derived from", { timeout: 90_000 }, async () => {
    type Source = Entry["priceSources"]["input"]
    const numbers = (m: Entry): ReadonlyArray<readonly [string, Source | null]> => [
      ["input", m.priceSources.input],
      ["output", m.priceSources.output],
      ["cache read", m.priceSources.cachedInput],
      ["cache write, 5 min", m.priceSources.cacheWrite5m],
      ["cache write, 1 h", m.priceSources.cacheWrite1h],
      ["reasoning output", m.reasoning === null ? null : m.priceSources.reasoningOutput]
    ]
    // A model whose numbers carry both kinds of source, so both renderings are checked on one page.
    const model = catalog.models.find((m) => {
      const marks = numbers(m).flatMap(([, s]) => (s === null ? [] : [s.provenance]))
      return marks.includes("verified") && marks.includes("inferred")
    })!
    expect(model, "a model with verified and inferred numbers").toBeDefined()
    const { page } = await openPage(browser, SUITE, "sources")
    await openModels(page, `?model=${encodeURIComponent(model.modelKey)}`)
    const prices = page.getByTestId("detail-prices")
    await prices.waitFor()
    for (const [label, source] of numbers(model)) {
      if (source === null) continue
      const cells = prices.locator(`tr[data-price="${label}"] td`)
      expect(await cells.nth(2).textContent(), label).toBe(source.provenance)
      const shown = cells.nth(3)
      if (source.sourceUrl === null) {
        expect(await shown.textContent(), label).toBe(`derived: ${source.derivedFrom}`)
        expect(await shown.locator("a").count(), label).toBe(0)
      } else {
        expect(await shown.locator("a").getAttribute("href"), label).toBe(source.sourceUrl)
        expect(await shown.textContent(), label).toContain(`read ${source.checkedAt!.slice(0, 10)}`)
      }
    }
    if (model.priceSources.note !== null) expect(await page.getByTestId("price-note").textContent()).toContain(model.priceSources.note)

    // The catalog table has room for one mark pair per row: it links each page behind the input and output prices.
    await openModels(page)
    for (const m of catalog.models.slice(0, 12)) {
      const pages = [...new Set([m.priceSources.input.sourceUrl, m.priceSources.output.sourceUrl].filter((u) => u !== null))]
      const links = page.locator(`[data-testid=models-table] tr[data-model="${m.modelKey}"] td[data-col=mark] a`)
      expect(await links.evaluateAll((as) => as.map((a) => a.getAttribute("href"))), m.modelKey).toEqual(pages)
    }
  })

  it("opens the model named by /models?model=<key> when loaded directly", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "deep link")
    const model = catalog.models.find((m) => m.modelKey !== detailModel().modelKey && m.modelKey.includes("/")) ?? catalog.models[0]!
    await openModels(page, `?model=${encodeURIComponent(model.modelKey)}`)
    await expect.poll(() => page.locator("#model-detail-heading").textContent()).toContain(model.modelKey)
    expect(await page.getByTestId("detail-output-listed").textContent()).toBe(plainNumber(model.currentPrice.outputPriceUsdPerMillion))
    expect(await page.locator(`tr[data-model="${model.modelKey}"] a.model-key`).getAttribute("aria-current")).toBe("true")
    await page.locator("[data-testid=model-detail] .chart-canvas canvas").first().waitFor({ state: "visible", timeout: 30_000 })

    // The unencoded form the index page's links may produce works too, and an unknown key says so.
    await openModels(page, "?model=no-such/model")
    await expect.poll(() => page.locator("#model-detail-heading").textContent()).toContain("No model no-such/model")
  })

  it("lists the embedding models apart, under their own heading: input price listed and billed, and dimensions", { timeout: 90_000 }, async () => {
    const embeddings = catalog.embeddingModels
    expect(embeddings.length, "the bundled cards carry embedding models").toBeGreaterThan(0)
    const { page } = await openPage(browser, SUITE, "embedding models")
    await openModels(page)
    const section = page.getByTestId("embedding-models")
    await expect.poll(() => section.getByRole("heading", { level: 2 }).textContent()).toBe("Embedding models")
    // The chat table is unchanged: exactly the catalog's models, none of the embedding models.
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(catalog.models.length)
    const chatKeys = new Set(await rowKeys(page))
    expect(embeddings.filter((m) => chatKeys.has(m.modelKey))).toEqual([])
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${catalog.models.length} of ${catalog.models.length} models`)
    // Billed cells fill in once the pricing list arrives.
    await expect.poll(() => section.locator("tbody td[data-col=input-billed]").first().textContent()).toMatch(/^\d/)
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
  })

  it("opens an embedding model in place by /models?model=<key>: its price now, its vectors and its dated prices", { timeout: 90_000 }, async () => {
    const entry = catalog.embeddingModels.find((m) => m.priceHistory.length > 1) ?? catalog.embeddingModels[0]!
    const { page } = await openPage(browser, SUITE, "embedding detail")
    await openModels(page, `?model=${encodeURIComponent(entry.modelKey)}`)
    await expect.poll(() => page.locator("#model-detail-heading").textContent()).toContain(entry.modelKey)
    expect(await page.getByTestId("detail-input-listed").textContent()).toBe(plainNumber(entry.currentPrice.inputPriceUsdPerMillion))
    await expect.poll(() => page.getByTestId("detail-input-billed").textContent()).toBe(billed(pricing.embeddingModels[entry.modelKey]!.input.weiPerMillion))
    expect(await page.getByTestId("detail-dimensions").textContent()).toContain(entry.dimensions!.toLocaleString("en"))
    const history = page.getByTestId("embedding-price-history")
    expect(await history.locator("tbody tr").count()).toBe(entry.priceHistory.length)
    const prices = await history.locator("tbody tr td:nth-child(2)").allTextContents()
    expect(prices).toEqual(entry.priceHistory.map((p) => plainNumber(p.inputPriceUsdPerMillion)))
    expect(await page.locator(`[data-testid=embedding-models-table] tr[data-model="${entry.modelKey}"] a.model-key`).getAttribute("aria-current")).toBe("true")
  })

  it("fits a phone: no horizontal overflow of the page, and the search box works", { timeout: 90_000 }, async () => {
    const { page } = await openPage(browser, SUITE, "phone width", { width: 390, height: 844 })
    await openModels(page)
    await expect.poll(() => rowKeys(page).then((keys) => keys.length)).toBe(catalog.models.length)
    expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(391)
    const search = page.getByLabel("Search models")
    const box = (await search.boundingBox())!
    expect(box.x).toBeGreaterThanOrEqual(0)
    expect(box.x + box.width).toBeLessThanOrEqual(390)
    expect(box.width).toBeGreaterThan(150)
    const model = catalog.models[0]!
    await search.click()
    await page.keyboard.type(model.modelKey)
    await expect.poll(() => rowKeys(page)).toContain(model.modelKey)
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe(`${matching(model.modelKey).length} of ${catalog.models.length} models`)

    // The detail fits too.
    await page.locator(`tr[data-model="${model.modelKey}"] a.model-key`).click()
    await page.locator("[data-testid=model-detail] .chart-canvas canvas").first().waitFor({ state: "visible", timeout: 30_000 })
    expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(391)
  })
})
