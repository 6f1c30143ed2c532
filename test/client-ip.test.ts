/**
 * The client address that rate limits key on: the socket's, or X-Forwarded-For's when TRUST_PROXY says
 * the proxy in front is ours.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clientAddressOf } from "../src/http/requestContext.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

describe("clientAddressOf", () => {
  const forwarded = "203.0.113.7, 198.51.100.2"

  it("uses the socket address unless the proxy is trusted", () => {
    expect(clientAddressOf("10.1.1.1", forwarded, { _tag: "None" })).toBe("10.1.1.1")
    expect(clientAddressOf("::ffff:10.1.1.1", undefined, { _tag: "None" })).toBe("10.1.1.1")
  })

  it("with TRUST_PROXY=true takes the left-most forwarded address", () => {
    expect(clientAddressOf("10.1.1.1", forwarded, { _tag: "All" })).toBe("203.0.113.7")
  })

  it("with TRUST_PROXY=N counts N proxies from the right", () => {
    expect(clientAddressOf("10.1.1.1", forwarded, { _tag: "Hops", hops: 1 })).toBe("198.51.100.2")
    expect(clientAddressOf("10.1.1.1", forwarded, { _tag: "Hops", hops: 2 })).toBe("203.0.113.7")
    expect(clientAddressOf("10.1.1.1", forwarded, { _tag: "Hops", hops: 9 })).toBe("203.0.113.7")
  })

  it("ignores forwarded entries that are not addresses", () => {
    expect(clientAddressOf("10.1.1.1", "not-an-ip, unknown", { _tag: "All" })).toBe("10.1.1.1")
    expect(clientAddressOf("10.1.1.1", "garbage, 2001:db8::1", { _tag: "All" })).toBe("2001:db8::1")
  })
})

describe("over a real socket", () => {
  let database: TestDatabase
  const servers: Record<string, TestServer> = {}

  beforeAll(async () => {
    database = await createTestDatabase()
    for (const trust of ["false", "true", "1"]) {
      servers[trust] = await startTestServer({ DATABASE_URL: database.url, TRUST_PROXY: trust })
    }
  })

  afterAll(async () => {
    for (const server of Object.values(servers)) await server.close()
    await database?.close()
  })

  const ipSeenBy = async (trust: string, forwardedFor?: string) => {
    const response = await fetch(`${servers[trust]!.baseUrl}/test/client-ip`, {
      headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }
    })
    return ((await response.json()) as { ip: string | null }).ip
  }

  it("by default sees the socket's peer and ignores X-Forwarded-For", async () => {
    expect(await ipSeenBy("false")).toBe("127.0.0.1")
    expect(await ipSeenBy("false", "203.0.113.7")).toBe("127.0.0.1")
  })

  it("with TRUST_PROXY=true sees the forwarded client", async () => {
    expect(await ipSeenBy("true", "203.0.113.7, 10.0.0.1")).toBe("203.0.113.7")
    expect(await ipSeenBy("true")).toBe("127.0.0.1")
  })

  it("with TRUST_PROXY=1 sees the address our one proxy appended", async () => {
    expect(await ipSeenBy("1", "198.18.0.9, 203.0.113.7")).toBe("203.0.113.7")
  })
})
