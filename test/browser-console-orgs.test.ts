/**
 * The console's organizations in a real browser against a real service whose mail goes to a real SMTP server. A
 * signs in, creates an organization and switches into it (the open page re-reads in the new context), invites B; B,
 * in a second browser (phone width), opens the link from B's mail, signs in there and accepts; a Member's attempt at
 * an Admin action shows the API's refusal; A puts B in a pool, issues a key held by B, removes B (the key shows
 * revoked), moves credit in and out, and deletes the organization once the refusal to delete a funded one showed.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openPage, type PagesService } from "./support/browser.ts"
import { grantCredits, signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-console-orgs"
const MAINTAINER_TOKEN = "console-orgs-suite-maintainer"
let service: PagesService
let browser: Browser
let mailbox: Mailbox

beforeAll(async () => void ({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: MAINTAINER_TOKEN, simulator: false })), 180_000)
afterAll(() => stopConsoleStack({ service, browser, mailbox }))

const signIn = (page: Page, email: string) => signInByCode(page, mailbox, email)

/** The link in the latest invitation mailed to `to` (quoted-printable soft breaks undone). */
const invitationLinkFor = async (to: string): Promise<string> => {
  for (let waited = 0; waited < 5_000; waited += 25) {
    const mail = mailbox.delivered.filter((m) => m.to.includes(to) && /invited you/.test(m.raw)).at(-1)
    const link = mail === undefined ? undefined : /(https?:\/\/\S+\/invitations\/cfi_[A-Za-z0-9_-]{43})/.exec(mail.raw.replace(/=\r?\n/g, ""))?.[1]
    if (link !== undefined) return link
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`no invitation was mailed to ${to}`)
}

/** Nothing wider than the viewport: at phone width the page scrolls only vertically (wide tables scroll in their box). */
const fitsWidth = (page: Page) => page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

const text = (page: Page, testId: string) => page.getByTestId(testId).textContent({ timeout: 10_000 })

describe("the console's organizations", () => {
  it("creates an organization, follows the active context, invites and admits a member, pools, removes, moves credit and deletes", async (context) => {
    const { page: a } = await openPage(browser, SUITE, context.task.name)
    const stamp = Date.now()
    const emailA = `owner-${stamp}@example.com`
    const emailB = `member-${stamp}@example.com`

    // A signs in and holds personal credit.
    await a.goto(`${service.baseUrl}/console`)
    await signIn(a, emailA)
    const cfA = /(cf_[a-z2-7]{12})/.exec((await a.locator("#main").textContent()) ?? "")![1]!
    await grantCredits(service, MAINTAINER_TOKEN, cfA, 12500000000000000000n)
    await a.reload()
    await expect.poll(() => text(a, "balance"), { timeout: 10_000 }).toBe("12.5")

    // No organization yet: the page says what to do next; A creates one and lands on it.
    await a.getByRole("link", { name: "Organizations", exact: true }).click()
    await a.getByText("You belong to no organization yet").waitFor({ timeout: 10_000 })
    expect(await a.locator("#main").textContent()).toContain("You own 0 of at most 10 organizations.")
    await a.getByLabel("Organization name").fill("Acme Research")
    await a.getByRole("button", { name: "Create organization" }).click()
    await a.getByRole("heading", { level: 1, name: "Acme Research" }).waitFor({ timeout: 10_000 })
    expect(await text(a, "my-role")).toBe("Owner")
    const orgId = /\/console\/orgs\/(org_[a-z2-7]{12})$/.exec(new URL(a.url()).pathname)![1]!

    // Switching the context from the header while the overview is open: the overview re-reads the organization's balance.
    await a.getByRole("link", { name: "Overview", exact: true }).click()
    await expect.poll(() => text(a, "balance"), { timeout: 10_000 }).toBe("12.5")
    await a.getByLabel("Acting as").selectOption(orgId)
    await expect.poll(() => text(a, "balance"), { timeout: 10_000 }).toBe("0")
    const me = (await (await a.request.get(`${service.baseUrl}/v1/me`)).json()) as { active_context: { type: string; org_id?: string } }
    expect(me.active_context).toEqual({ type: "organization", org_id: orgId, name: "Acme Research", role: "owner" })

    // A invites B as a Member; the invitation is listed as pending.
    await a.goto(`${service.baseUrl}/console/orgs/${orgId}`)
    await a.getByText("No invitation yet").waitFor({ timeout: 10_000 })
    await a.getByLabel("E-mail address to invite").fill(emailB)
    await a.getByLabel("Role", { exact: true }).selectOption("member")
    await a.getByRole("button", { name: "Send invitation" }).click()
    await a.getByText(`Invitation mailed to ${emailB} as Member`).waitFor({ timeout: 10_000 })
    await expect.poll(() => a.getByTestId("invitations-table").getByTestId("invitation-state").textContent(), { timeout: 10_000 }).toBe("pending")

    // B, in another browser at phone width, opens the link from the mail: the invitation, then the sign-in beneath it.
    const link = await invitationLinkFor(emailB)
    expect(link.startsWith(`${service.baseUrl}/console/invitations/cfi_`)).toBe(true)
    const { page: b } = await openPage(browser, SUITE, `${context.task.name} (B)`, { width: 390, height: 844 })
    await b.goto(link)
    await expect.poll(() => b.getByTestId("invitation-summary").textContent(), { timeout: 10_000 }).toMatch(/invited you to join Acme Research as Member/)
    expect(await fitsWidth(b)).toBe(true)
    await signIn(b, emailB)
    // Back on the invitation, signed in: B accepts and enters the organization.
    await b.getByRole("button", { name: "Accept the invitation" }).click()
    await b.getByRole("heading", { level: 1, name: "Acme Research" }).waitFor({ timeout: 10_000 })
    expect(await text(b, "my-role")).toBe("Member")
    await expect.poll(() => b.getByLabel("Acting as").inputValue(), { timeout: 10_000 }).toBe(orgId)
    const cfB = ((await (await b.request.get(`${service.baseUrl}/v1/me`)).json()) as { cf_id: string }).cf_id

    // A Member sees the members with e-mails masked, no pool or invitation controls.
    const bOwnerRow = b.getByTestId("members-table").locator(`tr[data-member="${cfA}"]`)
    await expect.poll(() => bOwnerRow.locator("td").nth(2).textContent(), { timeout: 10_000 }).toBe(`ow***@example.com`)
    expect(await b.getByRole("button", { name: "Create pool" }).count()).toBe(0)
    expect(await b.getByRole("button", { name: "Send invitation" }).count()).toBe(0)
    expect(await b.getByRole("button", { name: "Remove" }).count()).toBe(0)
    expect(await fitsWidth(b)).toBe(true)

    // The refusal case: a Member's attempt at an Admin action (issuing a key) shows the API's message beside it.
    await b.goto(`${service.baseUrl}/console/keys`)
    await b.getByLabel("Label (optional)").fill("mine")
    await b.getByRole("button", { name: "Create key" }).click()
    await expect.poll(() => b.getByRole("alert").textContent(), { timeout: 10_000 }).toBe(
      "Issuing API keys needs the admin role in this organization; you are a member."
    )

    // A sees B as a Member, with B's full e-mail (A is the Owner).
    await a.reload()
    const aMemberRow = a.getByTestId("members-table").locator(`tr[data-member="${cfB}"]`)
    await expect.poll(() => aMemberRow.getByTestId("member-role").textContent(), { timeout: 10_000 }).toBe("Member")
    expect(await aMemberRow.locator("td").nth(2).textContent()).toBe(emailB)
    await expect.poll(() => a.getByTestId("invitations-table").getByTestId("invitation-state").textContent(), { timeout: 10_000 }).toBe("accepted")

    // A creates a pool with caps (exact decimals) and puts B in it.
    await a.getByText("No spending pool yet").waitFor({ timeout: 10_000 })
    await a.getByLabel("Pool name").fill("Research team")
    await a.getByLabel("Daily cap (UTC day), credits (optional)").fill("1.25")
    await a.getByLabel("Monthly cap (UTC month), credits (optional)").fill("30")
    await a.getByRole("button", { name: "Create pool" }).click()
    const pool = a.locator("article.pool", { hasText: "Research team" })
    await expect.poll(() => pool.getByTestId("pool-cap-dailyWei").textContent(), { timeout: 10_000 }).toBe("1.25")
    expect(await pool.getByTestId("pool-cap-weeklyWei").textContent()).toBe("no limit")
    expect(await pool.getByTestId("pool-cap-monthlyWei").textContent()).toBe("30")
    await pool.getByLabel("Member to put in Research team").selectOption(cfB)
    await pool.getByRole("button", { name: "Put in the pool" }).click()
    await expect.poll(() => pool.getByTestId("pool-members").textContent(), { timeout: 10_000 }).toContain(cfB)
    // Editing the pool: a new weekly cap, the daily one removed.
    await pool.getByRole("button", { name: "Edit pool" }).click()
    await pool.getByLabel("Daily cap (UTC day), credits (empty: no cap)").fill("")
    await pool.getByLabel("Weekly cap (from Monday, UTC), credits (empty: no cap)").fill("7.5")
    await pool.getByRole("button", { name: "Save the pool" }).click()
    await expect.poll(() => pool.getByTestId("pool-cap-weeklyWei").textContent(), { timeout: 10_000 }).toBe("7.5")
    expect(await pool.getByTestId("pool-cap-dailyWei").textContent()).toBe("no limit")
    const pools = (await (await a.request.get(`${service.baseUrl}/v1/orgs/${orgId}/pools`)).json()) as { data: Array<{ caps: unknown }> }
    expect(pools.data[0]!.caps).toEqual({ dailyWei: null, weeklyWei: "7500000000000000000", monthlyWei: "30000000000000000000" })

    // A key held by B, issued by A from the keys page: its spending counts for B (B's pool applies).
    await a.getByRole("link", { name: "Keys", exact: true }).click()
    await a.getByLabel("Label (optional)").fill("for-b")
    await a.getByLabel("The key is for").selectOption(cfB)
    await a.getByRole("button", { name: "Create key" }).click()
    await a.getByTestId("new-secret").waitFor({ timeout: 10_000 })
    const listed = (await (await a.request.get(`${service.baseUrl}/v1/keys`)).json()) as { data: Array<{ id: string; label: string | null; holderCfId: string | null }> }
    const forB = listed.data.find((k) => k.label === "for-b")!
    expect(forB.holderCfId).toBe(cfB)
    const keyId = forB.id
    const keyRow = a.getByTestId("keys-table").locator(`tr[data-key="${keyId}"]`)
    await expect.poll(() => keyRow.getByTestId("key-state").textContent(), { timeout: 10_000 }).toBe("active")

    // A removes B: the confirmation says the keys go with it; B's key is then revoked in the list.
    await a.goto(`${service.baseUrl}/console/orgs/${orgId}`)
    await aMemberRow.getByRole("button", { name: "Remove" }).click()
    expect(await aMemberRow.getByRole("group").textContent()).toContain("every API key they issued or hold on this organization is revoked")
    await aMemberRow.getByRole("button", { name: "Yes, remove" }).click()
    await expect.poll(() => a.getByTestId("members-table").locator(`tr[data-member="${cfB}"]`).count(), { timeout: 10_000 }).toBe(0)
    await a.getByText("Nobody is in this pool yet").waitFor({ timeout: 10_000 })
    await a.getByRole("link", { name: "Keys", exact: true }).click()
    await expect.poll(() => keyRow.getByTestId("key-state").textContent(), { timeout: 10_000 }).toBe("revoked")

    // B's console falls back to the personal account.
    await b.reload()
    await expect.poll(() => b.getByLabel("Acting as").inputValue(), { timeout: 10_000 }).toBe("")

    // A moves credit in (exact decimals); the overview, acting in the organization, shows it.
    await a.goto(`${service.baseUrl}/console/orgs/${orgId}`)
    await a.getByLabel("Credits to move in").fill("2.5")
    await a.getByRole("button", { name: "Move in" }).click()
    await expect.poll(() => a.getByTestId("moved").textContent(), { timeout: 10_000 }).toBe(
      "Moved 2.5 credits in: the organization holds 2.5, your personal account 10."
    )
    await expect.poll(() => text(a, "org-balance"), { timeout: 10_000 }).toBe("2.5")
    await a.getByRole("link", { name: "Overview", exact: true }).click()
    await expect.poll(() => text(a, "balance"), { timeout: 10_000 }).toBe("2.5")

    // Deleting a funded organization is refused beside the button; once the credit is out, it goes.
    await a.goto(`${service.baseUrl}/console/orgs/${orgId}`)
    await a.getByRole("button", { name: "Delete organization" }).click()
    await a.getByRole("button", { name: "Yes, delete it" }).click()
    await expect.poll(() => a.getByRole("alert").textContent(), { timeout: 10_000 }).toMatch(/still holds credits/)
    await a.getByLabel("Credits to move out").fill("2.5")
    await a.getByRole("button", { name: "Move out" }).click()
    await expect.poll(() => a.getByTestId("moved").textContent(), { timeout: 10_000 }).toBe(
      "Moved 2.5 credits out: the organization holds 0, your personal account 12.5."
    )
    await a.getByRole("button", { name: "Delete organization" }).click()
    await a.getByRole("button", { name: "Yes, delete it" }).click()
    await a.getByText("You belong to no organization yet").waitFor({ timeout: 10_000 })
    await expect.poll(() => a.getByLabel("Acting as").inputValue(), { timeout: 10_000 }).toBe("")
    await a.getByRole("link", { name: "Overview", exact: true }).click()
    await expect.poll(() => text(a, "balance"), { timeout: 10_000 }).toBe("12.5")
  }, 180_000)
})
