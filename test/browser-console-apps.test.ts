/**
 * The console's Connected apps and Points pages in a real browser against a real service whose mail goes to a real
 * SMTP server. A user connects an app whose token is shown once and works over HTTP, freezes it (the app is refused),
 * lifts the freeze and revokes it (refused for good), with the page showing each state and a refusal beside its grant.
 * Then a user copies their referral link, a second visitor follows it in another browser context, lands on the index
 * with the referral cookie and signs up, and the first user's dashboard counts the click and the signup. Every figure
 * on the page is compared with what the API answers.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nextVisitorIp, openPage, type PagesService } from "./support/browser.ts"
import { signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-console-apps"
const MAINTAINER_TOKEN = "console-apps-suite-maintainer"
let service: PagesService
let browser: Browser
let mailbox: Mailbox

beforeAll(async () => void ({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: MAINTAINER_TOKEN, simulator: false })), 180_000)
afterAll(() => stopConsoleStack({ service, browser, mailbox }))

/** Signs in on the console's sign-in form with the code the mail carries. */
const signIn = (page: Page, email: string) => signInByCode(page, mailbox, email)

/** A read of the API with the page's own session cookie. */
const apiAs = async <A>(page: Page, path: string): Promise<A> => {
  const response = await page.request.get(`${service.baseUrl}${path}`)
  expect(response.status(), path).toBe(200)
  return (await response.json()) as A
}

/** What an app holding `token` gets from the account tools. */
const asApp = async (token: string) => {
  const response = await fetch(`${service.baseUrl}/v1/account-tools`, {
    headers: { authorization: `Bearer ${token}`, "x-forwarded-for": nextVisitorIp() }
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

interface Referrals {
  readonly referralCode: string
  readonly referralLink: string
  readonly clicks: number
  readonly signups: number
  readonly conversionRate: number
  readonly pointsEarned: number
  readonly referredUsers: ReadonlyArray<{ readonly displayName: string | null; readonly status: string; readonly at: string }>
}

interface Points {
  readonly total: number
  readonly tier: string
  readonly currentStreak: number
  readonly longestStreak: number
}

describe("the console's connected apps", () => {
  it("connects an app whose token is shown once and works, freezes, lifts the freeze and revokes it, each state shown", async (context) => {
    const { page, context: browserContext } = await openPage(browser, SUITE, context.task.name)
    await browserContext.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.baseUrl })
    await page.goto(`${service.baseUrl}/console/apps`)
    await signIn(page, `apps-${Date.now()}@example.com`)
    await expect.poll(() => page.getByText("No app is connected").count(), { timeout: 10_000 }).toBe(1)
    expect(await page.getByTestId("grant-context").textContent()).toContain("personal account")

    // A read-only app: the token is shown once, copies exactly, and reaches the account tools over HTTP.
    await page.getByLabel("App name").fill("my agent")
    expect(await page.getByLabel(/Read the account/).isChecked()).toBe(true)
    expect(await page.getByLabel(/Act on the account/).isChecked()).toBe(false)
    await page.getByRole("button", { name: "Connect the app" }).click()
    const token = (await page.getByTestId("new-token").textContent({ timeout: 10_000 }))!
    expect(token).toMatch(/^cfa_live_[A-Za-z0-9_-]{43,}$/)
    await page.getByTestId("new-token-panel").getByRole("button", { name: "Copy" }).click()
    await expect.poll(() => page.getByTestId("new-token-panel").getByRole("button", { name: "Copied" }).count()).toBe(1)
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(token)
    const working = await asApp(token)
    expect(working.status).toBe(200)
    expect(working.body.appName).toBe("my agent")
    expect(working.body.context).toBeNull()
    expect(working.body.tools.map((t: { name: string }) => t.name)).toContain("account.overview")

    const listed = await apiAs<{ data: ReadonlyArray<{ id: string; prefix: string; scopes: ReadonlyArray<string>; status: string }> }>(page, "/v1/apps/grants")
    expect(listed.data).toHaveLength(1)
    const grant = listed.data[0]!
    const row = page.locator(`tr[data-grant="${grant.id}"]`)
    await expect.poll(() => row.getByTestId("grant-state").textContent(), { timeout: 10_000 }).toBe("active")
    expect(await row.getByTestId("grant-scopes").textContent()).toBe(grant.scopes.join(", "))
    expect(await row.textContent()).toContain(grant.prefix)
    expect(await row.getByRole("button").allTextContents()).toEqual(["Freeze", "Revoke"])

    // Dismissed, the token is nowhere on the page, nor after a reload.
    await page.getByRole("button", { name: "I have saved it" }).click()
    expect(await page.content()).not.toContain(token)
    await page.reload()
    await row.getByTestId("grant-state").waitFor({ timeout: 10_000 })
    expect(await page.content()).not.toContain(token)

    // Frozen: the app is refused (403) and only lifting the freeze or revoking is offered.
    await row.getByRole("button", { name: "Freeze" }).click()
    await expect.poll(() => row.getByTestId("grant-state").textContent(), { timeout: 10_000 }).toBe("frozen")
    const frozen = await asApp(token)
    expect(frozen.status).toBe(403)
    expect(frozen.body.error.code).toBe("app_grant_frozen")
    expect(await row.getByRole("button").allTextContents()).toEqual(["Lift the freeze", "Revoke"])

    await row.getByRole("button", { name: "Lift the freeze" }).click()
    await expect.poll(() => row.getByTestId("grant-state").textContent(), { timeout: 10_000 }).toBe("active")
    expect((await asApp(token)).status).toBe(200)
    const used = await apiAs<{ data: ReadonlyArray<{ id: string; lastUsedAt: string | null }> }>(page, "/v1/apps/grants")
    expect(used.data.find((g) => g.id === grant.id)!.lastUsedAt).not.toBeNull()

    // Revoking asks first; cancelled, nothing changes; confirmed, the app is refused for good and no action is left.
    await row.getByRole("button", { name: "Revoke" }).click()
    await row.getByRole("button", { name: "Cancel" }).click()
    expect(await row.getByTestId("grant-state").textContent()).toBe("active")
    expect((await asApp(token)).status).toBe(200)
    await row.getByRole("button", { name: "Revoke" }).click()
    await row.getByRole("button", { name: "Yes, revoke" }).click()
    await expect.poll(() => row.getByTestId("grant-state").textContent(), { timeout: 10_000 }).toBe("revoked")
    const revoked = await asApp(token)
    expect(revoked.status).toBe(401)
    expect(revoked.body.error.code).toBe("app_grant_revoked")
    expect(await row.getByRole("button").count()).toBe(0)

    // A grant that may act, revoked elsewhere while this page still shows it active: the server's refusal is shown
    // beside it, and the list then shows the state the server holds.
    await page.getByLabel("App name").fill("budget bot")
    await page.getByLabel(/Act on the account/).check()
    await page.getByRole("button", { name: "Connect the app" }).click()
    const second = (await page.getByTestId("new-token").textContent({ timeout: 10_000 }))!
    expect(second).not.toBe(token)
    const both = await apiAs<{ data: ReadonlyArray<{ id: string; appName: string; scopes: ReadonlyArray<string> }> }>(page, "/v1/apps/grants")
    const bot = both.data.find((g) => g.appName === "budget bot")!
    expect(bot.scopes).toEqual(["account:read", "account:act"])
    const botRow = page.locator(`tr[data-grant="${bot.id}"]`)
    await expect.poll(() => botRow.getByTestId("grant-scopes").textContent(), { timeout: 10_000 }).toBe("account:read, account:act")
    const elsewhere = await page.request.post(`${service.baseUrl}/v1/apps/grants/${bot.id}/revoke`, { headers: { "x-cf-console": "1" } })
    expect(elsewhere.status()).toBe(200)
    await botRow.getByRole("button", { name: "Freeze" }).click()
    await expect.poll(() => botRow.getByRole("alert").textContent(), { timeout: 10_000 }).toMatch(/revoked/)
    await page.reload()
    await expect.poll(() => botRow.getByTestId("grant-state").textContent(), { timeout: 10_000 }).toBe("revoked")
  }, 120_000)
})

describe("the console's points and referrals", () => {
  it("shows the API's points, and counts the click and the signup of a visitor who followed the copied referral link", async (context) => {
    const { page, context: browserContext } = await openPage(browser, SUITE, context.task.name)
    await browserContext.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.baseUrl })
    await page.goto(`${service.baseUrl}/console/points`)
    await signIn(page, `referrer-${Date.now()}@example.com`)

    // Total, tier, the next tier and streaks as the API has them.
    const points = await apiAs<Points>(page, "/v1/points")
    await expect.poll(() => page.getByTestId("points-total").textContent(), { timeout: 10_000 }).toBe(String(points.total))
    expect(await page.getByTestId("points-tier").textContent()).toBe(points.tier)
    expect(points.tier).toBe("Explorer")
    expect(await page.getByTestId("points-next-tier").textContent()).toBe(`Starter in ${500 - points.total} points (at 500)`)
    expect(await page.getByTestId("streak-current").textContent()).toBe(String(points.currentStreak))
    expect(await page.getByTestId("streak-longest").textContent()).toBe(String(points.longestStreak))

    // The history is the API's first page, entry for entry, with its amounts and UTC times.
    const history = await apiAs<{ data: ReadonlyArray<{ amount: number; source: string }>; nextCursor: string | null }>(page, "/v1/points/history?limit=20")
    const rows = page.getByTestId("history-table").locator("tbody tr")
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(history.data.length)
    for (const [index, entry] of history.data.entries()) {
      const cells = await rows.nth(index).locator("td").allTextContents()
      expect(cells[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/)
      expect(cells[2]).toBe(`+${entry.amount}`)
      expect(cells[3]).toBe(entry.source)
    }
    expect(history.data.reduce((sum, entry) => sum + entry.amount, 0)).toBe(points.total)
    expect(await page.getByRole("button", { name: "Older" }).isDisabled()).toBe(history.nextCursor === null)

    // The leaderboard is the API's.
    const board = await apiAs<{ data: ReadonlyArray<{ displayName: string; points: number }> }>(page, "/v1/points/leaderboard")
    if (board.data.length === 0) expect(await page.getByText("Nobody is ranked yet").count()).toBe(1)
    else await expect.poll(() => page.getByTestId("leaderboard-table").locator("tbody tr").count(), { timeout: 10_000 }).toBe(board.data.length)

    // Nobody referred yet; the link is the API's, and the copy button copies exactly what the page shows.
    const before = await apiAs<Referrals>(page, "/v1/referrals")
    expect(before.clicks).toBe(0)
    await expect.poll(() => page.getByTestId("referral-clicks").textContent(), { timeout: 10_000 }).toBe("0")
    expect(await page.getByText("Nobody yet").count()).toBe(1)
    const link = await page.getByTestId("referral-link").inputValue()
    expect(link.endsWith(before.referralLink.replace(/^https?:\/\/[^/]+/, ""))).toBe(true)
    expect(link).toBe(`${service.baseUrl}/r?c=${before.referralCode}`)
    await page.getByRole("button", { name: "Copy link" }).click()
    await expect.poll(() => page.getByRole("button", { name: "Copied" }).count()).toBe(1)
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(link)

    // A visitor in another browser follows it: the index with the cookie, then a sign-up by e-mail code.
    const visitor = await openPage(browser, SUITE, `${context.task.name} (visitor)`)
    await visitor.page.goto(link)
    expect(new URL(visitor.page.url()).pathname).toBe("/")
    await expect.poll(() => visitor.page.getByRole("heading", { level: 1 }).textContent(), { timeout: 10_000 }).toBe("The Standard Compute Unit")
    const cookies = await visitor.context.cookies(service.baseUrl)
    expect(cookies.find((c) => c.name === "cf_ref")?.value).toBe(before.referralCode)
    await visitor.page.goto(`${service.baseUrl}/console/points`)
    await signIn(visitor.page, `referred-${Date.now()}@example.com`)
    const welcomed = await apiAs<{ data: ReadonlyArray<{ type: string; amount: number }> }>(visitor.page, "/v1/points/history")
    expect(welcomed.data.filter((entry) => entry.type === "referral_welcome").map((entry) => entry.amount)).toEqual([50])
    const visitorPoints = await apiAs<Points>(visitor.page, "/v1/points")
    await expect.poll(() => visitor.page.getByTestId("points-total").textContent(), { timeout: 10_000 }).toBe(String(visitorPoints.total))

    // Back on the referrer's page: the click and the signup are counted, as the API counts them.
    await page.getByRole("button", { name: "Refresh the figures" }).click()
    await expect.poll(() => page.getByTestId("referral-signups").textContent(), { timeout: 10_000 }).toBe("1")
    const after = await apiAs<Referrals>(page, "/v1/referrals")
    expect(after.clicks).toBe(1)
    expect(after.signups).toBe(1)
    expect(await page.getByTestId("referral-clicks").textContent()).toBe(String(after.clicks))
    expect(await page.getByTestId("referral-conversion").getAttribute("data-value")).toBe(String(after.conversionRate))
    expect(await page.getByTestId("referral-conversion").textContent()).toBe("100 %")
    expect(await page.getByTestId("referral-points").textContent()).toBe(String(after.pointsEarned))
    expect(after.pointsEarned).toBe(250)
    const referred = page.getByTestId("referred-table").locator("tbody tr")
    expect(await referred.count()).toBe(after.referredUsers.length)
    for (const [index, user] of after.referredUsers.entries()) {
      const cells = await referred.nth(index).locator("td").allTextContents()
      expect(cells[0]).toBe(user.displayName ?? "a visitor, not signed up yet")
      expect(cells[1]).toBe(user.status === "confirmed" ? "signed up" : "clicked, pending")
    }
    expect(after.referredUsers.filter((user) => user.status === "confirmed")).toHaveLength(1)

    // The referrer's own total now carries the 250, on the page as in the API.
    await page.reload()
    const now = await apiAs<Points>(page, "/v1/points")
    expect(now.total).toBe(points.total + 250)
    await expect.poll(() => page.getByTestId("points-total").textContent(), { timeout: 10_000 }).toBe(String(now.total))
  }, 120_000)

  it("fits a phone: the points and apps pages scroll no wider than the screen, every control labelled", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name, { width: 390, height: 844 })
    await page.goto(`${service.baseUrl}/console/apps`)
    await signIn(page, `phone-${Date.now()}@example.com`)
    for (const route of ["apps", "points"]) {
      await page.goto(`${service.baseUrl}/console/${route}`)
      await page.getByRole("heading", { level: 1 }).waitFor({ timeout: 10_000 })
      if (route === "apps") {
        // With a token shown and a grant listed, the widest this page gets.
        await page.getByLabel("App name").fill("phone app")
        await page.getByRole("button", { name: "Connect the app" }).click()
        await page.getByTestId("new-token").waitFor({ timeout: 10_000 })
        await page.getByTestId("grants-table").waitFor({ timeout: 10_000 })
      } else {
        await page.getByTestId("history-table").waitFor({ timeout: 10_000 })
        await page.getByTestId("referral-link").waitFor({ timeout: 10_000 })
      }
      // Nothing scrolls sideways, the page's own content included; tables scroll inside their own box.
      const widths = (await page.evaluate(
        "({ scroll: document.documentElement.scrollWidth, main: document.getElementById('main').scrollWidth, client: document.documentElement.clientWidth })"
      )) as { scroll: number; main: number; client: number }
      expect(widths.scroll, route).toBeLessThanOrEqual(widths.client + 1)
      expect(widths.main, route).toBeLessThanOrEqual(widths.client + 1)
      const unlabelled = await page.evaluate(
        "[...document.querySelectorAll('main input')].filter((i) => i.labels === null || i.labels.length === 0).map((i) => i.id)"
      )
      expect(unlabelled, route).toEqual([])
    }
  }, 60_000)
})
