/**
 * Provider configuration and key pools (issue 10 item 2), pure: PROVIDERS_FILE parsing with interpolation and its
 * refusals, the key shortcuts, and RPM/TPM admission with cooldowns that honour Retry-After.
 */
import { Either, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { KeyPool, retryAfterMs } from "../domain/exchange/keyPool.ts"
import { parseProvidersFile, shortcutProviders } from "../domain/exchange/providers.ts"

const file = `
providers:
  - name: openai
    format: openai-chat
    baseUrl: \${UPSTREAM:-http://127.0.0.1:9}/v1/
    keys:
      - { secret: literal-key, rpm: 2, tpm: 1000 }
      - { secret: { env: SECOND_KEY } }
    models: [openai/GPT-4.1]
`

describe("PROVIDERS_FILE", () => {
  it("reads providers, interpolating variables with defaults and keys from the environment", () => {
    const parsed = Either.getOrThrow(parseProvidersFile(file, { SECOND_KEY: "from-env" }, "p.yaml"))
    expect(parsed).toHaveLength(1)
    const [openai] = parsed
    expect(openai).toMatchObject({ name: "openai", format: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", source: "p.yaml" })
    expect(openai!.keys.map((k) => [k.id, Redacted.value(k.secret), k.rpm, k.tpm])).toEqual([
      ["openai#1", "literal-key", 2, 1000],
      ["openai#2", "from-env", null, null]
    ])
    expect([...openai!.models!]).toEqual(["openai/gpt-4.1"])
    const elsewhere = Either.getOrThrow(parseProvidersFile(file, { SECOND_KEY: "x", UPSTREAM: "https://up.example" }, "p.yaml"))
    expect(elsewhere[0]!.baseUrl).toBe("https://up.example/v1")
  })

  it("refuses an unset key variable, an unknown format, an extra field, a duplicate provider and text that is not YAML, naming the field", () => {
    const refused = (text: string, env: Record<string, string> = { SECOND_KEY: "k" }) => {
      const result = parseProvidersFile(text, env, "p.yaml")
      expect(Either.isLeft(result)).toBe(true)
      return Either.isLeft(result) ? result.left : ""
    }
    expect(refused(file, {})).toMatch(/providers\.0\.keys\.1\.secret: variable SECOND_KEY is not set/)
    expect(refused(file.replace("openai-chat", "soap"))).toMatch(/providers\.0\.format/)
    expect(refused(file.replace("    models:", "    colour: red\n    models:"))).toMatch(/colour/)
    expect(refused(file + file.slice(file.indexOf("  - name")))).toMatch(/appears twice/)
    expect(refused("providers: [")).toMatch(/not YAML/)
    expect(refused("providers:\n  - name: x\n    format: gemini\n    baseUrl: ${NOPE}\n    keys: [{ secret: a }]\n")).toMatch(/unset variable\(s\) NOPE/)
  })

  it("enables a vendor from its key variable unless the file configures it", () => {
    const shortcuts = shortcutProviders({ OPENAI_API_KEY: "sk-1", ANTHROPIC_API_KEY: " ", GOOGLE_API_KEY: "g-1" }, new Set(["openai"]))
    expect(shortcuts.map((p) => [p.name, p.format, p.baseUrl, p.source])).toEqual([
      ["google", "gemini", "https://generativelanguage.googleapis.com", "GOOGLE_API_KEY"]
    ])
  })
})

describe("key pools", () => {
  const keys = [
    { id: "v#1", secret: Redacted.make("a"), rpm: 2, tpm: 100 },
    { id: "v#2", secret: Redacted.make("b"), rpm: null, tpm: null }
  ]
  const t0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000)

  it("admits round robin within RPM and TPM, and corrects the estimate to the vendor's count", () => {
    const pool = new KeyPool([keys[0]!], t0)
    const first = pool.admit(60, t0)!
    expect(first.key.id).toBe("v#1")
    expect(pool.admit(60, t0)).toBeUndefined() // 120 tokens > 100
    pool.reconcile(first, 10)
    const second = pool.admit(60, t0)!
    expect(second.key.id).toBe("v#1")
    expect(pool.admit(1, t0)).toBeUndefined() // the third request in the minute
    expect(pool.status(1, t0)).toEqual({ keys: 1, cooling: 0, canAdmit: false })
    // A minute later half the previous minute still counts: 2 requests x 0.5 = 1, so one more fits.
    expect(pool.admit(1, t0 + 90_000)).toBeDefined()
  })

  it("corrects the minute the estimate went into, after the minute rolled too, and no longer once it left the window", () => {
    const pool = new KeyPool([{ ...keys[0]!, rpm: null }], t0)
    const early = pool.admit(90, t0 + 50_000)!
    // The next minute, 10 s in: 5/6 of the previous minute's 90 tokens (75) still count, so 26 more do not fit.
    expect(pool.admit(26, t0 + 70_000)).toBeUndefined()
    pool.reconcile(early, 0)
    expect(pool.admit(26, t0 + 70_000)).toBeDefined()
    const late = pool.admit(50, t0 + 110_000)!
    // The same minute's correction counts while its bucket is in the window ...
    pool.reconcile(late, 60)
    expect(pool.admit(15, t0 + 115_000)).toBeUndefined() // 26 + 60 + 15 > 100
    // ... and, once the window moved past it, corrects nothing still counted.
    expect(pool.status(100, t0 + 240_000).canAdmit).toBe(true)
    pool.reconcile(late, 1_000_000)
    expect(pool.admit(100, t0 + 240_000)).toBeDefined()
  })

  it("rests a key after a failure for its Retry-After (or the default), and skips keys already tried", () => {
    const pool = new KeyPool(keys, t0)
    pool.cooldown("v#2", "rateLimited", t0, retryAfterMs("3", t0))
    expect(pool.admit(1, t0 + 1_000, new Set(["v#1"]))).toBeUndefined()
    expect(pool.admit(1, t0 + 3_000, new Set(["v#1"]))!.key.id).toBe("v#2")
    pool.cooldown("v#2", "serverError", t0 + 3_000)
    expect(pool.status(1, t0 + 4_000).cooling).toBe(1)
    expect(pool.status(1, t0 + 8_001).cooling).toBe(0)
    expect(retryAfterMs(new Date(t0 + 5_000).toUTCString(), t0)).toBe(5_000)
    expect(retryAfterMs("soon", t0)).toBeUndefined()
  })
})
