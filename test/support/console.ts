/**
 * What every console browser suite stands on: a real SMTP capture, the service started with its mail going there
 * (vendors simulated or not), and Debian's chromium; and the steps every suite takes the same way (signing in with
 * the code the capture received, an operator's grant of credits).
 */
import type { Browser, Page } from "playwright-core"
import { launchBrowser, nextVisitorIp, type PagesService, startPagesService } from "./browser.ts"
import { type Mailbox, startMailbox } from "./mailbox.ts"

export interface ConsoleStack {
  readonly service: PagesService
  readonly browser: Browser
  readonly mailbox: Mailbox
}

export const startConsoleStack = async (options: { readonly maintainerToken: string; readonly simulator: boolean }): Promise<ConsoleStack> => {
  const mailbox = await startMailbox()
  const [service, browser] = await Promise.all([
    startPagesService({
      SMTP_URL: mailbox.url,
      MAIL_FROM: "Compute Exchange <noreply@example.com>",
      MAINTAINER_TOKEN: options.maintainerToken,
      EXCHANGE_SIMULATOR: options.simulator ? "on" : "off"
    }),
    launchBrowser()
  ])
  return { service, browser, mailbox }
}

/** Stops what started (any part may be missing when the start failed half-way). */
export const stopConsoleStack = async (stack: Partial<ConsoleStack>) => {
  await stack.browser?.close()
  await stack.service?.close()
  await stack.mailbox?.close()
}

/** Signs in on the e-mail form the page shows, with the code the SMTP capture received for `email`. */
export const signInByCode = async (page: Page, mailbox: Mailbox, email: string) => {
  await page.getByLabel("E-mail address").fill(email)
  await page.getByRole("button", { name: "Send me a code" }).click()
  await page.getByLabel("The 6-digit code").fill(await mailbox.codeFor(email))
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByTestId("signed-in-as").waitFor({ timeout: 10_000 })
}

/** An operator's grant of credits to `cfId` (the maintainer API), as a deposit would fund the account. */
export const grantCredits = async (service: PagesService, maintainerToken: string, cfId: string, amountWei: bigint) => {
  const granted = await fetch(`${service.baseUrl}/v1/admin/accounts/${cfId}/credits`, {
    method: "POST",
    headers: { authorization: `Bearer ${maintainerToken}`, "content-type": "application/json", "x-forwarded-for": nextVisitorIp() },
    body: JSON.stringify({ amountWei: amountWei.toString() })
  })
  if (granted.status !== 200) throw new Error(`the grant answered ${granted.status}: ${await granted.text()}`)
}
