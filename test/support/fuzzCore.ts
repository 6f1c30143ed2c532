/**
 * The machinery under the fuzz bodies (test/support/fuzzBodies.ts, fuzzAccountBodies.ts): the environment knobs, the
 * seeded PRNG, the JSON value model with what JSON.stringify cannot write (raw text, duplicate keys) and its
 * serialize / clone / deepFreeze, and the walk over a body's slots that the mutations pick from.
 */

/**
 * The fuzzed endpoints: `chat` POST /v1/chat/completions, `messages` POST /v1/messages, `count` its count_tokens,
 * `responses` POST /v1/responses, `input_tokens` POST /v1/responses/input_tokens.
 */
export type FuzzFormat = "chat" | "messages" | "count" | "responses" | "input_tokens"

/** The token counts: free, no generation, a count for an answer. */
export const isCountFormat = (format: FuzzFormat): format is "count" | "input_tokens" => format === "count" || format === "input_tokens"

/** The Responses formats (their own seeds and mutations: test/support/fuzzResponses*.ts). */
export const isResponsesFormat = (format: FuzzFormat): format is "responses" | "input_tokens" => format === "responses" || format === "input_tokens"

/** The messages formats (Anthropic's head: x-api-key, anthropic-beta, ?beta=true). */
export const isMessagesFormat = (format: FuzzFormat): format is "messages" | "count" => format === "messages" || format === "count"

/** A fuzzing knob from the environment (FUZZ_SEED, FUZZ_COUNT, ...): an integer >= `min`, else `fallback` when unset. */
export const envInt = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`)
  return value
}

// ---------------------------------------------------------------------------------------------------------
// PRNG

/** mulberry32: a small, fast, well-mixed 32-bit generator. */
export const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const FORMAT_SALT: Record<FuzzFormat, number> = {
  chat: 0x1b873593,
  messages: 0xcc9e2d51,
  count: 0xe6546b64,
  responses: 0x85ebca77,
  input_tokens: 0x2f1b3c4d
}

/** One 32-bit seed per (run seed, format, index), so every body can be regenerated alone. */
export const mixSeed = (seed: number, format: FuzzFormat, index: number): number => {
  let h = (seed ^ FORMAT_SALT[format]) >>> 0
  for (const part of [index, index >>> 16, 0x27d4eb2f]) {
    h = Math.imul(h ^ part, 0x85ebca6b) >>> 0
    h = (h ^ (h >>> 13)) >>> 0
    h = Math.imul(h, 0xc2b2ae35) >>> 0
    h = (h ^ (h >>> 16)) >>> 0
  }
  return h
}

export class Rng {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  between(min: number, max: number): number {
    return min + this.int(max - min + 1)
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  pick<A>(items: ReadonlyArray<A>): A {
    return items[this.int(items.length)]!
  }
  /** One of `items`, each as likely as its weight (its first element); `total` is the weights' sum. */
  weighted<A extends readonly [number, ...Array<unknown>]>(items: ReadonlyArray<A>, total: number): A {
    let roll = this.int(total)
    for (const item of items) {
      roll -= item[0]
      if (roll < 0) return item
    }
    return items[0]!
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON values, with the few things JSON.stringify cannot write

/** Written verbatim into the body (1e400, -0, 1.0, a number with 400 digits ...). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object written with these entries in this order, duplicate keys included. */
export class RawEntries {
  constructor(readonly entries: ReadonlyArray<readonly [string, Value]>) {}
}

export type Value = null | boolean | number | string | RawJson | RawEntries | Array<Value> | { [key: string]: Value }
export type Obj = { [key: string]: Value }

export const isObj = (v: Value): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RawJson) && !(v instanceof RawEntries)

/** Sets an own, enumerable property, `__proto__` included (plain assignment would change the prototype). */
export const setKey = (obj: Obj, key: string, value: Value) => {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}

export const serialize = (value: Value): string => {
  if (value instanceof RawJson) return value.text
  if (value instanceof RawEntries) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(",")}}`
  if (Array.isArray(value)) return `[${value.map(serialize).join(",")}]`
  if (isObj(value)) return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${serialize(value[k]!)}`).join(",")}}`
  return JSON.stringify(value)
}

export const clone = (value: Value): Value => {
  if (value instanceof RawJson || value instanceof RawEntries) return value
  if (Array.isArray(value)) return value.map(clone)
  if (isObj(value)) {
    const out: Obj = {}
    for (const key of Object.keys(value)) setKey(out, key, clone(value[key]!))
    return out
  }
  return value
}

/** Frozen all the way down: a mutation that reached a shared table instead of its own copy would throw. */
export const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

// ---------------------------------------------------------------------------------------------------------
// The walk over a body's slots, and the type of a mutation

interface Slot {
  readonly parent: Obj | Array<Value>
  readonly key: string | number
  readonly value: Value
  readonly path: string
}

export const slotsOf = (root: Value): Array<Slot> => {
  const out: Array<Slot> = []
  const walk = (value: Value, path: string) => {
    if (Array.isArray(value)) {
      value.forEach((child, i) => {
        out.push({ parent: value, key: i, value: child, path: `${path}[${i}]` })
        walk(child, `${path}[${i}]`)
      })
    } else if (isObj(value)) {
      for (const key of Object.keys(value)) {
        const child = value[key]!
        out.push({ parent: value, key, value: child, path: `${path}.${key}` })
        walk(child, `${path}.${key}`)
      }
    }
  }
  walk(root, "")
  return out
}

export const put = (slot: Slot, value: Value) => {
  if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = value
  else setKey(slot.parent, slot.key as string, value)
}

export const objectsOf = (root: Value): Array<{ obj: Obj; path: string }> => {
  const out: Array<{ obj: Obj; path: string }> = isObj(root) ? [{ obj: root, path: "" }] : []
  for (const slot of slotsOf(root)) if (isObj(slot.value)) out.push({ obj: slot.value, path: slot.path })
  return out
}

export const arraysOf = (root: Value): Array<Slot> => slotsOf(root).filter((slot) => Array.isArray(slot.value))

export const messagesOf = (root: Value): Array<Obj> => {
  if (!isObj(root) || !Array.isArray(root["messages"])) return []
  return root["messages"].filter(isObj)
}

export type Mutation = (rng: Rng, body: Obj, format: FuzzFormat) => string | undefined
