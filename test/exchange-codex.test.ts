/**
 * Codex CLI through the exchange: the request bodies and headers Codex 0.171 sends to `/v1/responses`
 * (test/fixtures/codex, captured from the real CLI; its README says how), driven as Codex drives them: streamed,
 * `store: false`, the whole history resent each turn with the model's output items appended (read, as Codex reads
 * them, from `response.output_item.done` only) and the tool's output after them. A two-turn tool loop on an OpenAI model
 * and on an Anthropic one with reasoning on; Anthropic's signed reasoning travels sealed in `encrypted_content`, and the
 * simulator checks the signature as Anthropic does, so the finished loop proves it went back untouched.
 */
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"

const FIXTURES = new URL("./fixtures/codex/", import.meta.url)
const fixture = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8"))
const codexHeaders: Record<string, string> = fixture("headers.json")

let fx: ExchangeFixture
let key: { id: string; secret: string }

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey()
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)
afterAll(async () => fx?.close())

interface Turn {
  readonly status: number
  readonly headers: Headers
  readonly events: ReadonlyArray<any>
  /** What Codex keeps of the answer: the items of `response.output_item.done`. */
  readonly items: ReadonlyArray<any>
  readonly completed: any
}

/** One request as Codex sends it, the SSE read as Codex reads it (the `type` of each `data:` line). */
const send = async (body: unknown): Promise<Turn> => {
  const { host: _host, "accept-encoding": _encoding, authorization: _redacted, ...headers } = codexHeaders
  const response = await fetch(`${fx.baseUrl}/v1/responses`, {
    method: "POST",
    headers: { ...headers, authorization: `Bearer ${key.secret}` },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  const events = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))
  return {
    status: response.status,
    headers: response.headers,
    events,
    items: events.filter((e) => e.type === "response.output_item.done").map((e) => e.item),
    completed: events.find((e) => e.type === "response.completed")?.response
  }
}

/** The first turn's body with the prompt asking for the shell tool (the simulator calls a tool the prompt names). */
const firstTurn = (name: string, model: string) => {
  const body = fixture(name)
  const prompt = body.input.at(-1)
  return { ...body, model, input: [...body.input.slice(0, -1), { ...prompt, content: [{ type: "input_text", text: "Use the exec_command tool to list the files in this directory" }] }] }
}

/** What Codex checks of a finished turn: an id, usage with its three counts, an item for every call it runs. */
const expectCodexReads = (turn: Turn) => {
  expect(turn.status, JSON.stringify(turn.events.at(-1))).toBe(200)
  expect(turn.completed, JSON.stringify(turn.events.at(-1))).toBeDefined()
  expect(turn.completed.id).toMatch(/^resp_[0-9a-f]{24}$/)
  expect(turn.completed.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) })
  expect(turn.completed.output).toEqual(turn.items)
}

const billOf = async (turn: Turn) => {
  const rows = await fx.query("SELECT inbound_format, stream, status, model_used, charge_wei::text AS charge FROM generations WHERE id = $1", [
    turn.headers.get("x-request-id")
  ])
  return rows[0]
}

const loop = async (fixtureName: string, model: string) => {
  const body = firstTurn(fixtureName, model)
  const first = await send(body)
  expectCodexReads(first)
  const call = first.items.find((item) => item.type === "function_call")
  expect(call).toMatchObject({ name: "exec_command", call_id: expect.any(String), arguments: expect.any(String) })
  // Codex appends what it read and its tool's output (with an id of its own), and resends the whole history.
  const output = { type: "function_call_output", id: "fco_01a221cc-dee5-7160-b8ed-964fd8f39b42", call_id: call.call_id, output: "Process exited with code 0\nOutput:\na.txt\n" }
  const second = await send({ ...body, input: [...body.input, ...first.items, output] })
  expectCodexReads(second)
  expect(second.items.at(-1)).toMatchObject({ type: "message", role: "assistant", status: "completed" })
  for (const turn of [first, second]) {
    expect(await billOf(turn)).toMatchObject({ inbound_format: "responses", stream: true, status: "completed", model_used: model })
    expect(BigInt((await billOf(turn)).charge)).toBeGreaterThan(0n)
  }
  // store: false: nothing of either turn is kept but the bill.
  const stored = await fx.query("SELECT count(*)::int AS n FROM stored_responses WHERE id = ANY($1)", [[first.completed.id, second.completed.id]])
  expect(stored[0].n).toBe(0)
  return { first, second }
}

const upstream = async (): Promise<Array<{ path: string; body: any }>> =>
  (await fetch(`${fx.simulatorUrl}/__control/requests`)).json() as Promise<any>

describe("Codex CLI's requests", () => {
  it("finish a tool loop on an OpenAI model; the tools Codex cannot have run here are named", async () => {
    const { first } = await loop("first-turn.json", "openai/gpt-5")
    expect(first.headers.get("x-dropped-parameters")).toBe("tools[web_search]")
    const sent = (await upstream()).at(-2)!.body
    const names = sent.tools.map((tool: any) => tool.function.name)
    expect(names).toContain("exec_command")
    // The namespace's tools are flattened under its name.
    expect(names.filter((name: string) => name.startsWith("multi_agent_v1__")).length).toBeGreaterThan(0)
    // Codex's developer messages reach the vendor as system turns, in place.
    expect(sent.messages.slice(0, 2).map((m: any) => m.role)).toEqual(["system", "system"])
  })

  it("finish a tool loop on an Anthropic model with reasoning, its signed thinking replayed sealed", async () => {
    const { first, second } = await loop("first-turn-gpt-5.5.json", "anthropic/claude-sonnet-4.5")
    const reasoning = first.items.find((item) => item.type === "reasoning")
    expect(reasoning).toMatchObject({ summary: [], encrypted_content: expect.stringMatching(/^cx1\./) })
    expect(first.headers.get("x-dropped-parameters")).toBe("tools[tool_search], tools[web_search], text.verbosity")
    expect(second.headers.get("x-dropped-parameters")).toBe("tools[tool_search], tools[web_search], text.verbosity")
    const replayed = (await upstream()).at(-1)!.body.messages.find((m: any) => m.role === "assistant")
    expect(replayed.content.map((block: any) => block.type)).toEqual(["thinking", "tool_use"])
    // apply_patch (a freeform tool) went as a function taking its input as one string.
    const patch = (await upstream()).at(-1)!.body.tools.find((tool: any) => tool.name === "apply_patch")
    expect(patch.input_schema).toMatchObject({ type: "object", properties: { input: { type: "string" } }, required: ["input"] })
  })

  it("take back a resumed session's history: the fake reasoning Codex kept is dropped by name, the rest served", async () => {
    const turn = await send({ ...fixture("third-turn.json"), model: "openai/gpt-5" })
    expectCodexReads(turn)
    expect(turn.headers.get("x-dropped-parameters")).toBe("tools[web_search], input[].encrypted_content")
    const sent = (await upstream()).at(-1)!.body.messages
    expect(sent.some((m: any) => m.role === "tool" && m.content.includes("a.txt"))).toBe(true)
  })

  it("replay a freeform tool's call and output", async () => {
    const turn = await send({ ...fixture("second-turn-custom-tool.json"), model: "openai/gpt-5" })
    expectCodexReads(turn)
    const sent = (await upstream()).at(-1)!.body.messages
    const call = sent.find((m: any) => m.role === "assistant" && m.tool_calls?.some((c: any) => c.function.name === "apply_patch"))
    expect(JSON.parse(call.tool_calls.find((c: any) => c.function.name === "apply_patch").function.arguments)).toHaveProperty("input")
  })
})
