/**
 * The public pages are cached per snapshot and validated by content: the same snapshot answers the same ETag (and
 * 304 to a client that holds it), and a scan or a confirmed revision that changes the snapshot changes the page,
 * its figures and its ETag at once. Over a real socket, with the catalog's test fixtures.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixturesDir } from "./support/catalogFixtures.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

const TOKEN = "maintainer-secret-for-page-tests"
let database: TestDatabase
let server: TestServer
let priceDir: string

beforeAll(async () => {
  database = await createTestDatabase()
  priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-page-cache-"))
  Fs.cpSync(fixturesDir, priceDir, { recursive: true })
  server = await startTestServer({ DATABASE_URL: database.url, PRICE_DATA_DIR: priceDir, MAINTAINER_TOKEN: TOKEN, REVISION_APPROVAL: "manual" })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await database?.close()
  Fs.rmSync(priceDir, { recursive: true, force: true })
})

const admin = async (path: string) => {
  const response = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } })
  expect(response.status, path).toBe(200)
  return response.json()
}

const page = (path: string, etag?: string) => fetch(`${server.baseUrl}${path}`, { headers: etag === undefined ? {} : { "if-none-match": etag } })

/** The listed output price of a model as its row of the models table shows it, read from the server's HTML. */
const listedOutput = (html: string, modelKey: string): string | undefined => {
  const row = new RegExp(`<tr data-model="${modelKey}">([\\s\\S]*?)</tr>`).exec(html)?.[1]
  return row === undefined ? undefined : /data-col="output-listed">([^<]*)</.exec(row)?.[1]
}

describe("the public pages' cache", () => {
  it("answers 304 to the ETag it gave, and a new page with a new ETag once a scan changed a price", async () => {
    expect(await admin("/v1/admin/scan")).toMatchObject({ outcome: "succeeded" })
    const first = await page("/models")
    expect(first.status).toBe(200)
    expect(first.headers.get("cache-control")).toBe("no-cache")
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    const html = await first.text()
    expect(listedOutput(html, "acme/small-1")).toBe("0.4")

    const again = await page("/models", etag)
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    expect(again.headers.get("etag")).toBe(etag)
    // Another validator is not this page: the whole page comes back.
    expect((await page("/models", '"something-else"')).status).toBe(200)

    const card = Path.join(priceDir, "cards/acme.yaml")
    Fs.writeFileSync(card, Fs.readFileSync(card, "utf8").replace("output: 0.4\n", "output: 0.5\n"))
    await admin("/v1/admin/scan")
    const changed = await page("/models", etag)
    expect(changed.status).toBe(200)
    expect(changed.headers.get("etag")).not.toBe(etag)
    expect(listedOutput(await changed.text(), "acme/small-1")).toBe("0.5")
    const modelPage = await (await page("/models/acme/small-1")).text()
    expect(modelPage).toContain('data-testid="detail-output-listed">0.5<')
  })

  it("shows a revision's page once it is confirmed, and the index's figures with it", async () => {
    expect((await page("/revisions/1")).status).toBe(404)
    const before = await (await page("/")).text()
    expect(before).toContain("No revision of the index has been confirmed on-chain yet")

    await admin("/v1/admin/revisions/publish")
    await admin("/v1/admin/revisions/1/approve")
    const revision = (await (await fetch(`${server.baseUrl}/v1/oracle/revisions/1`)).json()) as { txHash: string; scuUsd18: string }
    const revisionPage = await page("/revisions/1")
    expect(revisionPage.status).toBe(200)
    expect(await revisionPage.text()).toContain(`data-testid="revision-tx">${revision.txHash}<`)
    const index = await (await page("/")).text()
    expect(index).toContain('data-testid="scu-usd">')
    expect(index).not.toContain("No revision of the index has been confirmed on-chain yet")
    expect(await (await page("/revisions")).text()).toContain('data-revision="1"')
  })
})
