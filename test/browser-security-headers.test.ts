/**
 * The security headers (src/http/securityHeaders.ts) in a real browser against a real service: a page of another
 * origin cannot frame the console or a public page (frame-ancestors 'none'), while the same page frames an answer
 * without them (the control: the harness does see a frame that loads); and under their policies every public page
 * hydrates (the chart zooms), the API viewers draw, and the console signs in by e-mail code and goes through its
 * pages, with not one Content-Security-Policy violation reported by chromium.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Frame, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openPage, type PagesService } from "./support/browser.ts"
import { signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-security-headers"
let service: PagesService
let browser: Browser
let mailbox: Mailbox
let otherSite: Server
let otherOrigin: string

beforeAll(async () => {
  ;({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: "security-headers-maintainer", simulator: false }))
  // Another site: a page that frames whatever `?src=` names.
  otherSite = createServer((request, response) => {
    const src = new URL(request.url ?? "/", "http://x").searchParams.get("src") ?? ""
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    response.end(`<!doctype html><title>another site</title><iframe id="framed" src="${src.replace(/"/g, "&quot;")}" width="800" height="600"></iframe>`)
  })
  await new Promise<void>((resolve) => otherSite.listen(0, "127.0.0.1", resolve))
  otherOrigin = `http://localhost:${(otherSite.address() as AddressInfo).port}`
}, 300_000)

afterAll(async () => {
  await new Promise((resolve) => otherSite?.close(resolve))
  await stopConsoleStack({ service, browser, mailbox })
})

/**
 * A page whose Content-Security-Policy violations are collected twice: as chromium reports them on the console
 * ("Refused to ...") and as `securitypolicyviolation` events in every document it opens.
 */
const watchedPage = async (name: string): Promise<{ page: Page; violations: () => Promise<ReadonlyArray<string>> }> => {
  const { page, context } = await openPage(browser, SUITE, name)
  const reported: Array<string> = []
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) reported.push(`console: ${message.text()}`)
  })
  // Run by the DevTools protocol in every document before its own scripts (the policy does not apply to it).
  await context.addInitScript(`
    window.__violations = []
    document.addEventListener("securitypolicyviolation", (event) =>
      window.__violations.push(event.violatedDirective + " " + event.blockedURI + " " + event.sample))
  `)
  const violations = async () => [
    ...reported,
    ...((await page.evaluate("window.__violations ?? []").catch(() => [])) as ReadonlyArray<string>).map((v) => `event: ${v}`)
  ]
  return { page, violations }
}

/** True when the page's inline `<style>` is in force (a blocked one leaves no rules). */
const inlineStyleApplies = (page: Page) =>
  page.evaluate(`Array.from(document.styleSheets).some((sheet) => sheet.ownerNode && sheet.ownerNode.tagName === "STYLE" && sheet.cssRules.length > 0)`)

/**
 * The frame the other site's page holds, once its load settled: the page's load event waits for its frame's (a refused
 * frame's too, on chromium's error document), and `goto` waits for the page's.
 */
const framedFrom = async (page: Page, src: string): Promise<Frame> => {
  await page.goto(`${otherOrigin}/?src=${encodeURIComponent(src)}`, { waitUntil: "load" })
  const frame = page.frames().find((candidate) => candidate !== page.mainFrame())
  expect(frame, "the iframe's frame").toBeDefined()
  return frame!
}

const frameText = (frame: Frame) => frame.evaluate("document.body ? document.body.innerText : ''").catch(() => "") as Promise<string>

describe("another site cannot frame the service's pages", () => {
  it("the console and a public page are refused in another origin's frame (frame-ancestors); an answer without the headers is not", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    const messages: Array<string> = []
    page.on("console", (message) => messages.push(message.text()))

    // The control: the same harness sees a frame of the service that has no policy load its content.
    const control = await framedFrom(page, `${service.baseUrl}/robots.txt`)
    await expect.poll(() => frameText(control), { timeout: 10_000 }).toContain("User-agent")

    for (const path of ["/console", "/console/keys", "/"]) {
      const framed = await framedFrom(page, `${service.baseUrl}${path}`)
      // Chromium puts its error document in place of the refused one: nothing of the service's page is there.
      await expect.poll(() => messages.some((text) => text.includes("frame-ancestors")), { timeout: 10_000 }).toBe(true)
      expect(framed.url(), path).not.toBe(`${service.baseUrl}${path}`)
      const text = await frameText(framed)
      expect(text, path).not.toMatch(/Sign in|Console|Standard Compute Unit/)
      expect(await framed.locator("#app, #main").count().catch(() => 0), path).toBe(0)
      messages.length = 0
    }
  }, 90_000)
})

describe("the pages work under their policy, with no violation", () => {
  it("every public page hydrates and the charts zoom; the 404 page and the API viewers draw", async (context) => {
    const { page, violations } = await watchedPage(context.task.name)
    const catalog = (await (await fetch(`${service.baseUrl}/v1/oracle/catalog`)).json()) as { models: ReadonlyArray<{ modelKey: string }> }
    const sitemap = await (await fetch(`${service.baseUrl}/sitemap.xml`)).text()
    const listed = [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((match) => new URL(match[1]!).pathname)
    const modelPage = listed.find((path) => path.startsWith("/models/"))
    const revisionPage = listed.find((path) => /^\/revisions\/\d+$/.test(path))
    expect(catalog.models.length).toBeGreaterThan(0)
    expect(modelPage, "a model's page in the sitemap").toBeDefined()
    expect(revisionPage, "a revision's page in the sitemap").toBeDefined()

    for (const path of ["/", "/models", modelPage!, "/revisions", revisionPage!, "/methodology", "/models/no-such/model"]) {
      const response = await page.goto(`${service.baseUrl}${path}`)
      expect(response?.status(), path).toBe(path === "/models/no-such/model" ? 404 : 200)
      expect(response?.headers()["content-security-policy"], path).toContain("frame-ancestors 'none'")
      await page.waitForLoadState("networkidle")
      expect(await violations(), path).toEqual([])
      expect(await inlineStyleApplies(page), `${path}: the inline stylesheet applies`).toBe(true)
      // The bundle ran and hydrated: Preact keeps the tree it rendered on its root element.
      await expect.poll(() => page.evaluate("document.getElementById('app')?.__k != null"), { timeout: 10_000 }).toBe(true)
      expect(await violations(), path).toEqual([])
    }

    // The index's chart and a model's chart zoom: the hydrated bundle runs under script-src 'self'.
    for (const path of ["/", modelPage!]) {
      await page.goto(`${service.baseUrl}${path}`)
      const zoom = page.locator(".chart-zoom").first()
      await zoom.waitFor({ timeout: 15_000 })
      expect(await zoom.getByRole("button", { name: "All" }).getAttribute("aria-pressed"), path).toBe("true")
      const narrower = zoom.getByRole("button", { name: "1 year" })
      await narrower.click()
      await expect.poll(() => narrower.getAttribute("aria-pressed"), { timeout: 10_000 }).toBe("true")
      expect(await zoom.getByRole("button", { name: "All" }).getAttribute("aria-pressed"), path).toBe("false")
      expect(await violations(), path).toEqual([])
    }

    // The API viewers: Swagger UI inlined, allowed by its hashes, draws the document.
    for (const path of ["/v1/docs", "/v1/docs/inference"]) {
      const response = await page.goto(`${service.baseUrl}${path}`)
      expect(response?.headers()["content-security-policy"], path).toContain("frame-ancestors 'none'")
      await page.locator(".swagger-ui .info .title").waitFor({ timeout: 20_000 })
      await page.locator(".opblock").first().click()
      await page.locator(".opblock-body").first().waitFor({ timeout: 10_000 })
      expect(await violations(), path).toEqual([])
    }
  }, 180_000)

  it("the console signs in by e-mail code and goes through its pages; an invitation's page asks the API signed out", async (context) => {
    const { page, violations } = await watchedPage(context.task.name)
    await page.goto(`${service.baseUrl}/console/invitations/not-a-real-token`)
    // The page ran and asked the API (connect-src 'self') what the link holds.
    await page.getByText("Could not load the invitation").waitFor({ timeout: 15_000 })
    expect(await violations(), "invitation").toEqual([])

    await page.goto(`${service.baseUrl}/console/keys`)
    await signInByCode(page, mailbox, `csp-${Date.now()}@example.com`)
    for (const name of ["Overview", "Keys", "Limits", "Activity", "Logs"]) {
      const link = page.getByRole("link", { name, exact: true })
      if ((await link.count()) === 0) continue
      await link.first().click()
      await page.waitForLoadState("networkidle")
      expect(await violations(), name).toEqual([])
    }
    await page.reload()
    await page.getByTestId("signed-in-as").waitFor({ timeout: 10_000 })
    expect(await violations(), "reloaded").toEqual([])
  }, 120_000)
})
