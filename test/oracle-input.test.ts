/**
 * What a careless user sends the oracle (issue 8), over a real socket against a service that replayed the fixture
 * history: impossible calendar dates, ranges that reach into the future, keys written with a plain slash, long keys
 * and blank ones.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"

let server: FixtureServer

type Json = Record<string, any>

const get = (path: string) => fetch(`${server.baseUrl}${path}`)
const body = async (path: string): Promise<Json> => {
  const response = await get(path)
  expect(response.status, path).toBe(200)
  return (await response.json()) as Json
}
const refusal = async (path: string) => {
  const response = await get(path)
  return { status: response.status, error: ((await response.json()) as Json).error as Json }
}

const DAY = 86_400_000
const midnight = (ms: number) => new Date(Math.floor(ms / DAY) * DAY)
const day = (date: Date) => date.toISOString().slice(0, 10)

beforeAll(async () => {
  server = await startFixtureServer(
    { RATE_LIMIT_ENABLED: "false" },
    {
      // big-2's current entry gains a long-context tier whose two numbers carry different marks.
      editPrices: (priceDir) => {
        const acme = Path.join(priceDir, "cards", "acme.yaml")
        const original = Fs.readFileSync(acme, "utf8")
        const tiered = original.replace(
          "        note: input price halved\n",
          "        note: input price halved\n        contextTiers:\n          - fromInputTokens: 200001\n            input: { usd: 2, provenance: inferred, derivedFrom: \"twice the base rate, as the page's footnote says\" }\n            output: 20\n"
        )
        expect(tiered).not.toBe(original)
        Fs.writeFileSync(acme, tiered)
      }
    }
  )
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("the catalog's context tiers", () => {
  it("carry one provenance mark, the weaker of the two (an object would make existing clients drop the tier)", async () => {
    const catalog = await body("/v1/oracle/catalog")
    const big2 = catalog.models.find((m: Json) => m.modelKey === "acme/big-2")
    expect(big2.contextTiers).toEqual([{ fromInputTokens: 200001, inputPriceUsdPerMillion: 2, outputPriceUsdPerMillion: 20, provenance: "inferred" }])
    expect(big2.currentPrice.provenance).toEqual({ input: "verified", output: "verified" })
    const basket = await body("/v1/oracle/basket")
    expect(basket.models.find((m: Json) => m.id === "acme/big-2")).not.toHaveProperty("contextTiers")
  })
})

describe("impossible calendar dates", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["/v1/oracle/history?from=2026-02-30", "from"],
    ["/v1/oracle/history?granularity=daily&to=2025-09-31", "to"],
    ["/v1/oracle/history?from=2025-07-01T24:61:00Z", "from"],
    ["/v1/oracle/models/acme%2Fbig-2/price-history?from=2025-02-29", "from"],
    ["/v1/oracle/models/acme%2Fbig-2/price-history?to=2025-09-31T00:00:00Z", "to"],
    ["/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-09-31", "date"],
    ["/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-07-01T24:61Z", "date"],
    ["/v1/oracle/scu-at?date=2025-09-31T00:00:00Z", "date"],
    ["/v1/oracle/scu-at?date=2025-07-01T24:61:00Z", "date"]
  ]

  it("are 422 on every date parameter, naming it, never rolled over to another day", async () => {
    for (const [path, param] of cases) {
      const { status, error } = await refusal(path)
      expect(status, path).toBe(422)
      expect(error, path).toMatchObject({ code: "validation_failed", param })
      expect(error.message, path).toMatch(/has no day|is not a time of day/)
    }
  })

  it("one date schema: the same forms are accepted everywhere (a date, or an instant with an offset)", async () => {
    expect((await body("/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-09-30")).date).toBe("2025-09-30T00:00:00.000Z")
    expect((await body("/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-09-30T02:00:00%2B02:00")).date).toBe("2025-09-30T00:00:00.000Z")
    expect((await body("/v1/oracle/history?granularity=daily&from=2025-09-30&to=2025-09-30T00:00:00Z")).count).toBe(1)
    const { error } = await refusal("/v1/oracle/history?from=30/09/2025")
    expect(error.message).toContain("a date (YYYY-MM-DD")
  })
})

describe("ranges that reach past now", () => {
  it("history: `to` in the future is clamped to now, and no point is dated after now", async () => {
    const now = Date.now()
    const from = day(new Date(now - 3 * DAY))
    const to = day(new Date(now + 40 * DAY))
    const daily = await body(`/v1/oracle/history?granularity=daily&from=${from}&to=${to}`)
    expect(new Date(daily.to).getTime()).toBeLessThanOrEqual(Date.now())
    expect(daily.data.map((p: Json) => p.date)).toEqual([0, 1, 2, 3].map((i) => midnight(now - (3 - i) * DAY).toISOString()))
    // Truncation keeps the newest real points: today's, not one invented weeks ahead.
    const capped = await body(`/v1/oracle/history?granularity=daily&to=${to}&limit=2`)
    expect(capped.truncated).toBe(true)
    expect(capped.data.map((p: Json) => p.date)).toEqual([midnight(now - DAY).toISOString(), midnight(now).toISOString()])
  })

  it("price-history: the same clamp, per day and per week", async () => {
    const now = Date.now()
    const to = day(new Date(now + 400 * DAY))
    const daily = await body(`/v1/oracle/models/acme%2Fbig-2/price-history?granularity=daily&to=${to}&limit=1`)
    expect(daily.data.map((p: Json) => p.date)).toEqual([midnight(now).toISOString()])
    expect(new Date(daily.to).getTime()).toBeLessThanOrEqual(Date.now())
    const weekly = await body(`/v1/oracle/models/acme%2Fbig-2/price-history?granularity=weekly&to=${to}`)
    const last = weekly.data[weekly.data.length - 1]
    expect(new Date(last.date).getTime()).toBeLessThanOrEqual(now)
    expect(new Date(last.date).getTime()).toBeGreaterThan(now - 7 * DAY)
  })

  it("a range starting in the future is refused; price-at and scu-at refuse the future", async () => {
    const future = day(new Date(Date.now() + 10 * DAY))
    expect(await refusal(`/v1/oracle/history?from=${future}`)).toMatchObject({ status: 422, error: { param: "from" } })
    expect(await refusal(`/v1/oracle/models/acme%2Fbig-2/price-at?date=${future}`)).toMatchObject({ status: 422, error: { param: "date" } })
    expect(await refusal(`/v1/oracle/scu-at?date=${future}T00:00:00Z`)).toMatchObject({ status: 422, error: { param: "date" } })
  })
})

describe("model keys in paths", () => {
  it("a key written with a plain slash is served as the %2F form is, on every keyed route", async () => {
    const pairs = [
      ["/v1/oracle/models/acme/big-2", "/v1/oracle/models/acme%2Fbig-2"],
      ["/v1/oracle/models/ACME/Big-2", "/v1/oracle/models/acme%2Fbig-2"],
      // A fixed `to`: an open range ends at the instant of the request.
      ["/v1/oracle/models/acme/big-2/price-history?to=2025-12-31", "/v1/oracle/models/acme%2Fbig-2/price-history?to=2025-12-31"],
      ["/v1/oracle/models/acme/big-2/price-history?granularity=weekly&to=2025-12-31", "/v1/oracle/models/acme%2Fbig-2/price-history?granularity=weekly&to=2025-12-31"],
      ["/v1/oracle/models/acme/big-2/price-at?date=2025-10-01", "/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-10-01"],
      ["/v1/oracle/resolve/acme/big-2", "/v1/oracle/resolve/acme%2Fbig-2"]
    ] as const
    for (const [plain, encoded] of pairs) {
      const a = await get(plain)
      const b = await get(encoded)
      expect(a.status, plain).toBe(200)
      expect(await a.text(), plain).toBe(await b.text())
    }
    // The wrong vendor gets the key-level answer either way.
    expect(await refusal("/v1/oracle/models/zeta-labs/big-2")).toMatchObject({ status: 422, error: { param: "key" } })
  })

  it("any key up to the documented length gets the key-level answer, not the router's", async () => {
    for (const key of [`acme%2F${"x".repeat(150)}`, "y".repeat(199)]) {
      for (const path of [`/v1/oracle/models/${key}`, `/v1/oracle/models/${key}/price-history`, `/v1/oracle/models/${key}/price-at?date=2025-10-01`]) {
        const { status, error } = await refusal(path)
        expect(status, path).toBe(404)
        expect(error.message, path).toMatch(/^no model /)
      }
    }
    const offBasket = await body(`/v1/oracle/resolve/${"z".repeat(199)}`)
    expect(offBasket.priceSource).toBe("off-basket")
    for (const path of [`/v1/oracle/models/${"q".repeat(201)}`, `/v1/oracle/resolve/${"q".repeat(201)}`]) {
      expect(await refusal(path), path).toMatchObject({ status: 422, error: { param: "key" } })
    }
  })

  it("a blank key is 422 on every route", async () => {
    for (const path of [
      "/v1/oracle/models/%20",
      "/v1/oracle/models/%20/price-history",
      "/v1/oracle/models/%20%20/price-at?date=2025-10-01",
      "/v1/oracle/models//price-history",
      "/v1/oracle/models//price-at?date=2025-10-01",
      "/v1/oracle/resolve/%20"
    ]) {
      const { status, error } = await refusal(path)
      expect(status, path).toBe(422)
      expect(error, path).toMatchObject({ code: "validation_failed", param: "key" })
      expect(error.message, path).toContain("blank")
    }
  })
})
