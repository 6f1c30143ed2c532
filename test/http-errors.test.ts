/**
 * SPEC "Errors" over a real socket: every failure reaches the client as the one envelope, with the
 * status, type and code of the error table.
 */
import * as Http from "node:http"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { guardRequestHead, installClientErrorHandler, SERVER_OPTIONS } from "../src/http/clientLimits.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { type RawResponse, sendLargeBody } from "./support/http.ts"
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

  it("quotes a refused value of a megabyte only in part, so the answer stays small", async () => {
    const huge = "a".repeat(1_000_000)
    // A test route and a product one (the e-mail sign-in): the bound is where every 422 is built, not per endpoint.
    for (const [path, body, field] of [
      ["/test/echo", { name: "x", count: huge }, "count"],
      ["/v1/auth/email/start", { email: huge }, "email"]
    ] as const) {
      const response = await postJson(path, JSON.stringify(body))
      const text = await response.text()
      expect(response.status).toBe(422)
      expect(text.length).toBeLessThan(8 * 1024)
      const error = (JSON.parse(text) as { error: { code: string; param?: string; message: string; issues: Array<{ param: string; message: string }> } }).error
      expect(error.code).toBe("validation_failed")
      expect(error.param).toBe(field)
      expect(error.issues.map((issue) => issue.param)).toEqual([field])
      expect(error.message).toContain(field)
    }
    // Where the message quotes the value, it shows its start, an ellipsis and the length it had.
    const quoted = (await (await postJson("/test/echo", JSON.stringify({ name: "x", count: huge }))).json()) as {
      error: { issues: Array<{ message: string }> }
    }
    expect(quoted.error.issues[0]!.message).toMatch(/actual "aaaa+… \(1000002 characters\)$/)
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

  it("answers a body nesting deeper than 64 levels with 422, not a stack overflow", async () => {
    const deep = `{"name":${"[".repeat(5_000)}${"]".repeat(5_000)},"count":1}`
    const error = await expectEnvelope(await postJson("/test/echo", deep), 422, "validation_failed", "invalid_request_error")
    expect(error.message).toContain("64 levels")
  })

  it("answers an empty body under a type that is not JSON as the missing body it is, at once", async () => {
    for (const contentType of ["multipart/form-data; boundary=x", "multipart/form-data", "application/x-www-form-urlencoded"]) {
      const response = await fetch(`${server.baseUrl}/test/echo`, {
        method: "POST",
        headers: { "content-type": contentType, "content-length": "0" },
        signal: AbortSignal.timeout(5_000)
      })
      expect(response.status, contentType).toBeGreaterThanOrEqual(400)
      expect(response.status, contentType).toBeLessThan(500)
      const body = (await response.json()) as { error: { code: string } }
      expect(["bad_request", "validation_failed"], contentType).toContain(body.error.code)
    }
  })

  it("answers an unknown path with 404 not_found", async () => {
    await expectEnvelope(await fetch(`${server.baseUrl}/v1/no-such-thing`), 404, "not_found", "not_found")
    // (`/` itself is a route now: it redirects to the documentation.)
    await expectEnvelope(await fetch(`${server.baseUrl}/no-such-page`), 404, "not_found", "not_found")
  })

  it("answers a known path with a wrong method with 405 and Allow", async () => {
    const onStatus = await fetch(`${server.baseUrl}/v1/status`, { method: "DELETE" })
    expect(onStatus.headers.get("allow")).toBe("GET, HEAD")
    const error = await expectEnvelope(onStatus, 405, "method_not_allowed", "invalid_request_error")
    expect(error.details).toEqual({ allow: ["GET", "HEAD"] })

    const onEcho = await fetch(`${server.baseUrl}/test/echo`)
    expect(onEcho.headers.get("allow")).toBe("POST")
    await expectEnvelope(onEcho, 405, "method_not_allowed", "invalid_request_error")

    // A path under a route's wildcard (a model's page, a console route) is a known path too.
    for (const path of ["/models/openai/gpt-5", "/console/keys"]) {
      const onPage = await fetch(`${server.baseUrl}${path}`, { method: "POST" })
      expect(onPage.headers.get("allow"), path).toBe("GET, HEAD")
      await expectEnvelope(onPage, 405, "method_not_allowed", "invalid_request_error")
    }
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

/** Writes `head` as is on a fresh connection and reads the one answer (fetch would normalize what is tested here). */
const rawExchange = (port: number, head: string): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = Net.connect({ host: "127.0.0.1", port })
    let received = ""
    const done = () => {
      socket.destroy()
      const [top = "", ...rest] = received.split("\r\n\r\n")
      const [statusLine = "", ...lines] = top.split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) headers[line.slice(0, line.indexOf(":")).trim().toLowerCase()] = line.slice(line.indexOf(":") + 1).trim()
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n"), bytesSentBeforeResponse: 0 })
    }
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1")
      const headEnd = received.indexOf("\r\n\r\n")
      const length = /content-length:\s*(\d+)/i.exec(received.slice(0, headEnd))
      if (headEnd >= 0 && length !== null && received.length - headEnd - 4 >= Number(length[1])) done()
    })
    socket.on("close", () => (received === "" ? reject(new Error("closed without an answer")) : done()))
    socket.on("error", () => (received === "" ? reject(new Error("connection reset without an answer")) : done()))
    socket.on("connect", () => socket.write(head))
  })

const get = (target: string, extraHeaders = "") => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extraHeaders}Connection: close\r\n\r\n`

const rawEnvelope = (response: RawResponse, status: number, code: string) => {
  expect(response.status).toBe(status)
  expect(response.headers["content-type"]).toMatch(/^application\/json/)
  const body = JSON.parse(response.body) as { error: Record<string, unknown> }
  expect(Object.keys(body)).toEqual(["error"])
  expect(body.error.code).toBe(code)
  expect(body.error.type).toBe("invalid_request_error")
  return body.error
}

describe("a target that is not valid percent-encoding", () => {
  it("is 400 bad_request, in the path or in the query, before routing", async () => {
    for (const target of ["/v1/oracle/models/%E0%A4%A", "/v1/oracle/models/%ZZ/price-at?date=2025-01-01", "/v1/status/%FF"]) {
      const error = rawEnvelope(await rawExchange(server.port, get(target)), 400, "bad_request")
      expect(error.message, target).toContain("percent-encoded")
    }
    const query = rawEnvelope(await rawExchange(server.port, get("/v1/oracle/history?from=%zz")), 400, "bad_request")
    expect(query.param).toBe("from")
    rawEnvelope(await rawExchange(server.port, get("/v1/oracle/activity?limit=%E0%A4")), 400, "bad_request")
  })

  it("leaves valid encodings alone: an encoded slash, an encoded multi-byte character", async () => {
    const slash = await rawExchange(server.port, get("/v1/no-such/openai%2Fgpt-5.5"))
    expect(slash.status).toBe(404)
    const utf8 = await rawExchange(server.port, get("/v1/status?note=%E2%82%AC"))
    expect(utf8.status).toBe(200)
  })
})

describe("a body sent where no route takes one", () => {
  const FIVE_MIB = 5 * 1024 * 1024

  it("is 405 with Allow on a GET-only route, whatever its size, without reading it", async () => {
    const response = await sendLargeBody({ port: server.port, path: "/v1/oracle/scu", totalBytes: FIVE_MIB, chunked: false })
    expect(response.status).toBe(405)
    expect(response.headers["allow"]).toBe("GET, HEAD")
    expect(JSON.parse(response.body).error.code).toBe("method_not_allowed")
    expect(response.bytesSentBeforeResponse).toBeLessThan(1024 * 1024)
    const chunked = await sendLargeBody({ port: server.port, path: "/v1/oracle/scu", totalBytes: FIVE_MIB, chunked: true })
    expect(chunked.status).toBe(405)
  })

  it("is 405 whatever its Content-Type", async () => {
    const response = await fetch(`${server.baseUrl}/v1/oracle/scu`, { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" })
    expect(response.headers.get("allow")).toBe("GET, HEAD")
    await expectEnvelope(response, 405, "method_not_allowed", "invalid_request_error")
  })

  it("is 404 on a path no route has", async () => {
    const response = await sendLargeBody({ port: server.port, path: "/v1/no-such-thing", totalBytes: FIVE_MIB, chunked: false })
    expect(response.status).toBe(404)
    expect(JSON.parse(response.body).error.code).toBe("not_found")
  })
})

const LONG_TARGET = `/v1/oracle/scu?pad=${"a".repeat(9000)}`
const LARGE_HEADER = `X-Padding: ${"b".repeat(20_000)}\r\n`
const HUGE_HEADERS = Array.from({ length: 800 }, (_, i) => `X-Padding-${i}: ${"c".repeat(100)}\r\n`).join("")

/** The request-head limits over a socket to `port`, whichever server listens there. */
const expectHeadLimits = async (port: number) => {
  const long = rawEnvelope(await rawExchange(port, get(LONG_TARGET)), 414, "uri_too_long")
  expect(long.details).toEqual({ limitBytes: 8192 })
  const large = rawEnvelope(await rawExchange(port, get("/v1/oracle/scu", LARGE_HEADER)), 431, "headers_too_large")
  expect(large.details).toEqual({ limitBytes: 16384 })
  // Past what the HTTP parser itself accepts: still the envelope, not a bare status or a reset.
  rawEnvelope(await rawExchange(port, get("/v1/oracle/scu", HUGE_HEADERS)), 431, "headers_too_large")
  rawEnvelope(await rawExchange(port, get(`/v1/oracle/scu?pad=${"a".repeat(100_000)}`)), 414, "uri_too_long")
  rawEnvelope(await rawExchange(port, "NOT HTTP AT ALL\r\n\r\n"), 400, "bad_request")
}

describe("an oversized request head", () => {
  it("is refused in the envelope by a Node server built with src/http/clientLimits.ts", async () => {
    const plain = Http.createServer({ ...SERVER_OPTIONS }, (request, response) => {
      if (guardRequestHead(request, response)) return
      response.end("ok")
    })
    installClientErrorHandler(plain)
    await new Promise<void>((ready) => plain.listen(0, "127.0.0.1", ready))
    try {
      const port = (plain.address() as Net.AddressInfo).port
      await expectHeadLimits(port)
      const answered = await rawExchange(port, get("/v1/oracle/scu", "X-Request-Id: head-1\r\n".concat(LARGE_HEADER)))
      expect(answered.headers["x-request-id"]).toBe("head-1")
      expect(answered.headers["access-control-allow-origin"]).toBe("*")
      expect((await rawExchange(port, get("/v1/oracle/scu"))).status).toBe(200)
    } finally {
      await new Promise((closed) => plain.close(closed))
    }
  })

  it("is refused in the envelope by the service", async () => {
    await expectHeadLimits(server.port)
    expect((await fetch(`${server.baseUrl}/v1/status`)).status).toBe(200)
  })
})
