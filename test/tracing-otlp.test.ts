/**
 * Traces with real parts (DESIGN.md section 15): a service process with OTEL_EXPORTER_OTLP_ENDPOINT pointed at an
 * OTLP/HTTP receiver in this test, which decodes what arrives (OTLP JSON). Each request is one trace under the
 * client's `traceparent` (the inference route's, the stack's, the oracle's fast path), with the service spans, each
 * upstream attempt, the ledger's SQL and the settlement; nothing of the trace reaches the vendor; the JSON log lines
 * name the trace; a job runs as a trace of its own; a client's unsampled trace exports nothing; the metrics are pushed
 * to the same collector.
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { EXCHANGE_FIXTURES, type ExchangeFixture, ONE_CREDIT, SIMULATOR_PROVIDERS, startExchangeFixture } from "./support/exchangeServer.ts"
import { waitFor } from "./support/polling.ts"
import { cleanEnv, logRecords, type ServiceProcess, startService } from "./support/process.ts"
import { freePort } from "./support/server.ts"

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly boolValue?: boolean
  readonly doubleValue?: number
}
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>
}
interface Received {
  readonly span: OtlpSpan
  readonly serviceName: string | undefined
}

const SERVER = 2
const CLIENT = 3

const received: Array<Received> = []
/** The metrics of the last OTLP metrics export, by name. */
let lastMetrics = new Map<string, { readonly name: string; readonly sum?: { readonly dataPoints: ReadonlyArray<{ readonly attributes: OtlpSpan["attributes"]; readonly asDouble?: number; readonly asInt?: string | number }> } }>()
const exportHeaders: Array<Http.IncomingHttpHeaders> = []
let receiver: Http.Server
let fx: ExchangeFixture
let traced: ServiceProcess
let baseUrl = ""
let secret = ""
let scratch = ""

const attribute = (span: OtlpSpan, key: string): string | number | boolean | undefined => {
  const value = span.attributes.find((a) => a.key === key)?.value
  if (value === undefined) return undefined
  return value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue ?? value.doubleValue)
}

const spansOf = (traceId: string) => received.filter((r) => r.span.traceId === traceId).map((r) => r.span)

/** Waits until the trace holds a span named `name` (the exporter sends every 100 ms). */
const awaitSpan = (traceId: string, name: string) =>
  waitFor(`a span ${name} in trace ${traceId}`, async () => spansOf(traceId).find((s) => s.name === name), 20_000, 50).catch(() => {
    throw new Error(`no span ${name} in trace ${traceId}; it holds: ${spansOf(traceId).map((s) => s.name).join(", ")}`)
  })

/** Every span of the trace reaches `root` through its parents: one tree, not loose spans. */
const expectOneTree = (traceId: string, root: OtlpSpan) => {
  const byId = new Map(spansOf(traceId).map((s) => [s.spanId, s]))
  for (const span of byId.values()) {
    let at: OtlpSpan | undefined = span
    for (let depth = 0; at !== undefined && at.spanId !== root.spanId && depth < 100; depth++) at = byId.get(at.parentSpanId ?? "")
    expect(at?.spanId, `${span.name} hangs under ${root.name}`).toBe(root.spanId)
  }
}

const newTraceparent = (flags = "01") => {
  const traceId = randomBytes(16).toString("hex")
  const parentId = randomBytes(8).toString("hex")
  return { traceId, parentId, header: `00-${traceId}-${parentId}-${flags}` }
}

/** Completions answered 200 by the traced replica so far. */
let completed = 0

const chat = async (headers: Record<string, string>, body: Record<string, unknown> = {}) => {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "Trace me" }], max_tokens: 16, ...body })
  })
  if (response.status === 200) completed += 1
  return response
}

beforeAll(async () => {
  receiver = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/v1/metrics") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceMetrics: ReadonlyArray<{ scopeMetrics: ReadonlyArray<{ metrics: ReadonlyArray<typeof lastMetrics extends Map<string, infer M> ? M : never> }> }>
        }
        lastMetrics = new Map(body.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((m) => [m.name, m] as const))))
      }
      if (request.method === "POST" && request.url === "/v1/traces") {
        exportHeaders.push(request.headers)
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: ReadonlyArray<{
            resource: { attributes: OtlpSpan["attributes"] }
            scopeSpans: ReadonlyArray<{ spans: ReadonlyArray<OtlpSpan> }>
          }>
        }
        for (const resource of body.resourceSpans) {
          const serviceName = resource.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue
          for (const scope of resource.scopeSpans) for (const span of scope.spans) received.push({ span, serviceName })
        }
      }
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

  const chainPort = await freePort()
  fx = await startExchangeFixture({ EMBEDDED_CHAIN_PORT: String(chainPort) })
  const key = await fx.issueKey({ label: "traced" })
  secret = key.secret
  await fx.grant(10n * ONE_CREDIT)

  scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-traced-"))
  const priceDir = Path.join(scratch, "prices")
  Fs.cpSync(EXCHANGE_FIXTURES, priceDir, { recursive: true })
  const port = await freePort()
  const registry = (await makeClient(fx.baseUrl).call("GET", "/v1/oracle/contract-metadata")).body.address as string
  traced = startService(
    cleanEnv({
      PORT: String(port),
      DATA_DIR: Path.join(scratch, "data"),
      DATABASE_URL: fx.database.url,
      RPC_URL: `http://127.0.0.1:${chainPort}`,
      REGISTRY_ADDRESS: registry,
      PRICE_DATA_DIR: priceDir,
      PRICE_SCAN_INTERVAL_HOURS: "24",
      PROVIDERS_FILE: SIMULATOR_PROVIDERS,
      SIMULATOR_URL: fx.simulatorUrl,
      RATE_LIMIT_ENABLED: "false",
      LOG_LEVEL: "INFO",
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiverUrl}/`,
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=s%3Dcret,x-tenant=cx",
      OTEL_SERVICE_NAME: "cx-traced",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "300"
    })
  )
  baseUrl = `http://127.0.0.1:${port}`
  await traced.waitForLog(/"ready at http:/, 240_000)
}, 600_000)

afterAll(async () => {
  await traced?.stop("SIGTERM")
  await fx?.close()
  receiver?.close()
  if (scratch !== "") Fs.rmSync(scratch, { recursive: true, force: true })
})

describe("traces over OTLP/HTTP", () => {
  it("a completion is one trace under the client's traceparent: the route, the exchange, the upstream attempt, the ledger's SQL and the settlement", async () => {
    const parent = newTraceparent()
    const response = await chat({ traceparent: parent.header })
    expect(response.status, await response.clone().text()).toBe(200)
    await response.json()

    const root = await awaitSpan(parent.traceId, "POST /v1/chat/completions")
    expect(root.parentSpanId).toBe(parent.parentId)
    expect(root.kind).toBe(SERVER)
    expect(attribute(root, "http.route")).toBe("/v1/chat/completions")
    expect(attribute(root, "http.response.status_code")).toBe(200)

    const attempt = await awaitSpan(parent.traceId, "upstream.attempt")
    expect(attempt.kind).toBe(CLIENT)
    expect([attribute(attempt, "cx.vendor"), attribute(attempt, "cx.provider"), attribute(attempt, "cx.model"), attribute(attempt, "cx.upstream.outcome")]).toEqual([
      "openai",
      "openai",
      "openai/gpt-4.1",
      "served"
    ])
    expect(attribute(attempt, "cx.upstream.key")).toMatch(/^openai#\d+$/)
    await awaitSpan(parent.traceId, "Exchange.serve")
    await awaitSpan(parent.traceId, "Ledger.reserve")
    await awaitSpan(parent.traceId, "Settlement.settle")
    const statements = spansOf(parent.traceId).filter((s) => s.name === "sql.execute")
    expect(statements.length).toBeGreaterThan(0)
    expect(statements.every((s) => typeof attribute(s, "db.query.text") === "string")).toBe(true)
    expectOneTree(parent.traceId, root)
    expect(received.find((r) => r.span.traceId === parent.traceId)?.serviceName).toBe("cx-traced")
    // The collector's headers, as OTEL_EXPORTER_OTLP_HEADERS gave them (percent-decoded).
    expect(exportHeaders.at(-1)).toMatchObject({ "x-collector-token": "s=cret", "x-tenant": "cx" })
  })

  it("sends no trace header to the vendor", async () => {
    const parent = newTraceparent()
    await (await chat({ traceparent: parent.header, tracestate: "vendor=1", "x-request-id": `no-leak-${parent.traceId}` })).json()
    await awaitSpan(parent.traceId, "upstream.attempt")
    const seen = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as ReadonlyArray<{ headers: Record<string, string> }>
    expect(seen.length).toBeGreaterThan(0)
    for (const request of seen) {
      for (const name of ["traceparent", "tracestate", "b3", "x-b3-traceid", "x-b3-spanid"]) expect(request.headers[name], name).toBeUndefined()
      expect(JSON.stringify(request.headers)).not.toContain(parent.traceId)
    }
  })

  it("names the trace and span on the JSON log lines written inside it", async () => {
    const parent = newTraceparent()
    await (await chat({ traceparent: parent.header })).json()
    const root = await awaitSpan(parent.traceId, "POST /v1/chat/completions")
    const line = await waitFor(
      "the request's log line",
      async () => logRecords(traced.output()).find((r) => r.message === "request" && r.annotations["trace_id"] === parent.traceId),
      10_000,
      50
    )
    expect(line.annotations["span_id"]).toBe(root.spanId)
  })

  it("traces a request the stack answers, and the oracle's fast path, under their route templates", async () => {
    // A browser's request (an Origin) goes through the HttpApi stack.
    const viaStack = newTraceparent()
    const stacked = await chat({ traceparent: viaStack.header, origin: "http://localhost:3000" })
    await stacked.text()
    const stackRoot = await awaitSpan(viaStack.traceId, "POST /v1/chat/completions")
    expect(stackRoot.parentSpanId).toBe(viaStack.parentId)
    expect(attribute(stackRoot, "http.response.status_code")).toBe(stacked.status)
    // The stack's span records the request's headers, the credential redacted.
    expect(attribute(stackRoot, "http.request.header.origin")).toBe("http://localhost:3000")
    expect(attribute(stackRoot, "http.request.header.authorization")).toBeDefined()
    expect(JSON.stringify(spansOf(viaStack.traceId))).not.toContain(secret.slice(-12))

    const templated = newTraceparent()
    const key = ((await (await fetch(`${baseUrl}/v1/oracle/models`)).json()) as { models: ReadonlyArray<{ id: string }> }).models[0]!.id
    const model = await fetch(`${baseUrl}/v1/oracle/models/${key}`, { headers: { traceparent: templated.header } })
    expect(model.status, `${key}: ${await model.clone().text()}`).toBe(200)
    const modelRoot = await awaitSpan(templated.traceId, "GET /v1/oracle/models/:key")
    expect([modelRoot.parentSpanId, attribute(modelRoot, "http.response.status_code")]).toEqual([templated.parentId, 200])

    const hot = newTraceparent()
    expect((await fetch(`${baseUrl}/v1/oracle/models`, { headers: { traceparent: hot.header } })).status).toBe(200)
    const hotRoot = await awaitSpan(hot.traceId, "GET /v1/oracle/models")
    expect([hotRoot.parentSpanId, hotRoot.kind, attribute(hotRoot, "http.response.status_code")]).toEqual([hot.parentId, SERVER, 200])
  })

  it("starts a new trace for each request that names none, and exports nothing of a trace the client did not sample", async () => {
    const before = new Set(received.map((r) => r.span.traceId))
    for (let i = 0; i < 2; i++) await (await chat({ "x-request-id": `untraced-${i}` })).json()
    const roots = await waitFor(
      "two new request traces",
      async () => {
        const fresh = received.filter((r) => !before.has(r.span.traceId) && r.span.name === "POST /v1/chat/completions").map((r) => r.span)
        return fresh.length >= 2 ? fresh : undefined
      },
      20_000,
      50
    )
    expect(roots).toHaveLength(2)
    expect(roots[0]!.traceId).not.toBe(roots[1]!.traceId)
    expect(roots.map((r) => r.parentSpanId ?? "")).toEqual(["", ""])

    const unsampled = newTraceparent("00")
    const answered = await chat({ traceparent: unsampled.header })
    expect(answered.status).toBe(200)
    await answered.json()
    // A sampled request sent after it is exported; by then the unsampled one would have been too.
    const after = newTraceparent()
    await (await chat({ traceparent: after.header })).json()
    await awaitSpan(after.traceId, "Settlement.settle")
    expect(spansOf(unsampled.traceId)).toEqual([])
  })

  it("pushes the cx_* metrics to the same collector", async () => {
    const answered = (point: { readonly attributes: OtlpSpan["attributes"] }) =>
      point.attributes.some((a) => a.key === "route" && a.value.stringValue === "/v1/chat/completions") &&
      point.attributes.some((a) => a.key === "status" && a.value.stringValue === "200")
    const exported = () =>
      (lastMetrics.get("cx_http_requests_total")?.sum?.dataPoints ?? []).filter(answered).reduce((total, point) => total + Number(point.asDouble ?? point.asInt ?? 0), 0)
    // Every completion this suite had answered 200 on this replica, through the route and the stack alike.
    expect(completed).toBeGreaterThanOrEqual(7)
    await waitFor("cx_http_requests_total over OTLP", async () => exported() === completed || undefined, 10_000, 50).catch(() => {
      throw new Error(`the collector holds ${exported()} answered completions, the suite counted ${completed}`)
    })
    expect(lastMetrics.has("cx_upstream_attempts_total")).toBe(true)
  })

  it("runs a background job as a trace of its own", async () => {
    const job = await waitFor("a job's span", async () => received.find((r) => r.span.name.startsWith("job ") && (r.span.parentSpanId ?? "") === "")?.span, 60_000, 100)
    expect(typeof attribute(job, "cx.job")).toBe("string")
    const requestTraces = new Set(received.filter((r) => r.span.kind === SERVER).map((r) => r.span.traceId))
    expect(requestTraces.has(job.traceId)).toBe(false)
  })
})
