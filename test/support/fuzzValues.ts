/**
 * Hostile values for the fuzz mutations, of no endpoint in particular: weird strings, numbers and keys, long strings,
 * deep nesting, random JSON values (content parts among them), and bodies that are not a JSON object at all.
 */
import { type Obj, RawJson, type Rng, setKey, type Value } from "./fuzzCore.ts"

// ---------------------------------------------------------------------------------------------------------
// Ingredients of mutations

export const WEIRD_STRINGS: ReadonlyArray<string> = [
  "",
  " ",
  "NaN",
  "Infinity",
  "-Infinity",
  "undefined",
  "null",
  "true",
  "0",
  "-1",
  "1e309",
  "0x10",
  "{}",
  "[]",
  "\u0000",
  "\u0000\u0001\u0002\u001f\u007f",
  "\r\n\t\b\f",
  "\ud800",
  "\udfff",
  "\ud83d",
  "a\ud800b",
  "\ufeff",
  "\u202eevil",
  "\u200b\u200c\u200d",
  "e\u0301\u0301\u0301\u0301",
  "\uffff\ufffe",
  "😀👩‍👩‍👧‍👦🏳️‍🌈",
  "𝕳𝖊𝖑𝖑𝖔",
  "日本語のテキスト",
  "مرحبا",
  "<script>alert(1)</script>",
  "'; DROP TABLE holds; --",
  "%s%n%x",
  "../../etc/passwd",
  "data: [DONE]\n\n",
  "event: message_stop\ndata: {}\n\n",
  "__proto__",
  "constructor"
]

export const UNKNOWN_KEYS: ReadonlyArray<string> = [
  "x_extra",
  "foo",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "",
  " ",
  "model ",
  "Model",
  "MESSAGES",
  "max-tokens",
  "extra_body",
  "😀",
  "\u0000",
  "type",
  "role",
  "content",
  "cache_control",
  "name",
  "id",
  "index",
  "stream",
  "signature"
]

const hugeDigits = (rng: Rng) => (rng.chance(0.5) ? "-" : "") + "9".repeat(rng.between(20, 400))

export const weirdNumber = (rng: Rng): Value =>
  rng.pick<() => Value>([
    () => 0,
    () => -0,
    () => -1,
    () => 1,
    () => 2,
    () => 0.5,
    () => 1.5,
    () => -0.000001,
    () => 4096,
    () => 1023,
    () => 1024,
    () => 1025,
    () => 200_001,
    () => 2 ** 31,
    () => 2 ** 32 + 1,
    () => Number.MAX_SAFE_INTEGER,
    () => Number.MAX_SAFE_INTEGER + 2,
    () => 1e21,
    () => 1e308,
    () => -1e308,
    () => Number.MIN_VALUE,
    () => new RawJson("1e400"),
    () => new RawJson("-1e400"),
    () => new RawJson("1.0"),
    () => new RawJson("1E2"),
    () => new RawJson("-0.0"),
    () => new RawJson(hugeDigits(rng)),
    () => new RawJson("0." + "0".repeat(350) + "1")
  ])()

export const longString = (rng: Rng): string => {
  const unit = rng.pick(["a", "word ", "日本", "😀", "\u0000", "\\", "\"", "\ud800", "e\u0301", "<>"])
  return unit.repeat(Math.ceil(rng.between(200, 6000) / unit.length))
}

export const weirdString = (rng: Rng): string =>
  rng.chance(0.15) ? longString(rng) : rng.chance(0.5) ? rng.pick(WEIRD_STRINGS) : `text ${rng.pick(WEIRD_STRINGS)} more`

/** `depth` levels of arrays or objects; written as raw text, so the generator's own walks never recurse into it. */
export const nested = (rng: Rng, depth: number): Value => {
  const leaf = rng.pick(["null", "1", "\"x\"", "true", "{}", "[]"])
  return rng.chance(0.5)
    ? new RawJson("[".repeat(depth) + leaf + "]".repeat(depth))
    : new RawJson("{\"a\":".repeat(depth) + leaf + "}".repeat(depth))
}

export const randomValue = (rng: Rng, depth = 0): Value => {
  switch (rng.int(depth > 1 ? 8 : 11)) {
    case 0:
      return null
    case 1:
      return rng.chance(0.5)
    case 2:
    case 3:
      return weirdNumber(rng)
    case 4:
    case 5:
      return weirdString(rng)
    case 6:
      return rng.pick<Value>([[], {}, [null], [""], { "": "" }, [[]], [{}]])
    case 7:
      return nested(rng, rng.pick([2, 10, 100, 1000, 3000, 5000]))
    case 8:
      return Array.from({ length: rng.between(1, 4) }, () => randomValue(rng, depth + 1))
    case 9: {
      const out: Obj = {}
      for (let i = rng.between(1, 3); i > 0; i--) setKey(out, rng.pick(UNKNOWN_KEYS), randomValue(rng, depth + 1))
      return out
    }
    default:
      return randomPart(rng)
  }
}

/** A content part / block of a random type, valid-looking or not. */
export const randomPart = (rng: Rng): Value => {
  const text = rng.chance(0.7) ? "part text" : weirdString(rng)
  return rng.pick<() => Value>([
    () => ({ type: "text", text }),
    () => ({ type: "text", text, cache_control: { type: "ephemeral" } }),
    () => ({ type: "text", text: "", cache_control: { type: "ephemeral" } }),
    () => ({ type: "text", text, cache_control: { type: "ephemeral", ttl: rng.pick(["5m", "1h", "2h", "", "5M"]) } }),
    () => ({ type: "text", text, cache_control: { type: rng.pick(["persistent", "", "EPHEMERAL"]) } }),
    () => ({ type: "text" }),
    () => ({ type: "text", text: randomValue(rng, 2) }),
    () => ({ type: "image_url", image_url: { url: "https://example.com/cat.png" } }),
    () => ({ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }),
    () => ({ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }),
    () => ({ type: "file", file: { file_id: "file-1" } }),
    () => ({ type: "document", source: { type: "text", media_type: "text/plain", data: "doc" } }),
    () => ({ type: "refusal", refusal: "no" }),
    () => ({ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" } }),
    () => ({ type: "tool_use", id: "toolu_9", name: "get_weather", input: randomValue(rng, 2) }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: "sunny" }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: [{ type: "text", text: "sunny", cache_control: { type: "ephemeral" } }] }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: [{ type: "image", source: {} }] }),
    () => ({ type: "thinking", thinking: "hmm", signature: "sig" }),
    () => ({ type: "redacted_thinking", data: "xx" }),
    () => ({ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }),
    () => ({ type: rng.pick(["", "TEXT", "unknown", "__proto__", "text "]), text }),
    () => ({ text }),
    () => null,
    () => text,
    () => 42,
    () => [{ type: "text", text }]
  ])()
}

/** A body that is not a JSON object at all. */
export const nonObjectBody = (rng: Rng, valid: string): { bytes: Uint8Array; note: string } => {
  const text = (s: string) => new TextEncoder().encode(s)
  const choice = rng.int(12)
  switch (choice) {
    case 0:
      return { bytes: text(valid.slice(0, rng.int(valid.length))), note: "truncated JSON" }
    case 1:
      return { bytes: text(rng.pick(["null", "true", "0", "-1", "\"text\"", "[]", "[{}]", "1e400", "\"\""])), note: "JSON non-object" }
    case 2:
      return { bytes: text(`[${valid}]`), note: "JSON array of the body" }
    case 3:
      return { bytes: new Uint8Array(0), note: "empty body" }
    case 4:
      return { bytes: Uint8Array.from({ length: rng.between(1, 256) }, () => rng.int(256)), note: "random bytes" }
    case 5:
      return { bytes: text(`\ufeff${valid}`), note: "BOM before the JSON" }
    case 6:
      return { bytes: text(valid.replace(/}$/, ",}")), note: "trailing comma" }
    case 7:
      return { bytes: text(valid.replace(/"/g, "'")), note: "single quotes" }
    case 8: {
      const bytes = text(valid)
      const out = new Uint8Array(bytes.length + 2)
      const at = rng.int(bytes.length)
      out.set(bytes.subarray(0, at))
      out.set([0xc3, 0x28], at)
      out.set(bytes.subarray(at), at + 2)
      return { bytes: out, note: "invalid UTF-8 inside" }
    }
    case 9:
      return { bytes: text(`${valid}${valid}`), note: "two JSON documents" }
    case 10:
      return { bytes: text(`${valid}\u0000`), note: "NUL after the JSON" }
    default:
      return { bytes: text("model=gpt-4.1&messages=hi"), note: "form encoded" }
  }
}
