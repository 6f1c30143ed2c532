/**
 * Maintainer operations over HTTP (issue 4): behind the maintainer token, the same publish / approve / discard /
 * refork as the CLI, with failures in the error envelope.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixturesDir } from "./support/catalogFixtures.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

const TOKEN = "maintainer-secret-for-tests"
let database: TestDatabase
let server: TestServer
let priceDir: string

beforeAll(async () => {
  database = await createTestDatabase()
  priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-admin-prices-"))
  Fs.cpSync(fixturesDir, priceDir, { recursive: true })
  server = await startTestServer({
    DATABASE_URL: database.url,
    PRICE_DATA_DIR: priceDir,
    MAINTAINER_TOKEN: TOKEN,
    REVISION_APPROVAL: "manual"
  })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await database?.close()
  Fs.rmSync(priceDir, { recursive: true, force: true })
})

const call = (method: string, path: string, token: string | null = TOKEN) =>
  fetch(`${server.baseUrl}${path}`, { method, headers: token === null ? {} : { authorization: `Bearer ${token}` } })

describe("the maintainer API", () => {
  it("refuses requests without the maintainer token", async () => {
    for (const token of [null, "wrong-token"]) {
      const response = await call("GET", "/v1/admin/revisions", token)
      expect(response.status).toBe(401)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthorized")
    }
  })

  it("scans, then holds the new revision for approval, and publishes it when approved", async () => {
    const scan = await call("POST", "/v1/admin/scan")
    expect(scan.status).toBe(200)
    expect(await scan.json()).toMatchObject({ outcome: "succeeded" })

    const publish = (await (await call("POST", "/v1/admin/revisions/publish")).json()) as { revision: { revisionVersion: number; status: string; requiresApproval: boolean } }
    expect(publish.revision).toMatchObject({ revisionVersion: 1, status: "PENDING", requiresApproval: true })

    const approved = await call("POST", "/v1/admin/revisions/1/approve")
    expect(approved.status).toBe(200)
    expect(await approved.json()).toMatchObject({ revisionVersion: 1, status: "CONFIRMED" })

    const list = (await (await call("GET", "/v1/admin/revisions")).json()) as { revisions: Array<{ revisionVersion: number; status: string }> }
    expect(list.revisions.map((r) => [r.revisionVersion, r.status])).toEqual([[1, "CONFIRMED"]])
  })

  it("discards a pending revision, and refork builds it again from the catalog", async () => {
    const file = Path.join(priceDir, "cards/acme.yaml")
    Fs.writeFileSync(file, Fs.readFileSync(file, "utf8").replace("output: 0.4\n", "output: 0.5\n"))
    await call("POST", "/v1/admin/scan")
    const pending = (await (await call("POST", "/v1/admin/revisions/publish")).json()) as { revision: { revisionVersion: number; status: string } }
    expect(pending.revision).toMatchObject({ revisionVersion: 2, status: "PENDING" })

    const discarded = await call("POST", "/v1/admin/revisions/2/discard")
    expect(await discarded.json()).toMatchObject({ revisionVersion: 2, status: "PENDING" })
    const again = await call("POST", "/v1/admin/revisions/2/discard")
    expect(again.status).toBe(404)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("not_found")

    const reforked = (await (await call("POST", "/v1/admin/revisions/refork")).json()) as { revision: { revisionVersion: number; status: string } }
    expect(reforked.revision).toMatchObject({ revisionVersion: 2, status: "PENDING" })
    const approved = await call("POST", "/v1/admin/revisions/2/approve")
    expect(await approved.json()).toMatchObject({ revisionVersion: 2, status: "CONFIRMED" })
  })

  it("answers a malformed revision number with 422", async () => {
    const response = await call("POST", "/v1/admin/revisions/zero/approve")
    expect(response.status).toBe(422)
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe("revision")
  })
})
