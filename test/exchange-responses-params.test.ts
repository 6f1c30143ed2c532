/**
 * A refused Responses body names the field that failed (found by the fuzz suite, test/exchange-fuzz.test.ts): inside
 * a tool or an input item, the failure in the member its `type` chose, never the union's other members' complaint
 * that the `type` is not theirs. Before: a function tool with an unknown field, or a bad name, was refused as
 * `tools.0.type: Expected "web_search" or ...`, and any failure inside a function_call, reasoning or message item as
 * `input.0.type: Expected "message"` (or `... actual "message"`). Pure: the body's decoding only.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseResponsesRequest } from "../domain/exchange/translate/responsesInbound.ts"
import { InputTokensRequest } from "../domain/exchange/wire/openaiResponses.ts"
import { decodeBody } from "../domain/exchange/translate/parseIssues.ts"

const parseInputTokens = decodeBody(InputTokensRequest)

/** The params a body is refused for (every issue's), or "accepted". */
const paramsOf = (parse: (body: unknown) => Either.Either<unknown, { readonly param?: string | undefined; readonly issues?: ReadonlyArray<{ readonly param: string }> | undefined }>, body: Record<string, unknown>) => {
  const parsed = parse({ model: "openai/gpt-5", ...body })
  if (Either.isRight(parsed)) return "accepted"
  return { param: parsed.left.param, issues: (parsed.left.issues ?? []).map((issue) => issue.param) }
}

const named = (param: string) => ({ param, issues: [param] })

const CASES: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ["an unknown field on a function tool", { input: "x", tools: [{ type: "function", name: "f", x_extra: 1 }] }, "tools.0.x_extra"],
  ["a function tool's bad name", { input: "x", tools: [{ type: "function", name: "x y" }] }, "tools.0.name"],
  ["a custom tool's bad name", { input: "x", tools: [{ type: "custom", name: "x y" }] }, "tools.0.name"],
  ["an unknown field inside a namespace", { input: "x", tools: [{ type: "namespace", name: "n", tools: [{ type: "function", name: "g", bad: 1 }] }] }, "tools.0.tools.0.bad"],
  ["an unknown tool type", { input: "x", tools: [{ type: "foo" }] }, "tools.0.type"],
  ["an unknown field on a message item", { input: [{ type: "message", role: "user", content: "Hi", x_extra: true }] }, "input.0.x_extra"],
  ["an unknown field on a message item without its type", { input: [{ role: "user", content: "Hi", x_extra: true }] }, "input.0.x_extra"],
  ["a message item's role", { input: [{ type: "message", role: "tool", content: "x" }] }, "input.0.role"],
  ["a message item's content", { input: [{ type: "message", role: "user", content: 5 }] }, "input.0.content"],
  ["an unknown field on a function_call item", { input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}", x: 1 }] }, "input.0.x"],
  ["a reasoning item's encrypted_content", { input: [{ type: "reasoning", summary: [], encrypted_content: 5 }] }, "input.0.encrypted_content"],
  ["an image part in a message without its type", { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] }, "input.0.content.0.type"],
  ["an item with neither type nor role", { input: [{ content: "x" }] }, "input.0.type"]
]

describe("a refused Responses body names the field that failed", () => {
  for (const [name, body, param] of CASES) {
    it(name, () => {
      expect(paramsOf(parseResponsesRequest, body)).toEqual(named(param))
      expect(paramsOf(parseInputTokens, body)).toEqual(named(param))
    })
  }

  it("still takes every tool and item as it did: built-in tools with their options, messages with or without their type", () => {
    const body = {
      input: [
        { role: "user", content: "Hi" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [] }] },
        { type: "reasoning", summary: [], content: null, encrypted_content: "xyz" },
        { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "c", output: "ok" }
      ],
      tools: [
        { type: "function", name: "f" },
        { type: "web_search", external_web_access: false, search_content_types: ["text", "image"] },
        { type: "tool_search", execution: "client", description: "Search", parameters: { type: "object" } }
      ]
    }
    expect(paramsOf(parseResponsesRequest, body)).toBe("accepted")
    const parsed = parseResponsesRequest({ model: "openai/gpt-5", ...body })
    // A message without its type reads as one with it.
    expect(Either.getOrThrow(parsed).input[0]).toEqual({ type: "message", role: "user", content: "Hi" })
  })
})
