/**
 * SPEC "Errors" over a real socket: every failure reaches the client as the one envelope, with the
 * status, type and code of the error table.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { sendLargeBody } from "./support/http.ts"
import { startTestServer, type TestServer } from "./support/server.ts"
import { startTcpProxy, type TcpProxy } from "./support/tcpProxy.ts"

let database: TestDatabase
let proxy: TcpProxy
let server: TestServer

beforeAll(async () => {
  database = await createTestDatabase()
  const target = new URL(database.url)
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) })
  const throughProxy = new URL(database.url)
  throughProxy.port = String(proxy.port)
  server = await startTestServer({ DATABASE_URL: throughProxy.toString(), DATABASE_CONNECT_TIMEOUT_MS: "1000" })
})

afterAll(async () => {
  await server?.close()
  await proxy?.close()
  await database?.close()
})

const envelopeKeys = new Set(["message", "type", "code", "param", "details", "issues"])

const expectEnvelope = async (response: Response, status: number, code: string, type: string) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const body = (await response.json()) as { error: Record<string, unknown> }
  expect(Object.keys(body)).toEqual(["error"])
  for (const key of Object.keys(body.error)) expect(envelopeKeys).toContain(key)
  expect(body.error.code).toBe(code)
  expect(body.error.type).toBe(type)
  expect(typeof body.error.message).toBe("string")
  expect((body.error.message as string).length).toBeGreaterThan(0)
  return body.error
}

const postJson = (path: string, body: string) =>
  fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body })

describe("schema validation failures", () => {
  it("answers 422 validation_error listing every offending field, without param", async () => {
    const error = await expectEnvelope(
      await postJson("/test/echo", JSON.stringify({ name: "", count: 50, tags: ["ok", 7] })),
      422,
      "validation_failed",
      "validation_error"
    )
    const issues = error.issues as Array<{ param: string; path: Array<string | number>; message: string }>
    expect(issues.map((issue) => issue.param).sort()).toEqual(["count", "name", "tags.1"])
    expect(issues.find((issue) => issue.param === "tags.1")?.path).toEqual(["tags", 1])
    expect(error.param).toBeUndefined()
  })

  it("sets param when a single field failed", async () => {
    const wrongType = await expectEnvelope(
      await postJson("/test/echo", JSON.stringify({ name: "x", count: "3" })),
      422,
      "validation_failed",
      "validation_error"
    )
    expect(wrongType.param).toBe("count")
    expect(wrongType.issues).toHaveLength(1)

    const missing = await expectEnvelope(
      await postJson("/test/echo", JSON.stringify({ name: "x" })),
      422,
      "validation_failed",
      "validation_error"
    )
    expect(missing.param).toBe("count")
  })

  it("validates query parameters the same way", async () => {
    const error = await expectEnvelope(
      await fetch(`${server.baseUrl}/test/slow?ms=soon`),
      422,
      "validation_failed",
      "validation_error"
    )
    expect(error.param).toBe("ms")
  })

  it("passes a valid body through", async () => {
    const response = await postJson("/test/echo", JSON.stringify({ name: "x", count: 3 }))
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ name: "x", count: 3 })
  })
})

describe("request-shape failures", () => {
  it("answers malformed JSON with 400 bad_request", async () => {
    await expectEnvelope(await postJson("/test/echo", '{"name": "x", "count": '), 400, "bad_request", "invalid_request_error")
  })

  it("answers a body that is not JSON with 400 bad_request", async () => {
    for (const contentType of ["multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "text/plain"]) {
      const response = await fetch(`${server.baseUrl}/test/echo`, {
        method: "POST",
        headers: { "content-type": contentType },
        body: '{"name":"x","count":1}'
      })
      const error = await expectEnvelope(response, 400, "bad_request", "invalid_request_error")
      expect(error.message).toContain("application/json")
    }
    const unspecified = await fetch(`${server.baseUrl}/test/echo`, {
      method: "POST",
      body: new Blob(['{"name":"x","count":1}'])
    })
    expect(unspecified.status).toBe(200)
  })

  it("answers an unknown path with 404 not_found", async () => {
    await expectEnvelope(await fetch(`${server.baseUrl}/v1/no-such-thing`), 404, "not_found", "not_found")
    await expectEnvelope(await fetch(`${server.baseUrl}/`), 404, "not_found", "not_found")
  })

  it("answers a known path with a wrong method with 405 and Allow", async () => {
    const onStatus = await fetch(`${server.baseUrl}/v1/status`, { method: "DELETE" })
    expect(onStatus.headers.get("allow")).toBe("GET, HEAD")
    const error = await expectEnvelope(onStatus, 405, "method_not_allowed", "invalid_request_error")
    expect(error.details).toEqual({ allow: ["GET", "HEAD"] })

    const onEcho = await fetch(`${server.baseUrl}/test/echo`)
    expect(onEcho.headers.get("allow")).toBe("POST")
    await expectEnvelope(onEcho, 405, "method_not_allowed", "invalid_request_error")
  })
})

describe("the 4 MiB body ceiling", () => {
  const FIVE_MIB = 5 * 1024 * 1024

  it("refuses a declared 5 MiB body with 413 before reading it", async () => {
    const response = await sendLargeBody({ port: server.port, path: "/test/echo", totalBytes: FIVE_MIB, chunked: false })
    expect(response.status).toBe(413)
    const body = JSON.parse(response.body) as { error: { code: string; type: string; issues?: unknown } }
    expect(body.error.code).toBe("payload_too_large")
    expect(body.error.type).toBe("invalid_request_error")
    expect(body.error.issues).toBeUndefined()
    // The answer came while the client was still sending: the body was never read, let alone buffered.
    expect(response.bytesSentBeforeResponse).toBeLessThan(1024 * 1024)
  })

  it("refuses a chunked body while reading it, as soon as it passes the ceiling", async () => {
    const response = await sendLargeBody({ port: server.port, path: "/test/echo", totalBytes: FIVE_MIB, chunked: true })
    expect(response.status).toBe(413)
    expect(JSON.parse(response.body).error.code).toBe("payload_too_large")
    expect(response.bytesSentBeforeResponse).toBeLessThan(FIVE_MIB)
  })

  it("takes a body of exactly 4194304 bytes and refuses one byte more", async () => {
    const json = JSON.stringify({ name: "x", count: 1 })
    const padded = (size: number) => json + " ".repeat(size - json.length)
    const atCeiling = await postJson("/test/echo", padded(4_194_304))
    expect(atCeiling.status).toBe(200)
    const over = await postJson("/test/echo", padded(4_194_305))
    expect(over.status).toBe(413)
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("payload_too_large")
  })

  it("keeps serving after refusing", async () => {
    expect((await fetch(`${server.baseUrl}/v1/status`)).status).toBe(200)
  })
})

describe("server-side failures", () => {
  it("answers a defect with 500 internal_error and no internals", async () => {
    const response = await fetch(`${server.baseUrl}/test/defect`, { headers: { "x-request-id": "defect-probe-1" } })
    const text = await response.clone().text()
    const error = await expectEnvelope(response, 500, "internal_error", "server_error")
    expect(error.message).toContain("defect-probe-1")
    for (const leak of ["SecretLedgerRepository", "secret.ts", "boom", "stack", "Error:", "    at ", "Die", "Cause"]) {
      expect(text).not.toContain(leak)
    }
  })

  it("answers 503 service_unavailable while the database is unreachable, and recovers", async () => {
    expect((await fetch(`${server.baseUrl}/v1/status`)).status).toBe(200)
    proxy.cut()
    try {
      await expectEnvelope(await fetch(`${server.baseUrl}/v1/status`), 503, "service_unavailable", "server_error")
    } finally {
      proxy.restore()
    }
    expect((await fetch(`${server.baseUrl}/v1/status`)).status).toBe(200)
  })
})

describe("request ids", () => {
  it("keeps and echoes an incoming X-Request-Id, on success and on error", async () => {
    const ok = await fetch(`${server.baseUrl}/v1/status`, { headers: { "x-request-id": "client-chosen-42" } })
    expect(ok.headers.get("x-request-id")).toBe("client-chosen-42")
    const missing = await fetch(`${server.baseUrl}/v1/nope`, { headers: { "x-request-id": "client-chosen-43" } })
    expect(missing.headers.get("x-request-id")).toBe("client-chosen-43")
  })

  it("assigns one when none (or an unusable one) is sent", async () => {
    const assigned = (await fetch(`${server.baseUrl}/v1/status`)).headers.get("x-request-id")
    expect(assigned).toMatch(/^[0-9a-f-]{36}$/)
    const replaced = (await fetch(`${server.baseUrl}/v1/status`, { headers: { "x-request-id": "bad id with spaces" } }))
      .headers.get("x-request-id")
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/)
  })
})
