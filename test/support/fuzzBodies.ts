/**
 * Seeded, generated request bodies for fuzzing the inference endpoints (issue 11 item 8): valid seed requests of
 * each inbound format, each mutated 1-3 times (a field deleted, retyped, an unknown field added, arrays emptied or
 * grown past their limits, roles and models changed, content swapped for parts of random types, deep nesting,
 * unicode and control characters), and now and then a body that is not JSON or not a JSON object.
 *
 * The messages formats (`messages`: POST /v1/messages, `count`: POST /v1/messages/count_tokens) also know what
 * Anthropic's own clients send (docs/decisions.md "Messages as Anthropic's own clients send them", "Token counting"):
 * `context_management`, `output_config`, `output_format`, the top-level `cache_control`, thinking / redacted_thinking
 * blocks, per-turn system messages, breakpoints on tool blocks, the tools' own fields, a trimmed Claude Code body
 * (test/fixtures/claude-code), and the `anthropic-beta` header and `?beta=true` on the path; valid and hostile.
 *
 * The Responses formats (`responses`: POST /v1/responses, `input_tokens`: POST /v1/responses/input_tokens) have
 * seeds and mutations of their own (fuzzResponses.ts, fuzzResponsesMutations.ts): valid bodies generated with every
 * field the format takes, Codex CLI's captured bodies (test/fixtures/codex) and Codex's headers beside them.
 *
 * Every body is a pure function of (seed, format, index): `generateFuzzBody(format, seed, index)` replays any one of
 * a run on its own.
 *
 * This module is the generator and the request around the body; the rest lives beside it:
 * - fuzzCore.ts: the knobs, the PRNG, the JSON value model and the walk (shared with fuzzAccountBodies.ts);
 * - fuzzValues.ts: hostile values and non-object bodies, of no endpoint in particular;
 * - fuzzSeeds.ts: the chat and plain messages seeds;
 * - fuzzAgentDialect.ts: what Anthropic's own clients send, valid: their seeds, Claude Code's, the whole messages and
 *   count_tokens seeds, and the `anthropic-beta` header and query string;
 * - fuzzMutations.ts: the mutations of every format and the weighted draw;
 * - fuzzAgentMutations.ts: the mutations of the messages formats only;
 * - fuzzResponses.ts: the Responses formats' valid seeds (generated, hand-written and Codex's);
 * - fuzzResponsesValues.ts, fuzzResponsesMutations.ts: their hostile values, their mutations and their head;
 * - fuzzResponsesRefusals.ts, fuzzResponsesReads.ts: their refusals one at a time, and the reads of stored responses;
 * - fuzzExercise.ts, fuzzAnswers.ts: sending a body and judging its answer.
 */
import { clone, type FuzzFormat, isMessagesFormat, isResponsesFormat, mixSeed, mulberry32, type Obj, RawEntries, Rng, serialize } from "./fuzzCore.ts"
import { CLAUDE_CODE_BETAS, COUNT_SEEDS, headOf, MESSAGES_SEEDS } from "./fuzzAgentDialect.ts"
import { MUTATIONS, pickMutation } from "./fuzzMutations.ts"
import { CODEX_HEADERS, CODEX_SEED_COUNT, INPUT_TOKENS_SEEDS, RESPONSES_SEEDS } from "./fuzzResponses.ts"
import { pickResponsesMutation, RESPONSES_FALLBACK, responsesHeadOf } from "./fuzzResponsesMutations.ts"
import { CHAT_SEEDS } from "./fuzzSeeds.ts"
import { nonObjectBody, randomValue } from "./fuzzValues.ts"

export interface FuzzBody {
  readonly format: FuzzFormat
  readonly index: number
  readonly seedRequest: number
  readonly mutations: ReadonlyArray<string>
  readonly bytes: Uint8Array
  /** undefined = no Content-Type header. */
  readonly contentType: string | undefined
  /** messages and count: send the key as x-api-key rather than Bearer. */
  readonly xApiKey: boolean
  /** The `anthropic-beta` header; undefined = none. */
  readonly betaHeader: string | undefined
  /** After the path: "" or a query string (`?beta=true`, as Claude Code sends, or worse). */
  readonly query: string
  /** Other headers a client sends beside the body (Codex's, on the Responses formats); undefined = none. */
  readonly extraHeaders?: Readonly<Record<string, string>> | undefined
}

export const MAX_FUZZ_BODY_BYTES = 16 * 1024
/** Codex's bodies are ~44 kB as captured: the Responses formats' bodies may be this large. */
export const MAX_RESPONSES_BODY_BYTES = 64 * 1024
const maxBytesOf = (format: FuzzFormat) => (isResponsesFormat(format) ? MAX_RESPONSES_BODY_BYTES : MAX_FUZZ_BODY_BYTES)

export const FUZZ_PATHS: Record<FuzzFormat, string> = {
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
  count: "/v1/messages/count_tokens",
  responses: "/v1/responses",
  input_tokens: "/v1/responses/input_tokens"
}

const SEEDS: Record<FuzzFormat, ReadonlyArray<Obj>> = {
  chat: CHAT_SEEDS,
  messages: MESSAGES_SEEDS,
  count: COUNT_SEEDS,
  responses: RESPONSES_SEEDS,
  input_tokens: INPUT_TOKENS_SEEDS
}

/** The request head beyond the body: Anthropic's for the messages formats, Codex's for the Responses ones. */
const headFor = (format: FuzzFormat, seed: number, index: number) =>
  isResponsesFormat(format) ? { betaHeader: undefined, ...responsesHeadOf(format, seed, index) } : headOf(format, seed, index)

const pick = (rng: Rng, format: FuzzFormat) => (isResponsesFormat(format) ? pickResponsesMutation(rng) : pickMutation(rng, format))

/** Body `index` of a run with `seed`: a seed request of `format` with 1-3 mutations, or (rarely) not a JSON object. */
export const generateFuzzBody = (format: FuzzFormat, seed: number, index: number): FuzzBody => {
  const rng = new Rng(mulberry32(mixSeed(seed, format, index)))
  const head = headFor(format, seed, index)
  const seeds = SEEDS[format]
  const seedRequest = rng.int(seeds.length)
  const contentType = rng.chance(0.03)
    ? rng.pick([undefined, "text/plain", "application/json; charset=utf-8", "application/vnd.api+json", "application/x-www-form-urlencoded", "APPLICATION/JSON"])
    : "application/json"
  const xApiKey = isMessagesFormat(format) && rng.chance(0.5)
  const validText = serialize(seeds[seedRequest]!)
  if (rng.chance(0.04)) {
    const { bytes, note } = nonObjectBody(rng, validText)
    return { format, index, seedRequest, mutations: [note], bytes, contentType, xApiKey, ...head }
  }
  for (let attempt = 0; ; attempt++) {
    const body = clone(seeds[seedRequest]!) as Obj
    const mutations: Array<string> = []
    const count = attempt >= 5 ? 1 : rng.between(1, 3)
    for (let i = 0; i < count; i++) {
      const [, name, mutate] = attempt >= 5 ? (isResponsesFormat(format) ? RESPONSES_FALLBACK : MUTATIONS[2]!) : pick(rng, format)
      const note = mutate(rng, body, format)
      mutations.push(note ?? `${name} (no-op)`)
    }
    let text = serialize(body)
    const keys = Object.keys(body)
    if (keys.length > 0 && rng.chance(0.02)) {
      // A key written twice: JSON.parse keeps the last one.
      const key = rng.pick(keys)
      text = serialize(new RawEntries([...keys.map((k) => [k, body[k]!] as const), [key, randomValue(rng, 1)]]))
      mutations.push(`duplicate key ${key}`)
    }
    const bytes = new TextEncoder().encode(text)
    if (bytes.length <= maxBytesOf(format) || attempt >= 8) {
      const sent = bytes.length <= maxBytesOf(format) ? bytes : new TextEncoder().encode(validText)
      return { format, index, seedRequest, mutations, bytes: sent, contentType, xApiKey, ...head }
    }
  }
}

/** A seed request as it is, unmutated, with the head a client would send it with. */
export const seedBody = (format: FuzzFormat, seedRequest: number): FuzzBody => {
  // Every other messages seed as Claude Code sends it: x-api-key, its betas, `?beta=true`.
  const claudeCode = isMessagesFormat(format) && seedRequest % 2 === 1
  // Codex's bodies (the last seeds of the Responses formats) with Codex's headers.
  const codex = isResponsesFormat(format) && seedRequest >= SEEDS[format].length - CODEX_SEED_COUNT
  return {
    format,
    index: -1 - seedRequest,
    seedRequest,
    mutations: [],
    bytes: new TextEncoder().encode(serialize(SEEDS[format][seedRequest]!)),
    contentType: "application/json",
    xApiKey: claudeCode,
    betaHeader: claudeCode ? CLAUDE_CODE_BETAS : undefined,
    query: claudeCode ? "?beta=true" : "",
    extraHeaders: codex ? CODEX_HEADERS : undefined
  }
}

export const seedsOf = (format: FuzzFormat): ReadonlyArray<Obj> => SEEDS[format]
