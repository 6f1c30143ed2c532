/**
 * Deterministic text and o200k tokenization (the cache memories are in cache.ts).
 *
 * Prompt token framing (the same rule for all three vendors):
 *  - every message / turn, the system prompt and every tool definition costs 3 framing tokens
 *    (start, role, separator) plus the o200k tokens of its content;
 *  - text content counts its o200k tokens; a tool definition counts the tokens of its JSON; a tool call in
 *    the history counts the tokens of its name plus its arguments JSON; a tool result counts its text (or the
 *    JSON of a structured result); every non-text part (image, audio, file, document) counts a flat 85 tokens;
 *  - the request adds 3 tokens priming the reply (like OpenAI's `<|start|>assistant<|message|>`).
 * The order is tools, then system, then messages, so a cache prefix covers tools first (Anthropic's order).
 * Completion tokens are the o200k tokens of the generated text, plus reasoning tokens; a generated tool call
 * counts the tokens of its name plus its arguments JSON.
 */
import { createHmac, randomBytes } from "node:crypto"
import { decode, encode } from "gpt-tokenizer/encoding/o200k_base"

const ENCODE_OPTIONS = { disallowedSpecial: new Set<string>() }
const EMPTY: readonly number[] = []

/** A small insertion-ordered LRU. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>()
  constructor(private readonly max: number) {}
  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value !== undefined) {
      this.map.delete(key)
      this.map.set(key, value)
    }
    return value
  }
  set(key: K, value: V): void {
    if (this.map.size >= this.max) {
      const oldest = this.map.keys().next()
      if (!oldest.done) this.map.delete(oldest.value)
    }
    this.map.set(key, value)
  }
}

const tokenCache = new Lru<string, readonly number[]>(4096)

/** o200k tokens of a string; identical strings are tokenized once (LRU). */
export const tokens = (text: string): readonly number[] => {
  if (text.length === 0) return EMPTY
  const hit = tokenCache.get(text)
  if (hit) return hit
  const ids = encode(text, ENCODE_OPTIONS)
  if (text.length <= 400_000) tokenCache.set(text, ids)
  return ids
}

export const countTokens = (text: string): number => tokens(text).length

/** Role codes for framing tokens. */
export const Role = { system: 1, user: 2, assistant: 3, tool: 4, toolDef: 5, developer: 6, other: 7 } as const
const roleCode = (role: unknown): number =>
  role === "system" ? Role.system
  : role === "user" ? Role.user
  : role === "assistant" || role === "model" ? Role.assistant
  : role === "tool" || role === "function" ? Role.tool
  : role === "developer" ? Role.developer
  : Role.other

export const FLAT_PART_TOKENS = 85
export const BLOCK = 128

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r))

/** A block boundary inside the prompt: the prefix length there and the hash of that prefix. */
export interface Mark {
  readonly at: number
  readonly key: number
}

/**
 * The prompt as a token stream, hashed as it is built: no token array is concatenated. Records the hash of the
 * prefix at every 128-token boundary (implicit caches) and at the end of every content block (explicit caches).
 */
export class PromptTokens {
  count = 0
  private h1 = 0x811c9dc5
  private h2 = 0x9747b28c
  readonly blocks: number[] = []
  readonly marks: Mark[] = []

  private push(t: number): void {
    let k = Math.imul(t, 0xcc9e2d51)
    k = Math.imul(rotl(k, 15), 0x1b873593)
    this.h1 = (Math.imul(rotl(this.h1 ^ k, 13), 5) + 0xe6546b64) | 0
    this.h2 = Math.imul(this.h2 ^ t, 16777619) ^ (this.h2 >>> 15)
    this.count++
    if (this.count % BLOCK === 0) this.blocks.push(this.key())
  }
  /** Hash of the whole prefix so far, as a safe integer. */
  key(): number {
    return (this.h1 >>> 0) * 2097152 + ((this.h2 >>> 0) >>> 11)
  }
  /** A 32-bit seed derived from everything pushed so far. */
  seed(): number {
    return (this.h1 ^ rotl(this.h2, 7)) >>> 0
  }
  frame(role: unknown): void {
    this.push(-1)
    this.push(-10 - (typeof role === "number" ? role : roleCode(role)))
    this.push(-2)
  }
  text(value: string): void {
    const ids = tokens(value)
    for (let i = 0; i < ids.length; i++) this.push(ids[i]!)
  }
  json(value: unknown): void {
    this.text(typeof value === "string" ? value : JSON.stringify(value ?? null))
  }
  flat(sizeHint: number): void {
    for (let i = 0; i < FLAT_PART_TOKENS; i++) this.push(-100 - ((sizeHint + i) % 997))
  }
  mark(): number {
    this.marks.push({ at: this.count, key: this.key() })
    return this.marks.length - 1
  }
}

// ---------------------------------------------------------------------------------------------- generation

const WORDS = (
  "the model answers with simulated text for testing and each word is chosen from a small list so that token " +
  "counts stay stable across runs while replies still vary by prompt in length every request gets its own " +
  "deterministic sequence of plain words which keeps streaming chunks short predictable easy to check when " +
  "gateway measures latency usage billing cache reads writes reasoning notes output"
).split(" ")

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export const hashString = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619)
  return h >>> 0
}

/** The first `n` words of a text, on one line. */
export const firstWords = (text: string, n = 8): string => {
  const words = text.trim().split(/\s+/, n).filter((w) => w.length > 0)
  return words.length === 0 ? "(empty prompt)" : words.join(" ")
}

export interface Generated {
  readonly text: string
  readonly ids: readonly number[]
}
const generatedCache = new Lru<string, Generated>(2048)

/** `lead` followed by seeded filler words up to about `minTokens + seed % spread` tokens, ending with a period. */
export const generate = (lead: string, seed: number, minTokens: number, spread: number): Generated => {
  const target = minTokens + (seed % Math.max(1, spread))
  const cacheKey = `${seed}\u0000${target}\u0000${lead}`
  const hit = generatedCache.get(cacheKey)
  if (hit) return hit
  const rng = mulberry32(seed)
  const fillers = Math.max(0, target - tokens(lead).length - 1)
  let text = lead
  for (let i = 0; i < fillers; i++) text += " " + WORDS[Math.floor(rng() * WORDS.length)]
  text += "."
  const out = { text, ids: tokens(text) }
  generatedCache.set(cacheKey, out)
  return out
}

/** Generated text truncated to `limit` tokens. */
export const truncate = (g: Generated, limit: number): Generated => {
  if (g.ids.length <= limit) return g
  const ids = g.ids.slice(0, Math.max(0, limit))
  return { text: decode(ids).replace(/\uFFFD+$/, ""), ids }
}

export interface Finished extends Generated {
  readonly reason: "end" | "length" | "stop"
  readonly stop: string | null
}

/** Applies a token limit and stop sequences the way a model generating left to right would. */
export const finish = (g: Generated, limit: number | undefined, stops: readonly string[]): Finished => {
  let cut = -1
  let stop: string | null = null
  for (const s of stops) {
    if (s.length === 0) continue
    const at = g.text.indexOf(s)
    if (at >= 0 && (cut < 0 || at < cut)) {
      cut = at
      stop = s
    }
  }
  if (cut >= 0) {
    const text = g.text.slice(0, cut)
    const ids = tokens(text)
    if (limit === undefined || ids.length <= limit) return { text, ids, reason: "stop", stop }
  }
  if (limit !== undefined && g.ids.length > limit) return { ...truncate(g, limit), reason: "length", stop: null }
  return { text: g.text, ids: g.ids, reason: "end", stop: null }
}

export interface Piece {
  readonly text: string
  /** tokens emitted so far, this piece included */
  readonly total: number
}

/** Splits generated text into stream pieces of `per` tokens; their concatenation is the text. */
export const pieces = (g: Generated, per = 3): Piece[] => {
  const out: Piece[] = []
  const n = g.ids.length
  // eslint-disable-next-line no-control-regex
  const ascii = /^[\x00-\x7f]*$/.test(g.text)
  let emitted = ""
  for (let at = 0; at < n; ) {
    let end = Math.min(n, at + per)
    if (ascii) {
      out.push({ text: decode(g.ids.slice(at, end)), total: end })
    } else {
      let prefix = decode(g.ids.slice(0, end))
      while (prefix.endsWith("\uFFFD") && end < n) prefix = decode(g.ids.slice(0, ++end))
      const text = end === n ? g.text.slice(emitted.length) : prefix.slice(emitted.length)
      emitted += text
      out.push({ text, total: end })
    }
    at = end
  }
  return out
}

/** Splits a string into `n` roughly equal pieces (for streamed JSON arguments). */
export const splitString = (text: string, size = 12): string[] => {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

// ---------------------------------------------------------------------------------------------- tools & ids

const typeOf = (schema: Record<string, unknown>): string => {
  const t = schema["type"]
  const name = Array.isArray(t) ? t.find((x) => x !== "null") : t
  return typeof name === "string" ? name.toLowerCase() : schema["properties"] ? "object" : "string"
}

/** A small value matching a JSON schema: strings "sim", numbers 1, booleans true, first enum value. */
export const sampleFromSchema = (schema: unknown, depth = 0): unknown => {
  if (schema === null || typeof schema !== "object" || depth > 4) return "sim"
  const s = schema as Record<string, unknown>
  if (Array.isArray(s["enum"]) && s["enum"].length > 0) return s["enum"][0]
  if ("const" in s) return s["const"]
  const alt = s["anyOf"] ?? s["oneOf"]
  if (Array.isArray(alt) && alt.length > 0) return sampleFromSchema(alt[0], depth + 1)
  switch (typeOf(s)) {
    case "number":
    case "integer":
      return 1
    case "boolean":
      return true
    case "null":
      return null
    case "array":
      return s["items"] ? [sampleFromSchema(s["items"], depth + 1)] : []
    case "object": {
      const out: Record<string, unknown> = {}
      const props = s["properties"]
      if (props && typeof props === "object") {
        for (const [name, sub] of Object.entries(props as Record<string, unknown>)) {
          out[name] = sampleFromSchema(sub, depth + 1)
        }
      }
      return out
    }
    default:
      return "sim"
  }
}

/** Whether an "auto" tool choice should call a tool: the text says "tool(s)" or names one of the tools. */
export const mentionsTool = (text: string, names: readonly string[]): string | true | undefined => {
  const lower = text.toLowerCase()
  for (const name of names) if (name.length > 0 && lower.includes(name.toLowerCase())) return name
  return /\btools?\b/.test(lower) ? true : undefined
}

const ID_PREFIX = randomBytes(4).toString("hex")
let idCounter = 0
/** A unique hex id: 8 random hex chars of this process, then a counter (`len` >= 16). */
export const hexId = (len = 24): string => {
  const counter = (++idCounter).toString(16)
  return ID_PREFIX + counter.padStart(len - ID_PREFIX.length, "0")
}

const SIGNING_KEY = randomBytes(32)
/** Signature of a thinking block: base64 of an HMAC-SHA256 of the thinking text. */
export const signThinking = (thinking: string): string =>
  createHmac("sha256", SIGNING_KEY).update(thinking).digest("base64")

/**
 * The thinking this process signed, by signature, and whether its text was shown (`display: "omitted"` gives the
 * client an empty text with the signature), so a replayed block can be checked as Anthropic checks it.
 */
const issued = new Map<string, { readonly text: string; readonly omitted: boolean }>()
const ISSUED_LIMIT = 100_000

export const issueSignature = (thinking: string, omitted: boolean): string => {
  const signature = signThinking(omitted ? `omitted:${thinking}` : thinking)
  if (issued.size >= ISSUED_LIMIT) issued.delete(issued.keys().next().value!)
  issued.set(signature, { text: thinking, omitted })
  return signature
}

/** Whether a replayed thinking block is one this process issued, with the text it was given out with. */
export const verifyThinking = (thinking: string, signature: string): boolean => {
  const known = issued.get(signature)
  return known !== undefined && thinking === (known.omitted ? "" : known.text)
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

export type ToolMode = "none" | "auto" | "any"

/**
 * The tool a reply calls, or undefined for a text reply: a forced name wins; "any" calls the mentioned tool or the
 * first; "auto" calls one only when the last turn is the user's and its text says "tool(s)" or names a tool.
 */
export const chooseTool = (
  names: readonly string[],
  mode: ToolMode,
  forced: string | undefined,
  lastUserText: string,
  lastIsUser: boolean
): string | undefined => {
  if (names.length === 0 || mode === "none") return undefined
  if (forced !== undefined) return forced
  const mention = lastIsUser ? mentionsTool(lastUserText, names) : undefined
  if (mode === "auto" && mention === undefined) return undefined
  return typeof mention === "string" ? mention : names[0]
}

/** Hidden reasoning tokens for an OpenAI-style reasoning effort. */
export const hiddenReasoning = (effort: string, seed: number): number => {
  switch (effort) {
    case "none":
      return 0
    case "minimal":
      return 8 + (seed % 8)
    case "low":
      return 64 + (seed % 64)
    case "high":
      return 512 + (seed % 256)
    case "xhigh":
      return 1024 + (seed % 512)
    default:
      return 192 + (seed % 128)
  }
}

export const numberOr = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? Math.floor(value) : undefined

export const stringList = (value: unknown): string[] =>
  typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((s): s is string => typeof s === "string") : []
