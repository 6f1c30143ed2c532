/**
 * The upstream adapters' embeddings calls against the simulated vendors over real sockets: OpenAI-compatible
 * `/embeddings` (texts and token ids, `dimensions`), Gemini's `batchEmbedContents` (shortened vectors normalised),
 * vectors in input order, the vendor's count where it gives one, and a vendor's refusal as the call's failure.
 */
import { Effect, Either, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ProviderConfig, UpstreamFormat } from "../domain/exchange/providers.ts"
import { DEFAULT_TRAITS } from "../domain/exchange/traits.ts"
import { gemini } from "../services/exchange/providers/gemini.ts"
import { openaiCompatible } from "../services/exchange/providers/openaiCompatible.ts"
import type { CountTarget } from "../services/exchange/providers/ProviderAdapter.ts"
import { startSimulator } from "../simulator/server.ts"

let simulator: Awaited<ReturnType<typeof startSimulator>>
beforeAll(async () => {
  simulator = await startSimulator({ port: 0 })
})
afterAll(async () => simulator?.close())

const targetOf = (format: UpstreamFormat, baseUrl: string, upstreamModel: string): CountTarget => {
  const provider: ProviderConfig = {
    name: format === "gemini" ? "google" : "openai",
    format,
    baseUrl,
    keys: [{ id: "k#1", secret: Redacted.make("sim-key"), rpm: null, tpm: null }],
    models: null,
    source: "test"
  }
  return { provider, key: provider.keys[0]!, upstreamModel, firstByteTimeoutMs: 5_000, traits: DEFAULT_TRAITS }
}
const norm = (vector: ReadonlyArray<number>) => Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0))

describe("embeddings upstream", () => {
  it("OpenAI-compatible: vectors in input order with the vendor's count; token ids; dimensions", async () => {
    const target = targetOf("openai-chat", `${simulator.url}/v1`, "text-embedding-3-small")
    const both = await Effect.runPromise(openaiCompatible.embed!([{ text: "alpha" }, { text: "beta gamma" }], undefined, target))
    expect(both.vectors.map((v) => v.length)).toEqual([1536, 1536])
    expect(both.promptTokens).toBeGreaterThan(0)
    const alone = await Effect.runPromise(openaiCompatible.embed!([{ text: "beta gamma" }], undefined, target))
    expect(alone.vectors[0]).toEqual(both.vectors[1])
    const short = await Effect.runPromise(openaiCompatible.embed!([{ text: "alpha" }], 256, target))
    expect(short.vectors[0]!.length).toBe(256)
    expect(norm(short.vectors[0]!)).toBeCloseTo(1, 5)
    const tokens = await Effect.runPromise(openaiCompatible.embed!([{ tokens: [1, 2, 3] }], undefined, target))
    expect(tokens.promptTokens).toBe(3)
  })

  it("Gemini: batchEmbedContents, shortened vectors normalised, no count; token ids refused", async () => {
    const target = targetOf("gemini", simulator.url, "gemini-embedding-001")
    const full = await Effect.runPromise(gemini.embed!([{ text: "alpha" }, { text: "beta" }], undefined, target))
    expect(full.vectors.map((v) => v.length)).toEqual([3072, 3072])
    expect(full.promptTokens).toBeUndefined()
    const short = await Effect.runPromise(gemini.embed!([{ text: "alpha" }], 768, target))
    expect(short.vectors[0]!.length).toBe(768)
    expect(norm(short.vectors[0]!)).toBeCloseTo(1, 5)
    const refused = await Effect.runPromise(Effect.either(gemini.embed!([{ tokens: [1] }], undefined, target)))
    expect(Either.isLeft(refused) && refused.left.kind).toBe("protocol")
  })

  it("a vendor's refusal is the call's failure, with its status", async () => {
    const target = targetOf("openai-chat", `${simulator.url}/v1`, "text-embedding-ada-002")
    const refused = await Effect.runPromise(Effect.either(openaiCompatible.embed!([{ text: "alpha" }], 256, target)))
    expect(Either.isLeft(refused) && refused.left.status).toBe(400)
  })
})
