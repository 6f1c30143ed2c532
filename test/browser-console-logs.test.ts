/**
 * The console's request log and activity in a real browser, against a real service whose vendors are the simulator:
 * a signed-in user with credits and a key sends three chat requests over HTTP, then sees them in Logs, filters them by
 * model on the server, opens one row's bill (whose charge is exactly the API's), and finds the day's total on the
 * Activity page equal to the sum of the charges. A `/v1/responses` request opens its stored response beside its bill
 * (input and output items, status), and one sent with `store: false` says nothing was kept. At phone width both pages
 * fit the screen. An embeddings request (the openai SDK's `embeddings.create`) is labelled as such, shows input tokens
 * only, opens an input-only bill and counts on the Activity page under its model.
 */
import OpenAI from "openai"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { credits } from "../web/console/format.ts"
import { formatScaled } from "../web/shared/format.ts"
import { nextVisitorIp, openPage, type PagesService } from "./support/browser.ts"
import { grantCredits, signInByCode, startConsoleStack, stopConsoleStack } from "./support/console.ts"
import type { Mailbox } from "./support/mailbox.ts"

const SUITE = "browser-console-logs"
const MAINTAINER_TOKEN = "logs-suite-maintainer"
let service: PagesService
let browser: Browser
let mailbox: Mailbox

beforeAll(async () => void ({ service, browser, mailbox } = await startConsoleStack({ maintainerToken: MAINTAINER_TOKEN, simulator: true })), 180_000)
afterAll(() => stopConsoleStack({ service, browser, mailbox }))

const signIn = async (page: Page, email: string, path: string) => {
  await page.goto(`${service.baseUrl}${path}`)
  await signInByCode(page, mailbox, email)
}

/** Two routable chat models, once the catalog is loaded (the list holds embedding models too, by kind). */
const routableModels = async (): Promise<[string, string]> => {
  for (let poll = 0; poll < 150; poll++) {
    const body = (await (await fetch(`${service.baseUrl}/v1/models`, { headers: { "x-forwarded-for": nextVisitorIp() } })).json()) as {
      data: ReadonlyArray<{ id: string; kind: "text" | "embedding" }>
    }
    const chat = body.data.filter((m) => m.kind === "text")
    if (chat.length >= 2) return [chat[0]!.id, chat[1]!.id]
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error("no routable models")
}

/** Waits until the catalog routes `model`. */
const routable = async (model: string) => {
  for (let poll = 0; poll < 150; poll++) {
    const body = (await (await fetch(`${service.baseUrl}/v1/models`, { headers: { "x-forwarded-for": nextVisitorIp() } })).json()) as { data: ReadonlyArray<{ id: string }> }
    if (body.data.some((m) => m.id === model)) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`${model} never became routable`)
}

interface Generation {
  id: string
  createdAt: string
  modelUsed: string
  chargeWei: string
}

describe("the console's logs and activity", () => {
  it("lists the requests sent, filters them by model, opens a bill, and sums the day on the Activity page", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await signIn(page, `logs-${Date.now()}@example.com`, "/console/logs")

    // Nothing sent yet: the log says what to do next.
    await expect.poll(() => page.getByText("No requests yet").count(), { timeout: 10_000 }).toBe(1)

    const me = ((await (await page.request.get(`${service.baseUrl}/v1/me`)).json()) as { cf_id: string }).cf_id
    await grantCredits(service, MAINTAINER_TOKEN, me, 20000000000000000000n)
    const issued = await page.request.post(`${service.baseUrl}/v1/keys`, { headers: { "x-cf-console": "1" }, data: { label: "logs suite" } })
    expect(issued.status()).toBe(201)
    const secret = ((await issued.json()) as { secret: string }).secret

    const [first, second] = await routableModels()
    const ids: Array<string> = []
    for (const [model, text] of [[first, "one"], [second, "two"], [first, "three"]] as const) {
      const answer = await fetch(`${service.baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "x-forwarded-for": nextVisitorIp() },
        body: JSON.stringify({ model, messages: [{ role: "user", content: `Logs suite request ${text}` }] })
      })
      expect(answer.status, await answer.clone().text()).toBe(200)
      ids.push(answer.headers.get("x-request-id")!)
    }
    const listed = ((await (await page.request.get(`${service.baseUrl}/v1/generations`)).json()) as { data: ReadonlyArray<Generation> }).data
    expect(listed.map((g) => g.id)).toEqual([...ids].reverse())

    // Logs: the three requests, newest first, each with the API's charge.
    await page.reload()
    const rows = page.getByTestId("logs-table").locator("tbody tr[data-id]")
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(3)
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")))).toEqual(listed.map((g) => g.id))
    expect(await rows.getByTestId("log-charge").allTextContents()).toEqual(listed.map((g) => credits(g.chargeWei)))

    // Filtered by model on the server: only that model's two requests.
    const usedFirst = listed.filter((g) => g.modelUsed === listed.find((x) => x.id === ids[0])!.modelUsed)
    await page.getByLabel("Model").fill(usedFirst[0]!.modelUsed)
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(usedFirst.length)
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")))).toEqual(usedFirst.map((g) => g.id))

    // A row opens its bill, fetched from the API: the same charge, to the wei.
    const chosen = usedFirst[0]!
    await rows.first().click()
    const apiBill = (await (await page.request.get(`${service.baseUrl}/v1/generations/${chosen.id}`)).json()) as {
      bill: { chargeWei: string; revision: { revisionVersion: number } | null }
      attempts: ReadonlyArray<unknown>
    }
    await expect.poll(() => page.getByTestId("bill-charge-wei").textContent(), { timeout: 10_000 }).toBe(apiBill.bill.chargeWei)
    expect(apiBill.bill.chargeWei).toBe(chosen.chargeWei)
    expect(await page.getByTestId("bill-charge").textContent()).toBe(formatScaled(apiBill.bill.chargeWei))
    expect(await page.getByTestId("bill").locator("table").nth(1).locator("tbody tr").count()).toBe(apiBill.attempts.length)

    // Activity: the day's total is the sum of the three charges, exactly; the table splits it by model.
    await page.getByRole("link", { name: "Activity", exact: true }).click()
    const day = listed[0]!.createdAt.slice(0, 10)
    const sum = listed.reduce((acc, g) => acc + BigInt(g.chargeWei), 0n)
    const dayRow = page.getByTestId("activity-days").locator(`tbody tr[data-day="${day}"]`)
    await expect.poll(() => dayRow.getByTestId("day-total").textContent(), { timeout: 10_000 }).toBe(credits(sum.toString()))
    expect(await page.getByTestId("activity-total").textContent()).toBe(credits(sum.toString()))
    const byModel = new Map<string, bigint>()
    for (const g of listed) byModel.set(g.modelUsed, (byModel.get(g.modelUsed) ?? 0n) + BigInt(g.chargeWei))
    for (const [model, wei] of byModel) {
      expect(await dayRow.locator(`td[data-group="${model}"]`).textContent()).toBe(credits(wei.toString()))
    }
    expect(await page.getByRole("link", { name: "Download CSV" }).getAttribute("href")).toMatch(/^data:text\/csv/)

    // Split by key: one key, the whole sum.
    await page.getByLabel("Split by").selectOption("key")
    await expect.poll(() => page.getByTestId("activity-groups").locator("tbody tr").count(), { timeout: 10_000 }).toBe(1)
    expect(await page.getByTestId("activity-groups").locator("tbody tr td").last().textContent()).toBe(credits(sum.toString()))
  }, 120_000)

  it("opens a /v1/responses request's stored response beside its bill, and says when one was not stored", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await signIn(page, `logs-responses-${Date.now()}@example.com`, "/console/logs")
    await expect.poll(() => page.getByText("No requests yet").count(), { timeout: 10_000 }).toBe(1)

    const me = ((await (await page.request.get(`${service.baseUrl}/v1/me`)).json()) as { cf_id: string }).cf_id
    await grantCredits(service, MAINTAINER_TOKEN, me, 20000000000000000000n)
    const issued = await page.request.post(`${service.baseUrl}/v1/keys`, { headers: { "x-cf-console": "1" }, data: { label: "responses" } })
    expect(issued.status()).toBe(201)
    const secret = ((await issued.json()) as { secret: string }).secret
    await routable("openai/gpt-5")
    const openai = new OpenAI({ apiKey: secret, baseURL: `${service.baseUrl}/v1`, maxRetries: 0, defaultHeaders: { "x-forwarded-for": nextVisitorIp() } })

    // A stored response whose input has a developer turn, the user's question, and a tool call with its output.
    const kept = await openai.responses
      .create({
        model: "openai/gpt-5",
        instructions: "Be brief.",
        tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }],
        input: [
          { role: "developer", content: "Use the tool's answer." },
          { role: "user", content: "Say hello from the logs suite" },
          { type: "function_call", call_id: "call_logs", name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) },
          { type: "function_call_output", call_id: "call_logs", output: "18C, clear" }
        ]
      })
      .withResponse()
    const keptId = kept.response.headers.get("x-request-id")!
    expect(kept.data.output_text).not.toBe("")
    const unstored = await openai.responses.create({ model: "openai/gpt-5", input: "Not kept", store: false }).withResponse()
    const unstoredId = unstored.response.headers.get("x-request-id")!

    await page.reload()
    const rows = page.getByTestId("logs-table").locator("tbody tr[data-id]")
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2)

    // The stored one: its bill, then its items, as the API keeps them.
    await page.locator(`tr[data-id="${keptId}"]`).click()
    await page.getByTestId("bill").waitFor({ timeout: 10_000 })
    const stored = page.getByTestId("stored-response")
    await expect.poll(() => stored.getByTestId("stored-output").count(), { timeout: 10_000 }).toBe(1)
    expect(await stored.getByRole("heading", { name: "Stored response" }).count()).toBe(1)
    expect(await stored.getByTestId("stored-response-status").textContent()).toBe("completed")
    const input = stored.getByTestId("stored-input").locator("li")
    expect(await input.count()).toBe(4)
    expect(await input.nth(0).locator(".item-label").textContent()).toBe("Developer")
    expect(await input.nth(1).locator(".item-label").textContent()).toBe("User")
    expect(await input.nth(1).locator(".answer").textContent()).toBe("Say hello from the logs suite")
    expect(await input.nth(2).locator(".item-label").textContent()).toContain("Tool call get_weather")
    expect(await input.nth(2).getByLabel("Arguments of get_weather").textContent()).toBe(JSON.stringify({ city: "Paris" }, null, 2))
    expect(await input.nth(3).locator("pre").textContent()).toBe("18C, clear")
    expect(await stored.getByText("Be brief.").count()).toBe(1)
    const output = stored.getByTestId("stored-output").locator("li[data-kind=message]")
    expect(await output.locator(".item-label").textContent()).toBe("Assistant")
    expect(await output.locator(".answer").textContent()).toBe(kept.data.output_text)

    // The one sent with store: false has its bill and no response.
    await page.locator(`tr[data-id="${unstoredId}"]`).click()
    await page.getByTestId("bill").waitFor({ timeout: 10_000 })
    await expect.poll(() => page.getByTestId("stored-response-absent").textContent(), { timeout: 10_000 }).toBe("Not stored (store: false), deleted or expired.")
  }, 120_000)

  it("labels an embeddings request, shows its input tokens only, opens its one-leg bill, and counts it on the Activity page", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name)
    await signIn(page, `logs-embeddings-${Date.now()}@example.com`, "/console/logs")
    await expect.poll(() => page.getByText("No requests yet").count(), { timeout: 10_000 }).toBe(1)

    const me = ((await (await page.request.get(`${service.baseUrl}/v1/me`)).json()) as { cf_id: string }).cf_id
    await grantCredits(service, MAINTAINER_TOKEN, me, 20000000000000000000n)
    const issued = await page.request.post(`${service.baseUrl}/v1/keys`, { headers: { "x-cf-console": "1" }, data: { label: "embeddings" } })
    expect(issued.status()).toBe(201)
    const secret = ((await issued.json()) as { secret: string }).secret
    const embeddingModel = "openai/text-embedding-3-small"
    await routable(embeddingModel)
    const [chatModel] = await routableModels()
    const openai = new OpenAI({ apiKey: secret, baseURL: `${service.baseUrl}/v1`, maxRetries: 0, defaultHeaders: { "x-forwarded-for": nextVisitorIp() } })

    const chat = await openai.chat.completions.create({ model: chatModel, messages: [{ role: "user", content: "Logs suite, for contrast" }] }).withResponse()
    const chatId = chat.response.headers.get("x-request-id")!
    const embedded = await openai.embeddings.create({ model: embeddingModel, input: ["a", "b"] }).withResponse()
    const embeddingId = embedded.response.headers.get("x-request-id")!
    expect(embedded.data.data).toHaveLength(2)
    const promptTokens = embedded.data.usage.prompt_tokens
    expect(promptTokens).toBeGreaterThan(0)

    const listed = ((await (await page.request.get(`${service.baseUrl}/v1/generations`)).json()) as { data: ReadonlyArray<Generation & { format: string }> }).data
    expect(listed.map((g) => [g.id, g.format])).toEqual([[embeddingId, "embeddings"], [chatId, "chat"]])
    const embedding = listed[0]!

    // The log: the embeddings row labelled, its model, its input tokens as the API counted them, no output.
    await page.reload()
    const rows = page.getByTestId("logs-table").locator("tbody tr[data-id]")
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2)
    const row = page.locator(`tr[data-id="${embeddingId}"]`)
    expect(await row.getByTestId("log-format").textContent()).toBe("embeddings")
    expect(await page.locator(`tr[data-id="${chatId}"]`).getByTestId("log-format").textContent()).toBe("chat")
    expect(await row.getByTestId("log-model").textContent()).toBe(embeddingModel)
    expect(await row.getByTestId("log-input").textContent()).toBe(promptTokens.toLocaleString("en-US"))
    expect(await row.getByTestId("log-output").textContent()).toBe("—")
    expect(await row.getByTestId("log-charge").textContent()).toBe(credits(embedding.chargeWei))

    // Filtered by its model on the server: that row alone.
    await page.getByLabel("Model").fill(embeddingModel)
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(1)
    expect(await rows.first().getAttribute("data-id")).toBe(embeddingId)

    // Its bill: one input leg of the API's count, the charge to the wei.
    const apiBill = (await (await page.request.get(`${service.baseUrl}/v1/generations/${embeddingId}`)).json()) as {
      bill: { chargeWei: string; legs: ReadonlyArray<{ kind: string; tokens: number }> }
    }
    expect(apiBill.bill.legs).toHaveLength(1)
    expect(apiBill.bill.legs[0]).toMatchObject({ kind: "input", tokens: promptTokens })
    expect(apiBill.bill.chargeWei).toBe(embedding.chargeWei)
    await row.click()
    await expect.poll(() => page.getByTestId("bill-charge-wei").textContent(), { timeout: 10_000 }).toBe(apiBill.bill.chargeWei)
    expect(await page.getByTestId("bill-charge").textContent()).toBe(formatScaled(apiBill.bill.chargeWei))
    expect(await page.getByTestId("bill-format").textContent()).toContain("embeddings")
    const legs = page.getByTestId("bill").locator("table").first().locator("tbody tr")
    expect(await legs.count()).toBe(1)
    expect(await legs.locator("th").textContent()).toBe("input")
    expect(await legs.locator("td").first().textContent()).toBe(promptTokens.toLocaleString("en-US"))
    expect(await page.getByTestId("stored-response").count()).toBe(0)

    // Activity: the embedding model is a group of its own with its one request, its input tokens and its charge.
    await page.getByRole("link", { name: "Activity", exact: true }).click()
    const group = page.getByTestId("activity-groups").locator(`tbody tr[data-group="${embeddingModel}"]`)
    await expect.poll(() => group.count(), { timeout: 10_000 }).toBe(1)
    const cells = group.locator("td")
    expect(await cells.nth(0).textContent()).toBe("1")
    expect(await cells.nth(1).textContent()).toBe(`${promptTokens.toLocaleString("en-US")} / 0`)
    expect(await cells.nth(2).textContent()).toBe(credits(embedding.chargeWei))
    const sum = listed.reduce((acc, g) => acc + BigInt(g.chargeWei), 0n)
    expect(await page.getByTestId("activity-total").textContent()).toBe(credits(sum.toString()))
    const dayRow = page.getByTestId("activity-days").locator(`tbody tr[data-day="${embedding.createdAt.slice(0, 10)}"]`)
    expect(await dayRow.locator("td").first().textContent()).toBe("2")
  }, 120_000)

  it("fits a phone's width, with a label on every input", async (context) => {
    const { page } = await openPage(browser, SUITE, context.task.name, { width: 390, height: 844 })
    await signIn(page, `logs-phone-${Date.now()}@example.com`, "/console/activity")
    await expect.poll(() => page.getByText("No requests in these").count(), { timeout: 10_000 }).toBe(1)
    for (const path of ["/console/activity", "/console/logs"]) {
      await page.goto(`${service.baseUrl}${path}`)
      await page.locator("main select").first().waitFor({ timeout: 10_000 })
      const unlabelled = await page.locator("main input, main select").evaluateAll((inputs) =>
        inputs.filter((input) => (input as unknown as { labels: { length: number } | null }).labels?.length === 0).map((input) => input.id)
      )
      expect(unlabelled, path).toEqual([])
      const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number
      expect(overflow, path).toBeLessThanOrEqual(0)
    }
  }, 60_000)
})
