/**
 * The `auto` choice as pure rules (domain/exchange/autoRouting.ts) and the quality data it weighs
 * (data/exchange/quality.yaml): each chooser, the bias orders, the control arm's draw.
 */
import { Either } from "effect"
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"
import { AUTO_ATTEMPTS, type AutoChoiceInputs, chooseAuto, engineOrder, inControlArm } from "../domain/exchange/autoRouting.ts"
import { DEFAULT_QUALITY, parseQuality, QUALITY_PATH, qualityOf } from "../domain/exchange/quality.ts"
import type { RoutableModel } from "../domain/exchange/routing.ts"

const model = (key: string) => ({ key }) as unknown as RoutableModel
// price per request and quality of five synthetic models
const table: Record<string, [bigint, number]> = {
  "v/cheap-weak": [10n, 40],
  "v/cheap-ok": [20n, 60],
  "v/mid": [100n, 70],
  "v/dear-strong": [1000n, 95],
  "v/dear-weak": [900n, 30]
}
const models = Object.keys(table).map(model)
const base: AutoChoiceInputs = {
  eligible: models,
  hasCapacity: () => true,
  list: [],
  bias: undefined,
  pinnedModel: undefined,
  controlArm: false,
  quality: (m) => table[m.key]![1],
  price: (m) => table[m.key]![0]
}
const keys = (choice: { candidates: ReadonlyArray<RoutableModel> }) => choice.candidates.map((m) => m.key)

describe("chooseAuto", () => {
  it("engine: cheapest first without a bias or with cheaper, at most AUTO_ATTEMPTS candidates", () => {
    for (const bias of [undefined, "cheaper"] as const) {
      const choice = chooseAuto({ ...base, bias })
      expect(choice.chooser).toBe("engine")
      expect(keys(choice)).toEqual(["v/cheap-weak", "v/cheap-ok", "v/mid"])
      expect(choice.candidates.length).toBe(AUTO_ATTEMPTS)
    }
  })

  it("engine: better puts quality first; balanced trades a log-scale price rank against the quality rank", () => {
    expect(keys(chooseAuto({ ...base, bias: "better" }))).toEqual(["v/dear-strong", "v/mid", "v/cheap-ok"])
    // balanced scores: cheap-ok (0.85 + 0.46) / 2 beats cheap-weak (1 + 0.15) / 2, mid (0.5 + 0.62) / 2 and dear-strong (0 + 1) / 2.
    expect(keys(chooseAuto({ ...base, bias: "balanced" }))[0]).toBe("v/cheap-ok")
    expect(engineOrder(models, "balanced", base.quality, base.price).at(-1)!.key).toBe("v/dear-weak")
  })

  it("list: the list's order among entries with capacity, whatever the bias; degraded when none can serve", () => {
    const listed = chooseAuto({ ...base, list: ["v/mid", "v/dear-weak"], bias: "better" })
    expect([listed.chooser, keys(listed), listed.listUnservable]).toEqual(["list", ["v/mid", "v/dear-weak"], false])
    const skipped = chooseAuto({ ...base, list: ["v/mid", "v/dear-weak"], hasCapacity: (m) => m.key !== "v/mid" })
    expect(keys(skipped)).toEqual(["v/dear-weak"])
    const none = chooseAuto({ ...base, list: ["v/mid", "x/not-eligible"], hasCapacity: (m) => m.key !== "v/mid", bias: "better" })
    // Degraded ignores the bias: the cheapest that can serve.
    expect([none.chooser, keys(none)[0], none.listUnservable]).toEqual(["degraded", "v/cheap-weak", true])
  })

  it("pin: the pinned model first while it can serve, then the engine's order; the control arm ignores it", () => {
    const pinned = chooseAuto({ ...base, pinnedModel: "v/dear-weak", list: ["v/mid"] })
    expect([pinned.chooser, keys(pinned)]).toEqual(["pin", ["v/dear-weak", "v/cheap-weak", "v/cheap-ok"]])
    const cannot = chooseAuto({ ...base, pinnedModel: "v/dear-weak", hasCapacity: (m) => m.key !== "v/dear-weak" })
    expect(cannot.chooser).toBe("engine")
    const control = chooseAuto({ ...base, pinnedModel: "v/dear-weak", controlArm: true, bias: "better" })
    expect([control.chooser, keys(control)[0]]).toEqual(["engine", "v/cheap-weak"])
    expect(chooseAuto({ ...base, pinnedModel: "v/dear-weak", controlArm: true, list: ["v/mid"] }).chooser).toBe("list")
  })

  it("answers no candidate when nothing has capacity", () => {
    expect(chooseAuto({ ...base, hasCapacity: () => false }).candidates).toEqual([])
  })
})

describe("inControlArm", () => {
  it("never at 0, always at 100, the same answer for every turn of a conversation, about the share asked", () => {
    expect(inControlArm(0, "c", () => 0)).toBe(false)
    expect(inControlArm(100, undefined, () => 0.999)).toBe(true)
    expect(inControlArm(30, undefined, () => 0.29)).toBe(true)
    expect(inControlArm(30, undefined, () => 0.3)).toBe(false)
    const draws = Array.from({ length: 4000 }, (_, i) => inControlArm(25, `conversation-${i}`, () => 0))
    expect(draws.every((d, i) => d === inControlArm(25, `conversation-${i}`, () => 0.99))).toBe(true)
    const share = draws.filter(Boolean).length / draws.length
    expect(share).toBeGreaterThan(0.22)
    expect(share).toBeLessThan(0.28)
  })
})

describe("data/exchange/quality.yaml", () => {
  it("parses, names a source for every score, and scores unlisted models at the default", () => {
    const scores = Either.getOrThrow(parseQuality(Fs.readFileSync(QUALITY_PATH, "utf8")))
    expect(scores.size).toBeGreaterThan(100)
    for (const [, entry] of scores) expect(entry.source.length).toBeGreaterThan(10)
    expect(qualityOf(scores, "openai/gpt-4.1")).toBeGreaterThan(qualityOf(scores, "openai/gpt-4.1-nano"))
    expect(qualityOf(scores, "nobody/unknown")).toBe(DEFAULT_QUALITY)
  })

  it("refuses a score out of range and a source that is not declared", () => {
    expect(Either.isLeft(parseQuality("sources: {a: x}\nmodels:\n  v/m: {score: 101, source: a}\n"))).toBe(true)
    const unknown = parseQuality("sources: {a: x}\nmodels:\n  v/m: {score: 50, source: b}\n")
    expect(Either.isLeft(unknown) && unknown.left).toContain('source "b"')
  })
})
