/**
 * A new user's whole path, in one walk, in Debian's chromium against one real service (vendors simulated, mail to a
 * real SMTP capture): land on the index and open a model; sign up by e-mail; create a key and copy its secret;
 * receive credits; send a playground chat with that key and find its bill in the logs; create an organization,
 * invite a second person who accepts in a second browser, put them in a pool, issue a key for them, remove them and
 * see the key revoked; connect and revoke an app; and a third visitor who follows the user's referral link and signs
 * up is counted on the user's dashboard. The suites of each page go deeper; this proves the pages connect.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { credits } from "../web/console/format.ts"
import { formatScaled } from "../web/shared/format.ts"
import { nextVisitorIp, openPage, type PagesService } from "./support/browser.ts"
import { grantCredits, signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-walk"
const MAINTAINER_TOKEN = "walk-suite-maintainer"
let service: PagesService
let browser: Browser
let mailbox: Mailbox

beforeAll(async () => void ({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: MAINTAINER_TOKEN, simulator: true })), 180_000)
afterAll(() => stopConsoleStack({ service, browser, mailbox }))

/** Signs in on the sign-in form the page shows, with the code the real SMTP capture received. */
const signIn = (page: Page, email: string) => signInByCode(page, mailbox, email)

const invitationLinkFor = async (to: string): Promise<string> => {
  for (let waited = 0; waited < 5_000; waited += 25) {
    const mail = mailbox.delivered.filter((m) => m.to.includes(to) && /invited you/.test(m.raw)).at(-1)
    const link = mail === undefined ? undefined : /(https?:\/\/\S+\/console\/invitations\/cfi_[A-Za-z0-9_-]{43})/.exec(mail.raw.replace(/=\r?\n/g, ""))?.[1]
    if (link !== undefined) return link
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`no invitation was mailed to ${to}`)
}

const json = async <A,>(page: Page, path: string): Promise<A> => (await (await page.request.get(`${service.baseUrl}${path}`)).json()) as A

const nav = (page: Page, name: string) => page.getByRole("link", { name, exact: true }).click()

describe("a new user's whole path", () => {
  it("index and model, sign-up, key, credits, playground and its bill in the logs, organization, app, referral", async (context) => {
    const { page: a, context: browserContext } = await openPage(browser, SUITE, context.task.name)
    await browserContext.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.baseUrl })
    const stamp = Date.now()
    const emailA = `walker-${stamp}@example.com`
    const emailB = `teammate-${stamp}@example.com`
    const emailC = `referred-${stamp}@example.com`

    // The index, then a model of the catalogue and its price history.
    await a.goto(`${service.baseUrl}/`)
    await a.getByTestId("scu-usd").waitFor({ timeout: 15_000 })
    await nav(a, "Models")
    await a.getByTestId("model-count").waitFor({ timeout: 15_000 })
    const firstModel = (await a.locator("[data-testid=models-table] tbody tr").first().getAttribute("data-model"))!
    await a.getByLabel("Search models").fill(firstModel)
    await a.locator(`[data-testid=models-table] tr[data-model="${firstModel}"] a.model-key`).click()
    await expect.poll(() => a.locator("#model-detail-heading").textContent(), { timeout: 15_000 }).toContain(firstModel)
    await expect.poll(() => a.getByTestId("price-history-table").locator("tbody tr").count(), { timeout: 15_000 }).toBeGreaterThan(0)

    // Sign-up by e-mail code from the console.
    await a.goto(`${service.baseUrl}/console`)
    await signIn(a, emailA)
    const cfA = ((await json<{ cf_id: string }>(a, "/v1/me")).cf_id)

    // A key, its secret copied with the page's button: the clipboard holds exactly the secret shown.
    await nav(a, "Keys")
    await a.getByLabel("Label (optional)").fill("walk")
    await a.getByRole("button", { name: "Create key" }).click()
    const secret = (await a.getByTestId("new-secret").textContent({ timeout: 10_000 }))!
    await a.getByTestId("new-secret-panel").getByRole("button", { name: "Copy" }).click()
    await a.getByTestId("new-secret-panel").getByRole("button", { name: "Copied" }).waitFor({ timeout: 10_000 })
    expect(await a.evaluate("navigator.clipboard.readText()")).toBe(secret)
    await a.getByRole("button", { name: "I have saved it" }).click()

    // Credits arrive (an operator's grant); the overview shows them.
    await grantCredits(service, MAINTAINER_TOKEN, cfA, 10000000000000000000n)
    await nav(a, "Overview")
    await expect.poll(() => a.getByTestId("balance").textContent(), { timeout: 10_000 }).toBe("10")

    // The playground spends the key pasted into it; the chat streams and its bill follows.
    await nav(a, "Playground")
    await a.getByLabel("Or paste a key you have").fill(secret)
    await a.getByRole("button", { name: "Use this key" }).click()
    await a.getByTestId("playground-key").waitFor({ timeout: 10_000 })
    await a.getByLabel("Message").fill("Walk me through the exchange in one line")
    await a.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => a.getByTestId("playground-answer").textContent(), { timeout: 15_000 }).toMatch(/^Simulated reply from /)
    const charge = (await a.getByTestId("bill-charge").textContent({ timeout: 15_000 }))!
    const requestId = (await a.getByTestId("header-requestId").textContent())!

    // The logs list that request; its row opens the same bill.
    await nav(a, "Logs")
    const row = a.getByTestId("logs-table").locator(`tbody tr[data-id="${requestId}"]`)
    await row.waitFor({ timeout: 10_000 })
    await row.getByRole("button").first().click()
    await expect.poll(() => a.getByTestId("bill-charge").textContent(), { timeout: 10_000 }).toBe(charge)
    const stored = await json<{ bill: { chargeWei: string } }>(a, `/v1/generations/${requestId}`)
    expect(charge).toBe(formatScaled(stored.bill.chargeWei))
    // The keys page shows what that key has spent.
    await nav(a, "Keys")
    const walkKey = a.getByTestId("keys-table").locator("tbody tr", { hasText: "walk" })
    await expect.poll(() => walkKey.getByTestId("key-spent").textContent(), { timeout: 10_000 }).toBe(credits(stored.bill.chargeWei))

    // An organization; B is invited and accepts in a second browser, at phone width.
    await nav(a, "Organizations")
    await a.getByLabel("Organization name").fill("Walk Co")
    await a.getByRole("button", { name: "Create organization" }).click()
    await a.getByRole("heading", { level: 1, name: "Walk Co" }).waitFor({ timeout: 10_000 })
    const orgId = /\/console\/orgs\/(org_[a-z2-7]{12})$/.exec(new URL(a.url()).pathname)![1]!
    await a.getByLabel("E-mail address to invite").fill(emailB)
    await a.getByLabel("Role", { exact: true }).selectOption("member")
    await a.getByRole("button", { name: "Send invitation" }).click()
    const { page: b } = await openPage(browser, SUITE, `${context.task.name} (B)`, { width: 390, height: 844 })
    await b.goto(await invitationLinkFor(emailB))
    await signIn(b, emailB)
    await b.getByRole("button", { name: "Accept the invitation" }).click()
    await b.getByRole("heading", { level: 1, name: "Walk Co" }).waitFor({ timeout: 10_000 })
    const cfB = ((await json<{ cf_id: string }>(b, "/v1/me")).cf_id)

    // A puts B in a pool.
    await a.reload()
    await a.getByTestId("members-table").locator(`tr[data-member="${cfB}"]`).waitFor({ timeout: 10_000 })
    await a.getByLabel("Pool name").fill("Walkers")
    await a.getByLabel("Daily cap (UTC day), credits (optional)").fill("1")
    await a.getByRole("button", { name: "Create pool" }).click()
    const pool = a.locator("article.pool", { hasText: "Walkers" })
    await pool.getByLabel("Member to put in Walkers").selectOption(cfB)
    await pool.getByRole("button", { name: "Put in the pool" }).click()
    await expect.poll(() => pool.getByTestId("pool-members").textContent(), { timeout: 10_000 }).toContain(cfB)

    // Acting in the organization, A issues a key for B from the keys page.
    await a.getByLabel("Acting as").selectOption(orgId)
    await expect.poll(() => a.getByLabel("Acting as").inputValue(), { timeout: 10_000 }).toBe(orgId)
    await nav(a, "Keys")
    await a.getByLabel("Label (optional)").fill("for-b")
    await a.getByLabel("The key is for").selectOption(cfB)
    await a.getByRole("button", { name: "Create key" }).click()
    await a.getByTestId("new-secret").waitFor({ timeout: 10_000 })
    const keyForB = a.getByTestId("keys-table").locator("tbody tr", { hasText: "for-b" })
    await expect.poll(() => keyForB.getByTestId("key-holder").textContent(), { timeout: 10_000 }).toBe(cfB)
    expect(await keyForB.getByTestId("key-state").textContent()).toBe("active")

    // A removes B: B's key is revoked with it.
    await a.goto(`${service.baseUrl}/console/orgs/${orgId}`)
    const memberRow = a.getByTestId("members-table").locator(`tr[data-member="${cfB}"]`)
    await memberRow.getByRole("button", { name: "Remove" }).click()
    await memberRow.getByRole("button", { name: "Yes, remove" }).click()
    await expect.poll(() => memberRow.count(), { timeout: 10_000 }).toBe(0)
    await nav(a, "Keys")
    await expect.poll(() => keyForB.getByTestId("key-state").textContent(), { timeout: 10_000 }).toBe("revoked")

    // Back in the personal account: a connected app, created and revoked.
    await a.getByLabel("Acting as").selectOption("")
    await expect.poll(() => a.getByLabel("Acting as").inputValue(), { timeout: 10_000 }).toBe("")
    await nav(a, "Connected apps")
    await a.getByLabel("App name").fill("walk agent")
    await a.getByRole("button", { name: "Connect the app" }).click()
    const token = (await a.getByTestId("new-token").textContent({ timeout: 10_000 }))!
    expect(token).toMatch(/^cfa_live_/)
    await a.getByRole("button", { name: "I have saved it" }).click()
    const grantRow = a.locator("tr", { hasText: "walk agent" })
    await grantRow.getByRole("button", { name: "Revoke" }).click()
    await grantRow.getByRole("button", { name: "Yes, revoke" }).click()
    await expect.poll(() => grantRow.getByTestId("grant-state").textContent(), { timeout: 10_000 }).toBe("revoked")
    const refused = await fetch(`${service.baseUrl}/v1/account-tools`, { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": nextVisitorIp() } })
    expect(refused.status).toBe(401)

    // A third visitor follows A's referral link, lands on the index, and signs up: A's dashboard counts it.
    await nav(a, "Points")
    const link = await a.getByTestId("referral-link").inputValue()
    await expect.poll(() => a.getByTestId("referral-signups").textContent(), { timeout: 10_000 }).toBe("0")
    const { page: c, context: visitorContext } = await openPage(browser, SUITE, `${context.task.name} (C)`)
    await c.goto(link)
    await expect.poll(() => new URL(c.url()).pathname, { timeout: 10_000 }).toBe("/")
    expect((await visitorContext.cookies()).some((cookie) => cookie.name === "cf_ref")).toBe(true)
    await c.goto(`${service.baseUrl}/console`)
    await signIn(c, emailC)
    await a.reload()
    await expect.poll(() => a.getByTestId("referral-signups").textContent(), { timeout: 10_000 }).toBe("1")
    expect(await a.getByTestId("referral-clicks").textContent()).toBe("1")
  }, 300_000)
})
