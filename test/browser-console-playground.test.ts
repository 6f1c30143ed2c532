/**
 * The playground in a real browser against a real service whose vendors are the simulator: a signed-in user with
 * credits creates a playground key, sends a streamed chat to `auto`, and sees the answer, the routing headers and the
 * bill of that very request, which equal what the API stores; the account is charged exactly that. Nothing is spent
 * before Send.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { credits } from "../web/console/format.ts"
import { formatScaled } from "../web/shared/format.ts"
import { openPage, type PagesService } from "./support/browser.ts"
import { grantCredits, signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-console-playground"
const MAINTAINER_TOKEN = "playground-suite-maintainer"
const GRANT_WEI = 20_000_000_000_000_000_000n
let service: PagesService
let browser: Browser
let mailbox: Mailbox

beforeAll(async () => void ({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: MAINTAINER_TOKEN, simulator: true })), 180_000)
afterAll(() => stopConsoleStack({ service, browser, mailbox }))

const signIn = async (page: Page, email: string) => {
  await page.goto(`${service.baseUrl}/console`)
  await signInByCode(page, mailbox, email)
}

const account = async (page: Page) =>
  (await (await page.request.get(`${service.baseUrl}/v1/account`)).json()) as { balanceWei: string; spentWei: string }

describe("the playground", () => {
  it("streams a chat to auto with a key created for it, shows the routing headers, and shows the bill the API stores", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await signIn(page, `playground-${Date.now()}@example.com`)
    const me = ((await (await page.request.get(`${service.baseUrl}/v1/me`)).json()) as { cf_id: string }).cf_id
    await grantCredits(service, MAINTAINER_TOKEN, me, GRANT_WEI)

    await page.getByRole("link", { name: "Playground", exact: true }).click()
    // Nothing can be sent before a key is chosen.
    expect(await page.getByRole("button", { name: "Send" }).isDisabled()).toBe(true)
    await page.getByRole("button", { name: "Create a playground key" }).click()
    await page.getByTestId("playground-key").waitFor({ timeout: 10_000 })
    const keys = (await (await page.request.get(`${service.baseUrl}/v1/keys`)).json()) as { data: ReadonlyArray<{ label: string | null; status: string }> }
    expect(keys.data.map((k) => [k.label, k.status])).toEqual([["playground", "active"]])
    expect((await account(page)).spentWei).toBe("0")

    // The routable chat models come from the API (embedding models are not for chat); auto is the default.
    const options = await page.getByLabel("Model", { exact: true }).locator("option").allTextContents()
    const listed = ((await (await page.request.get(`${service.baseUrl}/v1/models`)).json()) as { data: ReadonlyArray<{ id: string; kind: string }> }).data
    expect(listed.some((m) => m.kind === "embedding")).toBe(true)
    expect(options).toHaveLength(listed.filter((m) => m.kind === "text").length + 1)
    expect(options.some((option) => option.includes("embedding"))).toBe(false)
    expect(await page.getByLabel("Model", { exact: true }).inputValue()).toBe("auto")

    await page.getByLabel("Message").fill("Say hello to the playground in one short line")
    await page.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => page.getByTestId("playground-answer").textContent(), { timeout: 15_000 }).toMatch(/^Simulated reply from /)
    const requestId = (await page.getByTestId("header-requestId").textContent())!
    expect(requestId).not.toBe("—")
    expect(await page.getByTestId("header-chooser").textContent()).not.toBe("—")

    // The bill shown is the one the API stores for that request, and the account paid exactly it.
    const charge = (await page.getByTestId("bill-charge").textContent({ timeout: 15_000 }))!
    const stored = (await (await page.request.get(`${service.baseUrl}/v1/generations/${requestId}`)).json()) as {
      modelUsed: string
      modelRequested: string
      chooser: string | null
      bill: { chargeWei: string }
    }
    expect(await page.getByTestId("header-modelUsed").textContent()).toBe(stored.modelUsed)
    expect(await page.getByTestId("header-modelRequested").textContent()).toBe(stored.modelRequested)
    expect(await page.getByTestId("header-chooser").textContent()).toBe(stored.chooser)
    expect(charge).toBe(formatScaled(stored.bill.chargeWei))
    expect(await page.getByTestId("bill-charge-wei").textContent()).toBe(stored.bill.chargeWei)
    expect(BigInt(stored.bill.chargeWei) > 0n).toBe(true)
    const after = await account(page)
    expect(after.spentWei).toBe(stored.bill.chargeWei)
    expect(BigInt(after.balanceWei)).toBe(GRANT_WEI - BigInt(stored.bill.chargeWei))

    // The overview counts it in today's spend (UTC) and in what the caps have used.
    await page.getByRole("link", { name: "Overview", exact: true }).click()
    await expect.poll(() => page.getByTestId("spend-today").textContent(), { timeout: 10_000 }).toBe(credits(stored.bill.chargeWei))
    expect(await page.getByTestId("spend-30d").textContent()).toBe(credits(stored.bill.chargeWei))
    expect(await page.getByTestId("cap-left-day").textContent()).toBe("no limit")
  }, 180_000)
})
