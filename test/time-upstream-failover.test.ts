/**
 * Failover and a vendor's Retry-After through the live UpstreamRouter and KeyPools, with the vendors replaced by a
 * script (layers/Test.ts `ScriptedUpstream`: no sockets) and time moved by TestClock: a 429 on one key moves the
 * request to the next, the limited key rests for the Retry-After the vendor sent, and takes requests again after it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import type { ChatRequest } from "../domain/exchange/canonical.ts"
import type { CandidatePlan, RoutableModel } from "../domain/exchange/routing.ts"
import { type ScriptedAnswer, type ScriptedCall, ScriptedUpstream, TestAppConfig } from "../layers/Test.ts"
import { KeyPools } from "../services/exchange/KeyPools.ts"
import { Providers } from "../services/exchange/Providers.ts"
import { UpstreamRouter } from "../services/exchange/UpstreamRouter.ts"
import { acmeProvidersFile } from "./support/providersFile.ts"

const providersFile = acmeProvidersFile(["{ secret: acme-first }", "{ secret: acme-second }"])

/** The vendor as scripted: the first key answers 429 with Retry-After 30 until told otherwise; the rest answer. */
const calls: Array<ScriptedCall> = []
let firstKeyLimited = true
const vendor = ScriptedUpstream((call): ScriptedAnswer => {
  calls.push(call)
  if (call.target.key.id === "acme#1" && firstKeyLimited) {
    return { failure: { kind: "status", status: 429, retryAfter: "30", message: "rate limited", body: "{}" } }
  }
  return {
    events: [
      { type: "start" },
      { type: "text_delta", text: `hello from ${call.target.key.id}` },
      { type: "usage", usage: { freshInput: 5, output: 3 } },
      { type: "stop", reason: "stop" }
    ]
  }
})

const Router = UpstreamRouter.Default.pipe(
  Layer.provide(vendor),
  Layer.provideMerge(KeyPools.Default),
  Layer.provideMerge(Providers.Default),
  Layer.provide(TestAppConfig({ PROVIDERS_FILE: providersFile }))
)

const chat: ChatRequest = { messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }], stop: [], tools: [] }

const routeOnce = Effect.gen(function* () {
  const providers = yield* Providers
  // What routing reads of a model: its key, vendor, provider, the vendor's model id and its traits.
  const model = { key: "acme/model-a", vendor: "acme", card: { sdkId: "model-a" }, provider: providers.providers[0]!, traits: {} } as unknown as RoutableModel
  const plan: CandidatePlan = { candidates: [model], chooser: undefined, auto: false }
  const routed = yield* (yield* UpstreamRouter).route({ chat, plan, stream: false, inputTokens: new Map(plan.candidates.map((m) => [m.key, 5])), outputTokens: 16, pin: undefined })
  return {
    attempts: routed.attempts.map((a) => `${a.key} ${a.outcome}${a.status === null ? "" : ` ${a.status}`}`),
    servedBy: Option.getOrUndefined(Option.map(routed.served, (s) => s.keyId))
  }
})

describe("failover over a scripted vendor", () => {
  it.scoped("a 429 moves the request to the next key; the limited key rests for its Retry-After, then serves again", () =>
    Effect.gen(function* () {
      expect(yield* routeOnce).toEqual({ attempts: ["acme#1 status 429", "acme#2 served 200"], servedBy: "acme#2" })
      // Inside the 30 s, round robin would pick acme#1 next: it is resting, acme#2 serves without a failed attempt.
      yield* TestClock.adjust(29_999)
      expect(yield* routeOnce).toEqual({ attempts: ["acme#2 served 200"], servedBy: "acme#2" })
      firstKeyLimited = false
      yield* TestClock.adjust(1)
      const after = [yield* routeOnce, yield* routeOnce]
      expect(after.map((r) => r.servedBy).sort()).toEqual(["acme#1", "acme#2"])
      // The vendor saw exactly these calls, each with the model's own id, never a socket.
      expect(calls.map((c) => `${c.target.key.id} ${c.target.upstreamModel}`)).toEqual([
        "acme#1 model-a",
        "acme#2 model-a",
        "acme#2 model-a",
        ...after.map((r) => `${r.servedBy} model-a`)
      ])
    }).pipe(Effect.provide(Router)))
})
