/**
 * The public oracle endpoints over a real socket (issue 5), against a service that replayed the fixture history
 * (4 revisions: genesis 2025-06-17, 2025-07-22, 2025-09-08 version change, 2025-12-02 held price change).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"

let server: FixtureServer

type Json = Record<string, any>

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.baseUrl}${path}`, { headers })
const body = async (path: string): Promise<Json> => (await (await get(path)).json()) as Json

beforeAll(async () => {
  server = await startFixtureServer({ RATE_LIMIT_ENABLED: "false" })
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("the SCU", () => {
  it("/scu gives the latest SCU with its family representatives and the index against the baseline", async () => {
    const scu = await body("/v1/oracle/scu")
    expect(scu.referenceWorkload).toEqual({ inputTokens: 1000, outputTokens: 500 })
    expect(scu.methodologyVersion).toBe(1)
    expect(scu.breakdown.methodologyVersion).toBe(1)
    expect(scu.breakdown.familyRepresentatives.map((r: Json) => r.modelKey)).toEqual([
      "acme/big-2",
      "acme/small-1",
      "zeta-labs/zeta-mini",
      "zeta-labs/zeta-pro"
    ])
    const big2 = scu.breakdown.familyRepresentatives[0]
    expect(big2).toEqual({ family: "acme.big", modelKey: "acme/big-2", inputPriceUsdPerMillion: 1, outputPriceUsdPerMillion: 10, blendedCostUsd: 0.006 })
    expect(scu.updatedAt).toBe("2025-12-02T00:00:00.000Z")
    const baseline = await body("/v1/oracle/baseline")
    expect(baseline).toMatchObject({ date: "2025-06-17", methodologyVersion: 1 })
    expect(scu.computeIndex).toBeCloseTo((baseline.scuUsd / scu.scuUsd) * 100, 9)
  })

  it("/latest and /basket describe the latest confirmed revision", async () => {
    const latest = await body("/v1/oracle/latest")
    expect(latest).toMatchObject({ revisionVersion: 4, methodologyVersion: 1, basketSize: 4, workload: { inputTokens: 1000, outputTokens: 500 } })
    const basket = await body("/v1/oracle/basket")
    expect(basket).toMatchObject({ revisionVersion: 4, routingFeeRate: 0.05, scuUsd: latest.scuUsd, lastUpdated: latest.publishedAt })
    const big2 = basket.models.find((m: Json) => m.id === "acme/big-2")
    expect(big2.usdPricePerMillion).toEqual({ input: 1, output: 10 })
    expect(big2.markedUpUsdPricePerMillion).toEqual({ input: 1.05, output: 10.5 })
    expect(big2.weiPricePerMillion).toEqual({ input: "1000000000000000000", output: "10000000000000000000" })
    expect(big2.markedUpWeiPricePerMillion).toEqual({ input: "1050000000000000000", output: "10500000000000000000" })
    expect(big2.cache.cachedInput).toMatchObject({ usdPerMillion: 0.1, ratioOfInput: 0.1, source: "catalog", provenance: "verified" })
    expect(big2.reasoning.reasoningOutput).toMatchObject({ usdPerMillion: 10, source: "catalog" })
    expect(big2).not.toHaveProperty("contextTiers")
  })

  it("/scu-at is a step function: exactly at a publishedAt it is that revision; before genesis 204", async () => {
    expect((await body("/v1/oracle/scu-at?date=2025-09-08T00:00:00Z")).revisionVersion).toBe(3)
    expect((await body("/v1/oracle/scu-at?date=2025-09-07T23:59:59.999Z")).revisionVersion).toBe(2)
    expect((await body("/v1/oracle/scu-at?date=2025-09-08T02:00:00%2B02:00")).revisionVersion).toBe(3)
    const at = await body("/v1/oracle/scu-at?date=2026-01-01T00:00:00Z")
    expect(at).toMatchObject({ at: "2026-01-01T00:00:00.000Z", revisionVersion: 4, publishedAt: "2025-12-02T00:00:00.000Z" })
    expect(at.scuUsd18).toMatch(/^\d+$/)
    expect((await get("/v1/oracle/scu-at?date=2025-06-16T23:59:59Z")).status).toBe(204)
  })

  it("/scu-at refuses a malformed date, a date without time, and the future with 422", async () => {
    for (const date of ["yesterday", "2026-01-01", "2026-01-01T00:00:00", `${new Date().getUTCFullYear() + 1}-01-01T00:00:00Z`]) {
      const response = await get(`/v1/oracle/scu-at?date=${encodeURIComponent(date)}`)
      expect(response.status, date).toBe(422)
      expect(((await response.json()) as Json).error.param).toBe("date")
    }
    expect((await get("/v1/oracle/scu-at")).status).toBe(422)
  })
})

describe("the history", () => {
  it("per-revision has one point per revision", async () => {
    const history = await body("/v1/oracle/history")
    expect(history.granularity).toBe("per-revision")
    expect(history.data.map((p: Json) => [p.revisionVersion, p.date])).toEqual([
      [1, "2025-06-17T00:00:00.000Z"],
      [2, "2025-07-22T00:00:00.000Z"],
      [3, "2025-09-08T00:00:00.000Z"],
      [4, "2025-12-02T00:00:00.000Z"]
    ])
    expect(history).toMatchObject({ count: 4, truncated: false })
  })

  it("daily carries the last revision forward at midnight UTC and caps at limit, dropping the oldest", async () => {
    const daily = await body("/v1/oracle/history?granularity=daily&from=2025-07-20&to=2025-07-24")
    expect(daily.data.map((p: Json) => [p.date, p.revisionVersion])).toEqual([
      ["2025-07-20T00:00:00.000Z", 1],
      ["2025-07-21T00:00:00.000Z", 1],
      ["2025-07-22T00:00:00.000Z", 2],
      ["2025-07-23T00:00:00.000Z", 2],
      ["2025-07-24T00:00:00.000Z", 2]
    ])
    const capped = await body("/v1/oracle/history?granularity=daily&from=2025-07-20&to=2025-07-24&limit=2")
    expect(capped).toMatchObject({ count: 2, truncated: true })
    expect(capped.data.map((p: Json) => p.date)).toEqual(["2025-07-23T00:00:00.000Z", "2025-07-24T00:00:00.000Z"])
  })

  it("answers CSV with the header SPEC.md gives", async () => {
    const response = await get("/v1/oracle/history?granularity=weekly&from=2025-09-01&to=2025-09-30", { accept: "text/csv" })
    expect(response.headers.get("content-type")).toMatch(/^text\/csv/)
    const lines = (await response.text()).split("\r\n")
    expect(lines[0]).toBe("date,scuUsd,computeIndex,revisionVersion,methodologyVersion,metadataHash")
    expect(lines[1]).toMatch(/^2025-09-01T00:00:00.000Z,[0-9.e-]+,[0-9.]+,2,1,0x[0-9a-f]{64}$/)
  })

  it("refuses malformed bounds and limits with 422", async () => {
    for (const query of ["from=soon", "limit=0", "limit=10001", "granularity=hourly", "from=2025-10-01&to=2025-09-01"]) {
      expect((await get(`/v1/oracle/history?${query}`)).status, query).toBe(422)
    }
  })
})

describe("revisions, manifests and the log", () => {
  it("/revisions/{n} gives the confirmed revision with its basket; unknown is 404, malformed 422", async () => {
    const revision = await body("/v1/oracle/revisions/3")
    expect(revision).toMatchObject({ revisionVersion: 3, status: "CONFIRMED", basketSize: 4, publishedAt: "2025-09-08T00:00:00.000Z" })
    expect(revision.basket.models.map((m: Json) => m.modelKey)).toContain("acme/big-2")
    expect(revision.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect((await get("/v1/oracle/revisions/99")).status).toBe(404)
    expect((await get("/v1/oracle/revisions/abc")).status).toBe(422)
  })

  it("/manifest/{metadataHash} serves the manifest whose JCS hashes to it", async () => {
    const { metadataHash } = await body("/v1/oracle/latest")
    const response = await get(`/v1/oracle/manifest/${metadataHash}`)
    expect(response.status).toBe(200)
    const { jcs, metadataHash: hash } = await import("../domain/index/manifest.ts")
    const manifest = (await response.json()) as Parameters<typeof hash>[0]
    expect(hash(manifest)).toBe(metadataHash)
    expect(jcs(manifest)).toContain('"schemaVersion":1')
    expect((await get(`/v1/oracle/manifest/0x${"0".repeat(64)}`)).status).toBe(404)
    expect((await get("/v1/oracle/manifest/0x1234")).status).toBe(422)
  })

  it("/reconstitutions lists every entry with its changes, and /reconstitutions/export is a markdown attachment", async () => {
    const log = await body("/v1/oracle/reconstitutions")
    expect(log.entries.map((e: Json) => [e.revisionVersion, e.previousVersion])).toEqual([
      [1, null],
      [2, 1],
      [3, 2],
      [4, 3]
    ])
    expect(log.entries[0].scuBefore).toBeNull()
    expect(log.entries[2].changes.map((c: Json) => c.type)).toEqual(["ModelRemoved", "ModelAdded"])
    const exported = await get("/v1/oracle/reconstitutions/export")
    expect(exported.headers.get("content-type")).toMatch(/^text\/markdown/)
    expect(exported.headers.get("content-disposition")).toMatch(/^attachment; filename=/)
    expect(await exported.text()).toMatch(/^# SCU index reconstitution log/)
  })
})

describe("models and catalog", () => {
  it("/models lists members and retired ex-members; /models/{key} accepts canonical or bare keys", async () => {
    const models = await body("/v1/oracle/models")
    const big1 = models.models.find((m: Json) => m.id === "acme/big-1")
    expect(big1).toMatchObject({ inBasket: false, retiredAtRevision: 3 })
    expect(models.models.find((m: Json) => m.id === "acme/big-2")).toMatchObject({ inBasket: true, retiredAtRevision: null })
    for (const key of ["acme%2Fbig-2", "ACME%2FBig-2", "big-2"]) {
      const response = await get(`/v1/oracle/models/${key}`)
      expect(response.status, key).toBe(200)
      expect(((await response.json()) as Json).id).toBe("acme/big-2")
    }
    expect((await body("/v1/oracle/models/acme%2Fbig-1")).inBasket).toBe(false)
  })

  it("/models/{key}: an unknown vendor or a model under the wrong vendor is 422, an unknown model 404", async () => {
    const wrongVendor = await get("/v1/oracle/models/zeta-labs%2Fbig-2")
    expect(wrongVendor.status).toBe(422)
    expect(((await wrongVendor.json()) as Json).error).toMatchObject({ code: "validation_failed", param: "key", type: "invalid_request_error" })
    expect((await get("/v1/oracle/models/nobody%2Fbig-2")).status).toBe(422)
    expect((await get("/v1/oracle/models/acme%2Fhuge-9")).status).toBe(404)
    // Priced but never in the basket: not a model of the index.
    expect((await get("/v1/oracle/models/acme%2Fembed-1")).status).toBe(404)
  })

  it("/catalog lists every priced model with per-number provenance and context tiers, cached for a minute", async () => {
    const response = await get("/v1/oracle/catalog")
    expect(response.headers.get("cache-control")).toBe("public, max-age=60")
    const catalog = (await response.json()) as Json
    expect(catalog.truncated).toBe(false)
    // Six chat models; the embedding model (input price only) is listed apart, in embeddingModels.
    expect(catalog.models).toHaveLength(6)
    expect(catalog.models.every((m: Json) => m.kind === "text" && typeof m.currentPrice.outputPriceUsdPerMillion === "number")).toBe(true)
    const big2 = catalog.models.find((m: Json) => m.modelKey === "acme/big-2")
    expect(big2).toMatchObject({ indexMember: true, integrated: false, maxInputTokens: 1000000, provider: { key: "acme", name: "Acme AI" } })
    expect(big2.currentPrice).toMatchObject({ inputPriceUsdPerMillion: 1, outputPriceUsdPerMillion: 10, provenance: { input: "verified", output: "verified" } })
    expect(big2).not.toHaveProperty("contextTiers")
    const zetaPro = catalog.models.find((m: Json) => m.modelKey === "zeta-labs/zeta-pro")
    expect(zetaPro.cache.cachedInput.provenance).toBe("inferred")
  })

  it("/catalog lists the embedding models apart: kind, input price, dimensions, batch size and price history", async () => {
    const catalog = await body("/v1/oracle/catalog")
    expect(catalog.models.map((m: Json) => m.modelKey)).not.toContain("acme/embed-1")
    expect(catalog.embeddingModels).toEqual([
      {
        modelKey: "acme/embed-1",
        displayName: "Embed 1",
        provider: { key: "acme", name: "Acme AI" },
        family: "acme.embed",
        kind: "embedding",
        releasedAt: "2025-01-01T00:00:00.000Z",
        currentPrice: { inputPriceUsdPerMillion: 0.02, provenance: "verified", observedAt: expect.any(String) },
        priceSources: {
          input: { provenance: "verified", sourceUrl: "https://acme.example/pricing", checkedAt: "2026-11-26T00:00:00.000Z", derivedFrom: null, promotionUntil: null },
          note: null
        },
        dimensions: 1024,
        dimensionOptions: [256, 512, 1024],
        flexibleDimensions: false,
        maxInputTokens: 8192,
        maxBatchInputs: 128,
        priceHistory: [{ effectiveFrom: "2025-01-01T00:00:00.000Z", inputPriceUsdPerMillion: 0.02, provenance: "verified", observedAt: expect.any(String) }],
        integrated: false
      }
    ])
    // Billed per input token with the markup, apart from the chat models' input and output.
    const pricing = await body("/v1/oracle/pricing")
    expect(pricing.models).not.toHaveProperty("acme/embed-1")
    expect(pricing.embeddingModels).toEqual({ "acme/embed-1": { input: { weiPerMillion: "21000000000000000", usdPerMillion: 0.021, provenance: "verified" } } })
    // Its price history is the catalog's: price-at and price-history quote output prices, which it does not have.
    for (const path of ["price-history", "price-at?date=2026-01-01T00:00:00Z"]) {
      const response = await get(`/v1/oracle/models/acme%2Fembed-1/${path}`)
      expect(response.status, path).toBe(404)
      expect(((await response.json()) as Json).error.message, path).toContain("embeddingModels[].priceHistory")
    }
  })

  it("/catalog names the vendor page and reading day behind each verified number, and none behind an inferred one", async () => {
    const catalog = await body("/v1/oracle/catalog")
    const big2 = catalog.models.find((m: Json) => m.modelKey === "acme/big-2")
    const read = { provenance: "verified", sourceUrl: "https://acme.example/pricing", checkedAt: "2026-11-26T00:00:00.000Z", derivedFrom: null, promotionUntil: null }
    expect(big2.priceSources).toEqual({
      input: read,
      output: read,
      cachedInput: read,
      cacheWrite5m: null,
      cacheWrite1h: null,
      reasoningOutput: read,
      contextTiers: [],
      note: "input price halved"
    })
    const zetaPro = catalog.models.find((m: Json) => m.modelKey === "zeta-labs/zeta-pro")
    expect(zetaPro.priceSources.input).toMatchObject({ provenance: "verified", sourceUrl: "https://zeta.example/docs/pricing" })
    expect(zetaPro.priceSources.cachedInput).toEqual({
      provenance: "inferred",
      sourceUrl: null,
      checkedAt: null,
      derivedFrom: "10% of input, the ratio the vendor's caching guide states",
      promotionUntil: null
    })
    // The component published beside it links no vendor page either: none states the number.
    expect(zetaPro.cache.cachedInput.sourceUrl).toBeNull()
    expect(big2.cache.cachedInput.sourceUrl).toBe("https://acme.example/pricing")
  })

  it("/pricing gives every figure with the 5% markup and its provenance", async () => {
    const pricing = await body("/v1/oracle/pricing")
    expect(pricing).toMatchObject({ object: "pricing", pegUsd: 1 })
    expect(pricing.models["acme/big-2"].input).toEqual({ weiPerMillion: "1050000000000000000", usdPerMillion: 1.05, provenance: "verified" })
    expect(pricing.models["acme/big-2"].cache.cachedInput).toMatchObject({ usdPerMillion: 0.105 })
    expect(pricing.models["acme/small-1"].cache).toBeNull()
  })
})

describe("health, contract and methodology", () => {
  it("/health reports the latest revision and freshness", async () => {
    const health = await body("/v1/oracle/health")
    expect(health).toMatchObject({ latestRevisionVersion: 4, methodologyVersion: 1, pendingRevision: null })
    expect(Object.keys(health).sort()).toEqual(
      ["lastSyncAt", "latestRevisionConfirmedAt", "latestRevisionVersion", "methodologyVersion", "pendingRevision", "stale"]
    )
  })

  it("/contract-metadata names the registry and hashes its deployed code, cached 5 minutes", async () => {
    const response = await get("/v1/oracle/contract-metadata")
    expect(response.headers.get("cache-control")).toBe("public, max-age=300")
    const metadata = (await response.json()) as Json
    expect(metadata).toMatchObject({ chainId: 8453, version: "1.0.0" })
    expect(metadata.address).toMatch(/^0x[0-9a-f]{40}$/)
    expect(metadata.bytecodeHash).toMatch(/^0x[0-9a-f]{64}$/)
  })

  it("/methodology lists the versions with the active one; /methodology/{v} gives one or 404", async () => {
    const changelog = await body("/v1/oracle/methodology")
    expect(changelog.activeVersion).toBe(1)
    expect(changelog.entries[0]).toMatchObject({ version: 1, meanType: "geometric", weighting: "equal", cacheReasoningInIndex: false })
    expect((await body("/v1/oracle/methodology/1")).familyRule.oneFamilyOneSlot).toBe(true)
    expect((await get("/v1/oracle/methodology/2")).status).toBe(404)
    expect((await get("/v1/oracle/methodology/x")).status).toBe(422)
  })
})

describe("headers", () => {
  it("every oracle response, errors included, carries X-Methodology-Version and the service-desc link", async () => {
    for (const path of ["/v1/oracle/scu", "/v1/oracle/models/nobody%2Fx", "/v1/oracle/revisions/99", "/v1/oracle/no-such-endpoint"]) {
      const response = await get(path)
      expect(response.headers.get("x-methodology-version"), path).toBe("1")
      expect(response.headers.get("link"), path).toBe('</v1/openapi.yaml>; rel="service-desc"; type="text/yaml"')
    }
    expect((await get("/v1/status")).headers.get("x-methodology-version")).toBeNull()
  })
})

describe("a model's price at an instant and over time", () => {
  it("/price-at answers from the manifest in force when it attests the model, else from the catalog", async () => {
    const attested = await get("/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-10-01T00:00:00Z")
    expect(attested.headers.get("cache-control")).toBe("public, max-age=60")
    expect(await attested.json()).toMatchObject({
      source: "manifest",
      modelKey: "acme/big-2",
      inputPriceUsdPerMillion: 2,
      outputPriceUsdPerMillion: 10,
      observedAt: "2025-09-08T00:00:00.000Z",
      revisionVersion: 3,
      methodologyVersion: 1,
      family: "acme.big"
    })
    // Released 2025-09-01, not in the basket until revision 3 (2025-09-08): the catalog answers.
    const fromCatalog = (await body("/v1/oracle/models/big-2/price-at?date=2025-09-03T00:00:00Z")) as Json
    expect(fromCatalog).toMatchObject({ source: "catalog", inputPriceUsdPerMillion: 2 })
    expect(fromCatalog).not.toHaveProperty("revisionVersion")
    // A model that left the basket: the catalog answers after it left.
    expect(await body("/v1/oracle/models/acme%2Fbig-1/price-at?date=2025-10-01T00:00:00Z")).toMatchObject({ source: "catalog", inputPriceUsdPerMillion: 3 })
    expect((await get("/v1/oracle/models/acme%2Fbig-2/price-at?date=2025-01-01T00:00:00Z")).status).toBe(404)
    expect((await get("/v1/oracle/models/acme%2Fnothing/price-at?date=2025-10-01T00:00:00Z")).status).toBe(404)
    expect((await get("/v1/oracle/models/acme%2Fbig-2/price-at?date=2099-01-01T00:00:00Z")).status).toBe(422)
    expect((await get("/v1/oracle/models/acme%2Fbig-2/price-at?date=soon")).status).toBe(422)
  })

  it("/price-history mixes manifest and catalog points, collapses repeats, and speaks CSV", async () => {
    const history = (await body("/v1/oracle/models/acme%2Fbig-2/price-history?from=2025-09-01&to=2025-12-31")) as Json
    expect(history).toMatchObject({ modelKey: "acme/big-2", family: "acme.big", granularity: "per-revision", unavailableRevisions: [] })
    expect(history.data.map((p: Json) => [p.date.slice(0, 10), p.source, p.inputPriceUsdPerMillion])).toEqual([
      ["2025-09-01", "catalog", 2],
      ["2025-09-08", "manifest", 2],
      ["2025-12-02", "manifest", 1]
    ])
    const csv = await (await get("/v1/oracle/models/acme%2Fbig-2/price-history?granularity=weekly&from=2025-09-01&to=2025-09-30", { accept: "text/csv" })).text()
    const lines = csv.split("\r\n")
    expect(lines[0]).toBe("date,inputPriceUsdPerMillion,outputPriceUsdPerMillion,source,revisionVersion,methodologyVersion,metadataHash")
    expect(lines[1]).toBe("2025-09-01T00:00:00.000Z,2,10,catalog,,,")
    expect(lines[2]).toMatch(/^2025-09-08T00:00:00.000Z,2,10,manifest,3,1,0x[0-9a-f]{64}$/)
    const capped = (await body("/v1/oracle/models/acme%2Fbig-2/price-history?granularity=daily&from=2025-09-01&to=2025-09-30&limit=5")) as Json
    expect(capped).toMatchObject({ count: 5, truncated: true })
    expect(capped.data[4].date).toBe("2025-09-30T00:00:00.000Z")
    expect((await get("/v1/oracle/models/acme%2Fnothing/price-history")).status).toBe(404)
    expect((await get("/v1/oracle/models/nobody%2Fbig-2/price-history")).status).toBe(422)
  })
})

describe("name resolution", () => {
  it("normalizes names, narrows to the named vendor and says where the price comes from", async () => {
    expect(await body("/v1/oracle/resolve/ACME%2FBig-2%20(latest)")).toMatchObject({
      inputKey: "ACME/Big-2 (latest)",
      resolvedKey: "acme/big-2",
      family: "acme.big",
      provider: { key: "acme", name: "Acme AI" },
      priceSource: "oracle-basket",
      prices: { inputUsdPerMillion: 1, outputUsdPerMillion: 10, provenance: { input: "verified", output: "verified" } },
      inBasket: true
    })
    expect(await body("/v1/oracle/resolve/big-1-20250501")).toMatchObject({ resolvedKey: "acme/big-1", priceSource: "oracle-catalog", inBasket: false })
    const unknown = await body("/v1/oracle/resolve/acme%2Fgiant-7")
    expect(unknown).toMatchObject({ resolvedKey: "acme/giant-7", priceSource: "off-basket", prices: null, provider: null })
    const wrongVendor = await get("/v1/oracle/resolve/nobody%2Fbig-2")
    expect(wrongVendor.status).toBe(422)
  })

  it("resolves a batch in input order, isolating every key, up to 100", async () => {
    const batch = (await body("/v1/oracle/resolve?keys=zeta-pro,nobody%2Fx,big-2,acme%2Fnope")) as Json
    expect(batch.results.map((r: Json) => [r.inputKey, r.resolvedKey, r.priceSource])).toEqual([
      ["zeta-pro", "zeta-labs/zeta-pro", "oracle-basket"],
      ["nobody/x", "nobody/x", "off-basket"],
      ["big-2", "acme/big-2", "oracle-basket"],
      ["acme/nope", "acme/nope", "off-basket"]
    ])
    const tooMany = Array.from({ length: 101 }, (_, i) => `m${i}`).join(",")
    expect((await get(`/v1/oracle/resolve?keys=${tooMany}`)).status).toBe(422)
  })
})

describe("stats and activity", () => {
  it("/stats aggregates revisions, the catalog and the SCU's range", async () => {
    const stats = await body("/v1/oracle/stats")
    expect(stats.revisions).toMatchObject({ confirmed: 4, genesis: { revisionVersion: 1, publishedAt: "2025-06-17T00:00:00.000Z" } })
    expect(stats).toMatchObject({ basketSize: 4, catalog: { providers: 2, families: 5, models: 7, modelsEverInBasket: 5 } })
    expect(stats.reconstitutionChanges).toEqual({ ModelAdded: 5, ModelRemoved: 1, PriceChanged: 1 })
    expect(stats.scu.lowest.scuUsd).toBeLessThanOrEqual(stats.scu.highest.scuUsd)
  })

  it("/activity pages through events newest first, and refuses out-of-range paging with 422", async () => {
    const first = await body("/v1/oracle/activity?limit=2")
    expect(first).toMatchObject({ object: "list", limit: 2, offset: 0, total: 11, hasMore: true })
    expect(first.data.map((e: Json) => [e.id, e.type])).toEqual([
      ["r4", "revision.published"],
      ["r4.1", "price.changed"]
    ])
    const last = await body("/v1/oracle/activity?limit=5&offset=10")
    expect(last).toMatchObject({ total: 11, hasMore: false })
    expect(last.data.map((e: Json) => e.id)).toEqual(["r1.2"])
    for (const query of ["limit=0", "limit=101", "offset=-1", "offset=abc"]) {
      expect((await get(`/v1/oracle/activity?${query}`)).status, query).toBe(422)
    }
  })
})

// The fast path against the stack: test/fast-path.test.ts (two servers, ORACLE_FAST_PATH on and off).
