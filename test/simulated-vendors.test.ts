/**
 * Simulated vendors: when the service answers with the vendor simulator as every vendor's upstream (the all-embedded
 * default with nothing configured, or EXCHANGE_SIMULATOR=on), and that every answer of the exchange then says so.
 * The README's quickstart suite runs the default itself, as `npm start` on a fresh DATA_DIR.
 */
import { ConfigProvider, Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anyVendorKeySet, simulatesVendors } from "../domain/exchange/providers.ts"
import { appConfig } from "../services/platform/AppConfig.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

describe("when the vendors are simulated", () => {
  const base = { databaseConfigured: false, providersFileConfigured: false, vendorKeyConfigured: false } as const

  it("auto: only with no DATABASE_URL, no PROVIDERS_FILE and no vendor key", () => {
    expect(simulatesVendors({ ...base, setting: "auto" })).toBe(true)
    expect(simulatesVendors({ ...base, setting: "auto", databaseConfigured: true })).toBe(false)
    expect(simulatesVendors({ ...base, setting: "auto", providersFileConfigured: true })).toBe(false)
    expect(simulatesVendors({ ...base, setting: "auto", vendorKeyConfigured: true })).toBe(false)
  })

  it("on and off decide alone", () => {
    expect(simulatesVendors({ setting: "on", databaseConfigured: true, providersFileConfigured: true, vendorKeyConfigured: true })).toBe(true)
    expect(simulatesVendors({ ...base, setting: "off" })).toBe(false)
  })

  it("any vendor key variable counts, an empty one does not", () => {
    expect(anyVendorKeySet({})).toBe(false)
    expect(anyVendorKeySet({ OPENAI_API_KEY: "  " })).toBe(false)
    expect(anyVendorKeySet({ GOOGLE_API_KEY: "g-1" })).toBe(true)
    expect(anyVendorKeySet({ ZHIPU_API_KEY: "z-1" })).toBe(true)
  })

  it("EXCHANGE_SIMULATOR takes on, off or auto (the default) and refuses anything else", () => {
    const read = (value: string | undefined) =>
      Effect.runSync(
        Effect.either(appConfig).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(value === undefined ? [] : [["EXCHANGE_SIMULATOR", value]])))
        )
      )
    expect(Either.map(read(undefined), (c) => c.exchange.simulator)).toEqual(Either.right("auto"))
    expect(Either.map(read("on"), (c) => c.exchange.simulator)).toEqual(Either.right("on"))
    expect(Either.map(read("off"), (c) => c.exchange.simulator)).toEqual(Either.right("off"))
    expect(Either.isLeft(read("yes"))).toBe(true)
  })
})

interface Availability {
  readonly models: ReadonlyArray<{ readonly id: string; readonly routable: boolean }>
  readonly auto: { readonly id: string } | null
}

describe("a service on PostgreSQL", () => {
  let database: TestDatabase
  let plain: TestServer
  let simulated: TestServer

  beforeAll(async () => {
    database = await createTestDatabase()
    // Both on one database: the first migrates and scans the bundled cards, the second finds them.
    plain = await startTestServer({ DATABASE_URL: database.url, PRICE_SCAN_INTERVAL_HOURS: "24" })
    simulated = await startTestServer({ DATABASE_URL: database.url, EXCHANGE_SIMULATOR: "on" })
  }, 120_000)

  afterAll(async () => {
    await simulated?.close()
    await plain?.close()
    await database?.close()
  })

  /** The availability once the catalog is loaded (and, when `routable`, once something routes). */
  const availability = async (server: TestServer, routable: boolean) => {
    for (let poll = 0; ; poll++) {
      const response = await fetch(`${server.baseUrl}/v1/models/availability`)
      const body = (await response.json()) as Availability
      if ((body.models.length > 0 && (!routable || body.models.some((m) => m.routable))) || poll > 150) return { response, body }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  it("never simulates unless asked: nothing routes, and nothing says simulated", async () => {
    const { response, body } = await availability(plain, false)
    expect(response.status).toBe(200)
    expect(body.models.length).toBeGreaterThan(0)
    expect(body.models.filter((m) => m.routable)).toEqual([])
    expect(body.auto).toBeNull()
    expect(response.headers.get("x-upstream-simulated")).toBeNull()
  }, 60_000)

  it("with EXCHANGE_SIMULATOR=on routes every catalogued vendor and marks every exchange answer, refusals included", async () => {
    const { response, body } = await availability(simulated, true)
    expect(response.headers.get("x-upstream-simulated")).toBe("true")
    expect(body.auto).not.toBeNull()
    // Every vendor of the catalog has a model that routes.
    const catalog = (await (await fetch(`${simulated.baseUrl}/v1/oracle/catalog`)).json()) as {
      models: ReadonlyArray<{ modelKey: string; provider: { key: string } }>
    }
    const routable = new Set(body.models.filter((m) => m.routable).map((m) => m.id))
    const vendors = new Set(catalog.models.map((m) => m.provider.key))
    const served = new Set(catalog.models.filter((m) => routable.has(m.modelKey)).map((m) => m.provider.key))
    expect(vendors.size).toBeGreaterThanOrEqual(10)
    expect([...served].sort()).toEqual([...vendors].sort())

    const refused = await fetch(`${simulated.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer ct_live_nope", "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "Hi" }] })
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get("x-upstream-simulated")).toBe("true")
    for (const path of ["/v1/models", "/v1/messages"]) {
      const answer = await fetch(`${simulated.baseUrl}${path}`, path === "/v1/messages" ? { method: "POST" } : {})
      expect(answer.headers.get("x-upstream-simulated"), path).toBe("true")
    }
    // The oracle does not depend on the upstream: its answers carry nothing.
    const oracle = await fetch(`${simulated.baseUrl}/v1/oracle/health`)
    expect(oracle.headers.get("x-upstream-simulated")).toBeNull()
  }, 60_000)
})
