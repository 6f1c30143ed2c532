/**
 * Maintainer operations over HTTP (issue 4): behind the maintainer token, the same publish / approve / discard /
 * refork as the CLI, with failures in the error envelope.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixturesDir } from "./support/catalogFixtures.ts"
import { availableBackend, createTestDatabase, type TestDatabase } from "./support/database.ts"
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

  // Another replica is another PostgreSQL session; on PGlite every connection shares one session, so the lock
  // cannot be held against the server from outside (jobs.test.ts covers the refusal within one process).
  it.runIf(availableBackend() === "postgres")(
    "refuses publish, approve, discard, refork and scan with 409 conflict while another replica holds the job, and runs them once it is free",
    async () => {
      // Jobs.runExclusive's lock: namespace 0x4358, then hashtext(job).
      const replica = new pg.Client({ connectionString: database.url })
      await replica.connect()
      try {
        const hold = (job: string) => replica.query("SELECT pg_advisory_lock($1, hashtext($2))", [0x4358, job])
        const release = (job: string) => replica.query("SELECT pg_advisory_unlock($1, hashtext($2))", [0x4358, job])
        await hold("publish")
        await hold("price-scan")
        const refused = [
          ["/v1/admin/revisions/publish", "publish"],
          ["/v1/admin/revisions/refork", "publish"],
          ["/v1/admin/revisions/3/approve", "publish"],
          ["/v1/admin/revisions/3/discard", "publish"],
          ["/v1/admin/scan", "price-scan"]
        ] as const
        for (const [path, job] of refused) {
          const response = await call("POST", path)
          expect(response.status, path).toBe(409)
          const body = (await response.json()) as { error: { code: string; type: string; message: string; details: { job: string } } }
          expect(body.error).toMatchObject({ code: "conflict", type: "conflict", details: { job } })
          expect(body.error.message).toMatch(/already running/)
        }
        await release("publish")
        await release("price-scan")
        expect((await call("POST", "/v1/admin/scan")).status).toBe(200)
        expect((await call("POST", "/v1/admin/revisions/publish")).status).toBe(200)
      } finally {
        await replica.end()
      }
    }
  )
})
