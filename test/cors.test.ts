/**
 * Browsers (issue 8): a page on any origin can read the public API, preflight included, and never with credentials.
 * Over a real socket, against a service that replayed the fixture history (so the oracle answers 200s, and the hot
 * reads come from the fast path as well as from the request stack).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PUBLIC_CORS_HEADERS } from "../src/http/cors.ts"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"

let server: FixtureServer

const ORIGIN = "https://dashboard.example"

/** Each test reads as its own client address (TRUST_PROXY), so the rate limits of one never meet another's. */
let nextClient = 1
const client = () => `198.51.100.${nextClient++}`

const request = (path: string, init: { method?: string; headers?: Record<string, string>; from?: string } = {}) =>
  fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { origin: ORIGIN, "x-forwarded-for": init.from ?? client(), ...init.headers },
    redirect: "manual"
  })

const expectPublicCors = (response: Response, what: string) => {
  for (const [name, value] of Object.entries(PUBLIC_CORS_HEADERS)) expect(response.headers.get(name), `${what}: ${name}`).toBe(value)
  // Never credentialed: the origin is a wildcard, not the caller's, and credentials are never allowed.
  expect(response.headers.get("access-control-allow-credentials"), what).toBeNull()
  expect(response.headers.get("access-control-allow-origin"), what).not.toBe(ORIGIN)
}

beforeAll(async () => {
  server = await startFixtureServer({ TRUST_PROXY: "true" })
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("public reads from another origin", () => {
  it("every public GET carries the CORS headers: hot reads, other oracle reads, documents, readiness", async () => {
    for (const path of [
      "/v1/oracle/scu",
      "/v1/oracle/catalog",
      "/v1/oracle/scu?",
      "/v1/oracle/health",
      "/v1/oracle/models/acme%2Fbig-2",
      "/v1/oracle/history?granularity=weekly",
      "/v1/openapi.json",
      "/openapi.yaml",
      "/v1/docs",
      "/v1/status"
    ]) {
      const response = await request(path)
      expect(response.status, path).toBe(200)
      expectPublicCors(response, path)
    }
  })

  it("exposes the headers a script needs to read", () => {
    const exposed = PUBLIC_CORS_HEADERS["access-control-expose-headers"]!.split(", ")
    expect(exposed).toEqual(
      expect.arrayContaining(["X-Request-Id", "X-Methodology-Version", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "ETag", "Link"])
    )
  })

  it("errors on public paths carry them too: 404, 422, 400, 405, 429", async () => {
    const notFound = await request("/v1/oracle/models/acme%2Fnever-listed")
    expect(notFound.status).toBe(404)
    expectPublicCors(notFound, "404 model")
    const noRoute = await request("/v1/oracle/no-such-endpoint")
    expect(noRoute.status).toBe(404)
    expectPublicCors(noRoute, "404 route")
    const invalid = await request("/v1/oracle/activity?limit=abc")
    expect(invalid.status).toBe(422)
    expect(((await invalid.json()) as { error: { param: string } }).error.param).toBe("limit")
    expectPublicCors(invalid, "422")
    const malformed = await request("/v1/oracle/history?from=%zz")
    expect(malformed.status).toBe(400)
    expectPublicCors(malformed, "400")
    const wrongMethod = await request("/v1/oracle/scu", { method: "DELETE" })
    expect(wrongMethod.status).toBe(405)
    expectPublicCors(wrongMethod, "405")

    const from = client()
    let limited: Response | undefined
    for (let i = 0; i < 10 && limited === undefined; i++) {
      const response = await request("/v1/oracle/stats", { from })
      if (response.status === 429) limited = response
    }
    expect(limited?.status).toBe(429)
    expectPublicCors(limited!, "429")
    expect(limited!.headers.get("retry-after")).not.toBeNull()
  })
})

describe("preflight", () => {
  const preflight = (path: string, headers: Record<string, string> = {}, from?: string) =>
    request(path, {
      method: "OPTIONS",
      headers: { "access-control-request-method": "GET", ...headers },
      ...(from === undefined ? {} : { from })
    })

  it("is 204 with the methods, the requested headers, a max age and the exposed headers", async () => {
    for (const path of ["/v1/oracle/scu", "/v1/oracle/models/openai%2Fgpt-5.5", "/v1/oracle/history", "/v1/openapi.yaml", "/v1/status"]) {
      const response = await preflight(path, { "access-control-request-headers": "content-type, authorization, x-request-id, x-client-build" })
      expect(response.status, path).toBe(204)
      expectPublicCors(response, `OPTIONS ${path}`)
      expect(response.headers.get("access-control-allow-methods"), path).toBe("GET, HEAD, OPTIONS")
      const allowed = response.headers.get("access-control-allow-headers")!.toLowerCase().split(", ")
      expect(allowed, path).toEqual(expect.arrayContaining(["content-type", "authorization", "x-request-id", "x-client-build"]))
      expect(Number(response.headers.get("access-control-max-age")), path).toBeGreaterThan(0)
      expect(await response.text(), path).toBe("")
    }
  })

  it("allows the usual headers when none are named, and ignores malformed names", async () => {
    const plain = await preflight("/v1/oracle/scu")
    expect(plain.headers.get("access-control-allow-headers")!.toLowerCase().split(", ")).toEqual(
      expect.arrayContaining(["content-type", "authorization", "x-request-id"])
    )
    const odd = await preflight("/v1/oracle/scu", { "access-control-request-headers": "x-ok, bad header, (nope)" })
    expect(odd.headers.get("access-control-allow-headers")).toContain("x-ok")
    expect(odd.headers.get("access-control-allow-headers")).not.toContain("nope")
  })

  it("does not count against the oracle rate limit", async () => {
    const from = client()
    for (let i = 0; i < 12; i++) expect((await preflight("/v1/oracle/stats", {}, from)).status).toBe(204)
    const read = await request("/v1/oracle/stats", { from })
    expect(read.status).toBe(200)
    expect(read.headers.get("x-ratelimit-remaining")).toBe("4")
  })

  it("is 404 for a path no route has", async () => {
    const response = await preflight("/v1/oracle/no-such-endpoint")
    expect(response.status).toBe(404)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("not_found")
  })
})

describe("what is not public", () => {
  it("the maintainer API answers with no CORS headers at all, preflight included", async () => {
    const read = await request("/v1/admin/revisions")
    expect(read.status).toBe(401)
    const options = await request("/v1/admin/revisions", { method: "OPTIONS", headers: { "access-control-request-method": "GET" } })
    expect(options.status).not.toBe(204)
    for (const response of [read, options]) {
      for (const name of ["access-control-allow-origin", "access-control-allow-methods", "access-control-allow-credentials"]) {
        expect(response.headers.get(name), name).toBeNull()
      }
    }
  })
})

describe("a model key written with a plain slash", () => {
  it("gets the same preflight and the same 405 for a body as its one-segment form", async () => {
    const response = await request("/v1/oracle/models/openai/gpt-5.5/price-history", {
      method: "OPTIONS",
      headers: { "access-control-request-method": "GET" }
    })
    expect(response.status).toBe(204)
    expectPublicCors(response, "OPTIONS plain-slash key")
    const posted = await fetch(`${server.baseUrl}/v1/oracle/models/openai/gpt-5.5`, {
      method: "POST",
      headers: { "content-type": "text/plain", "x-forwarded-for": client() },
      body: "x".repeat(64)
    })
    expect(posted.status).toBe(405)
    expect(posted.headers.get("allow")).toBe("GET, HEAD")
  })
})
