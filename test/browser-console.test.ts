/**
 * The console in a real browser against a real service whose mail goes to a real SMTP server: a new user signs in
 * with the code the mail carries, sees the balance the API reports, creates a key whose secret is shown once and
 * works, and revokes it. Every change the console makes is cookie-authenticated, so this also proves it sends the
 * header the server's cross-site rule requires.
 */
import type { Browser } from "playwright-core"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nextVisitorIp, openPage, type PagesService } from "./support/browser.ts"
import { grantCredits, signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-console"
const MAINTAINER_TOKEN = "console-suite-maintainer"
let service: PagesService
let browser: Browser
let mailbox: Mailbox

beforeAll(async () => void ({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: MAINTAINER_TOKEN, simulator: false })), 180_000)
afterAll(() => stopConsoleStack({ service, browser, mailbox }))

describe("the console", () => {
  it("signs a new user in by e-mail code, shows the balance and how to fund it, sets the caps, and creates, shows once, and revokes a key", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    const email = `console-${Date.now()}@example.com`

    // Any console route asks a signed-out visitor to sign in.
    await page.goto(`${service.baseUrl}/console/keys`)
    await signInByCode(page, mailbox, email)

    // The overview shows the balance the API holds, before and after an operator's grant.
    await page.getByRole("link", { name: "Overview", exact: true }).click()
    await expect.poll(() => page.getByTestId("balance").textContent(), { timeout: 10_000 }).toBe("0")
    const me = /(cf_[a-z2-7]{12})/.exec((await page.locator("#main").textContent()) ?? "")![1]!
    await grantCredits(service, MAINTAINER_TOKEN, me, 12500000000000000000n)
    await page.reload()
    await expect.poll(() => page.getByTestId("balance").textContent(), { timeout: 10_000 }).toBe("12.5")

    // How to fund: this account's deposit reference, as the API gives it to the signed-in user.
    const funding = (await (await page.request.get(`${service.baseUrl}/v1/account/funding`)).json()) as { accountRef: string; treasury: string }
    await expect.poll(() => page.getByTestId("account-ref").textContent(), { timeout: 10_000 }).toBe(funding.accountRef)
    expect(await page.locator("#main").textContent()).toContain(funding.treasury)
    expect(await page.getByText("No withdrawal yet").count()).toBe(1)

    // The account's caps: set from the console, exact in wei; a malformed amount is refused beside the form.
    await page.getByRole("link", { name: "Limits", exact: true }).click()
    await page.getByLabel("Daily cap (UTC day), credits").fill("5")
    await page.getByLabel("Monthly cap (UTC month), credits").fill("100.25")
    await page.getByRole("button", { name: "Save the caps" }).click()
    await expect.poll(() => page.getByTestId("cap-monthly").textContent(), { timeout: 10_000 }).toBe("100.25")
    expect(await page.getByTestId("cap-daily").textContent()).toBe("5")
    expect(await page.getByTestId("cap-weekly").textContent()).toBe("no limit")
    const limits = ((await (await page.request.get(`${service.baseUrl}/v1/account`)).json()) as { limits: Record<string, string | null> }).limits
    expect(limits).toEqual({ dailyWei: "5000000000000000000", weeklyWei: null, monthlyWei: "100250000000000000000" })
    await page.getByLabel("Weekly cap (from Monday, UTC), credits").fill("ten")
    await page.getByRole("button", { name: "Save the caps" }).click()
    await expect.poll(() => page.getByRole("alert").textContent(), { timeout: 10_000 }).toMatch(/Weekly cap .*a number of credits/)
    const unchanged = ((await (await page.request.get(`${service.baseUrl}/v1/account`)).json()) as { limits: Record<string, string | null> }).limits
    expect(unchanged).toEqual(limits)

    // A key with a daily cap: its secret is shown once and works against the API.
    await page.getByRole("link", { name: "Keys", exact: true }).click()
    await expect.poll(() => page.getByText("No key yet").count(), { timeout: 10_000 }).toBe(1)
    await page.getByLabel("Label (optional)").fill("laptop")
    await page.getByLabel("Daily cap, credits (optional)").fill("2.5")
    await page.getByRole("button", { name: "Create key" }).click()
    const secret = (await page.getByTestId("new-secret").textContent({ timeout: 10_000 }))!
    expect(secret).toMatch(/^ct_live_[A-Za-z0-9_-]{43,}$/)
    const usage = await fetch(`${service.baseUrl}/v1/usage`, { headers: { authorization: `Bearer ${secret}`, "x-forwarded-for": nextVisitorIp() } })
    expect(usage.status).toBe(200)
    const usageBody = (await usage.json()) as { balanceWei: string; key: { dailyLimitWei: string | null } }
    expect(usageBody.balanceWei).toBe("12500000000000000000")
    expect(usageBody.key.dailyLimitWei).toBe("2500000000000000000")
    const row = page.getByTestId("keys-table").locator("tbody tr")
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1)
    expect(await row.locator("td").nth(1).textContent()).toBe("laptop")
    expect(await row.locator("td").nth(4).textContent()).toBe("2.5")

    // Once dismissed, the secret is nowhere on the page, and the list never shows it.
    await page.getByRole("button", { name: "I have saved it" }).click()
    expect(await page.content()).not.toContain(secret)

    // Revoked from the console: the key is refused from then on.
    await row.getByRole("button", { name: "Revoke" }).click()
    await expect.poll(() => row.getByTestId("key-state").textContent(), { timeout: 10_000 }).toBe("revoked")
    const refused = await fetch(`${service.baseUrl}/v1/usage`, { headers: { authorization: `Bearer ${secret}`, "x-forwarded-for": nextVisitorIp() } })
    expect(refused.status).toBe(401)

    // Signing out ends the session: the console asks to sign in again.
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByLabel("E-mail address").waitFor({ timeout: 10_000 })
    await page.reload()
    await page.getByLabel("E-mail address").waitFor({ timeout: 10_000 })
  }, 120_000)

  it("signs in with a wallet: the page builds the EIP-4361 message, the injected wallet signs it, the service checks it", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    // The wallet lives in the test process: the page reaches it through an injected EIP-1193 provider, as it would
    // reach a browser extension, and never holds the key.
    const wallet = privateKeyToAccount(generatePrivateKey())
    const signed: Array<string> = []
    await page.exposeFunction("__walletSign", async (hexMessage: `0x${string}`) => {
      const message = Buffer.from(hexMessage.slice(2), "hex").toString("utf8")
      signed.push(message)
      return wallet.signMessage({ message })
    })
    await page.addInitScript((address: string) => {
      const provider = {
        request: async ({ method, params }: { method: string; params?: ReadonlyArray<unknown> }) => {
          if (method === "eth_requestAccounts" || method === "eth_accounts") return [address.toLowerCase()]
          if (method === "personal_sign") return (globalThis as unknown as { __walletSign: (hex: unknown) => Promise<string> }).__walletSign(params?.[0])
          throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 })
        }
      }
      Object.defineProperty(globalThis, "ethereum", { value: provider })
    }, wallet.address)

    await page.goto(`${service.baseUrl}/console`)
    await page.getByRole("button", { name: "Sign in with a wallet" }).click()
    const lower = wallet.address.toLowerCase()
    await expect.poll(() => page.getByTestId("signed-in-as").textContent(), { timeout: 10_000 }).toBe(`${lower.slice(0, 6)}...${lower.slice(-4)}`)
    // What the wallet was asked to sign: a message for this service, its chain, and the checksummed address.
    expect(signed).toHaveLength(1)
    const nonce = (await (await fetch(`${service.baseUrl}/v1/auth/siwe/nonce`, { headers: { "x-forwarded-for": nextVisitorIp() } })).json()) as { domain: string; chainId: number }
    expect(signed[0]!.split("\n").slice(0, 2)).toEqual([`${nonce.domain} wants you to sign in with your Ethereum account:`, wallet.address])
    expect(signed[0]).toContain(`Chain ID: ${nonce.chainId}`)
    const me = (await (await page.request.get(`${service.baseUrl}/v1/me`)).json()) as { wallet_address: string }
    expect(me.wallet_address).toBe(wallet.address)
  }, 120_000)
})
