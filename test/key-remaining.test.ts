/**
 * What a key's caps leave, as the answer's X-Key-* headers say it (SPEC "Response headers"). The figures are read after
 * a whole answer's charge committed: a database that stops answering in between leaves them out rather than turning
 * an answer already paid for into a 503. A partial Usage double stands in for the ledger's reads.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Credential } from "../domain/accounts/credential.ts"
import { ServiceUnavailable } from "../domain/errors.ts"
import type { Usage } from "../services/accounts/Usage.ts"
import { keyRemainingOf } from "../services/exchange/admission.ts"
import type { RouteFacts } from "../services/exchange/Exchange.ts"
import { routeHeaders } from "../src/http/inference.ts"

const cappedKey: Credential = {
  kind: "api_key",
  id: "key_capped",
  accountId: "1",
  issuedByCfId: null,
  holderCfId: null,
  dailyLimitWei: 1000n,
  monthlyLimitWei: null,
  allowedModels: [],
  scopes: []
}

const usageReading = (key: Effect.Effect<{ dailyLimitWei: bigint | null; monthlyLimitWei: bigint | null; dailyUsedWei: bigint; monthlyUsedWei: bigint }>) =>
  ({ key: () => Effect.map(key, (figures) => ({ id: cappedKey.id, ...figures })) }) as unknown as Usage

const route = (keyRemaining: RouteFacts["keyRemaining"]): RouteFacts => ({
  requestId: "gen_0",
  modelRequested: "openai/gpt-4.1",
  modelUsed: "openai/gpt-4.1",
  provider: "openai",
  strategy: "failover",
  chooser: undefined,
  rate: undefined,
  keyRemaining,
  dropped: []
})

describe("a key's remaining caps", () => {
  it.effect("are the caps less what their windows used, or unlimited", () =>
    Effect.gen(function* () {
      const remaining = yield* keyRemainingOf(usageReading(Effect.succeed({ dailyLimitWei: 1000n, monthlyLimitWei: null, dailyUsedWei: 400n, monthlyUsedWei: 400n })), cappedKey)
      expect(remaining).toEqual({ daily: "600", monthly: "unlimited" })
      const headers = routeHeaders(route(remaining))
      expect([headers["x-key-daily-remaining"], headers["x-key-weekly-remaining"], headers["x-key-monthly-remaining"]]).toEqual(["600", "unlimited", "unlimited"])
    }))

  it.effect("a key without caps needs no read at all", () =>
    Effect.gen(function* () {
      const unread = usageReading(Effect.die(new Error("read")))
      expect(yield* keyRemainingOf(unread, { ...cappedKey, dailyLimitWei: null })).toEqual({ daily: "unlimited", monthly: "unlimited" })
    }))

  it.effect("are left out, not a 503, when the database stops answering after the charge", () =>
    Effect.gen(function* () {
      const down = usageReading(Effect.die(new ServiceUnavailable({ message: "the database is unreachable" })))
      const remaining = yield* keyRemainingOf(down, cappedKey)
      expect(remaining).toBeUndefined()
      const headers = routeHeaders(route(remaining))
      expect(Object.keys(headers).filter((name) => name.startsWith("x-key-"))).toEqual([])
      expect(headers["x-request-id"]).toBe("gen_0")
    }))

  it.effect("any other defect is still a defect", () =>
    Effect.gen(function* () {
      const broken = usageReading(Effect.die(new Error("a bug")))
      const exit = yield* Effect.exit(keyRemainingOf(broken, cappedKey))
      expect(exit._tag).toBe("Failure")
    }))
})
