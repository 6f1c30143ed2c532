/**
 * The pre-request estimate (SPEC "Billing" 4), pure: what the hold is sized on before a vendor has said anything.
 * The input is a local o200k_base count scaled by a per-vendor ratio (used when the vendor's own counter is not
 * called); the output is the limit the client asked for, else 4096.
 */
import { Either, ParseResult, Schema } from "effect"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { parse as parseYaml } from "yaml"
import type { ChatRequest } from "./canonical.ts"
import { DEFAULT_MAX_TOKENS } from "./reasoning.ts"

/**
 * gpt-tokenizer builds the o200k_base encoder when its module is first imported (GptEncoding.getEncodingApi runs at
 * module evaluation), so this import is the one build per process (DESIGN.md "Hot path budget").
 * Text is counted as plain text: a client writing "<|endoftext|>" gets it counted, not an exception
 * (the library's default refuses special tokens). One options object, so no per-call set-up.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() } as const

const count = (text: string): number => (text === "" ? 0 : countTokens(text, PLAIN_TEXT))

/** Chat framing (SPEC Billing 4): each message's role and separators, and the primed reply. */
export const TOKENS_PER_MESSAGE = 4
export const TOKENS_FOR_REPLY = 3

/** Where the service reads the per-vendor ratios from (relative to the project root). */
export const TOKEN_RATIOS_PATH = "data/exchange/token-ratios.yaml"

/** For a vendor the file does not list: a quarter over o200k, on the side of holding too much. */
export const DEFAULT_TOKEN_RATIO = 1.25

/** Walks what the estimate counts (messages, tools, response schema, framing), each text measured by `measure`. */
const measureInput = (chat: ChatRequest, measure: (text: string) => number): number => {
  let tokens = TOKENS_FOR_REPLY
  for (const message of chat.messages) {
    tokens += TOKENS_PER_MESSAGE
    for (const part of message.parts) tokens += measure(part.text)
    if (message.role === "assistant") {
      for (const call of message.toolCalls) tokens += measure(call.name) + measure(call.arguments)
      if (message.reasoning !== undefined) tokens += measure(message.reasoning)
    }
  }
  for (const tool of chat.tools) {
    tokens += measure(tool.name) + measure(tool.description ?? "") + measure(JSON.stringify(tool.parameters))
  }
  if (chat.responseFormat?.type === "json_schema") tokens += measure(JSON.stringify(chat.responseFormat.schema))
  return tokens
}

/** The request's o200k_base count before the vendor's ratio: messages, tools, response schema, framing. */
export const countInputTokensO200k = (chat: ChatRequest): number => measureInput(chat, count)

/**
 * A bound of that count that needs no tokenizer: o200k_base is a byte-level BPE, so every token covers at least one
 * UTF-8 byte of the text it encodes, and a text never has more tokens than bytes. Measuring takes microseconds where
 * counting takes about 0.1 ms per 2,000 characters (40 ms for 400 KB on the bench machine).
 */
export const boundInputTokensO200k = (chat: ChatRequest): number => measureInput(chat, (text) => Buffer.byteLength(text, "utf8"))

/**
 * An o200k figure in the vendor's tokens: times the ratio, rounded up. The product is nudged down by a relative 1e-12
 * before rounding so that a float artefact (1000 * 1.1 = 1100.0000000000002) does not add a token; ratios have a few
 * decimals, so a true fraction is never that close to an integer at any realistic count.
 */
export const scaleByRatio = (o200k: number, ratio: number): number => {
  const product = o200k * ratio
  return Math.ceil(product - product * 1e-12)
}

/** The estimated input: the o200k count times the vendor's ratio, rounded up. */
export const estimateInputTokens = (chat: ChatRequest, ratio: number): number => scaleByRatio(countInputTokensO200k(chat), ratio)

/** SPEC Billing 4: max_completion_tokens, else max_tokens (both arrive as maxOutputTokens), else 4096. */
export const estimateOutputTokens = (chat: ChatRequest): number => chat.maxOutputTokens ?? DEFAULT_MAX_TOKENS

// ---------------------------------------------------------------------------------------------------------
// data/exchange/token-ratios.yaml

/** Checked on the whole record: a key refused by a key schema would only be reported as "unexpected". */
const badVendorKey = (ratios: { readonly [key: string]: unknown }): string | undefined =>
  Object.keys(ratios).find((key) => !/^[a-z][a-z0-9-]{1,31}$/.test(key))

const Ratio = Schema.Number.pipe(
  Schema.filter((n) => (Number.isFinite(n) && n >= 0.5 && n <= 4) || `ratio ${n} is outside 0.5-4 (tokens per o200k token)`)
)

const Explanation = Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "must not be empty"))

/** Each ratio says where it comes from (`source`) or why it was assumed (`note`), or both. */
const RatioEntry = Schema.Struct({
  ratio: Ratio,
  source: Schema.optional(Explanation),
  note: Schema.optional(Explanation)
}).pipe(Schema.filter((entry) => entry.source !== undefined || entry.note !== undefined || "needs a source or a note"))

const RatiosFile = Schema.Struct({
  ratios: Schema.Record({ key: Schema.String, value: RatioEntry }).pipe(
    Schema.filter((ratios) => {
      const bad = badVendorKey(ratios)
      return bad === undefined || `"${bad}" is not a catalog vendor key (lower case, as in data/cards)`
    })
  )
}).annotations({ parseOptions: { errors: "all", onExcessProperty: "error" } })

/** The ratios file's text into vendor key -> ratio, or one message naming every problem. */
export const parseTokenRatios = (yamlText: string): Either.Either<ReadonlyMap<string, number>, string> => {
  let raw: unknown
  try {
    raw = parseYaml(yamlText)
  } catch (error) {
    return Either.left(`${TOKEN_RATIOS_PATH} is not valid YAML: ${error instanceof Error ? error.message : String(error)}`)
  }
  return Either.match(Schema.decodeUnknownEither(RatiosFile)(raw), {
    onLeft: (error) =>
      Either.left(
        `${TOKEN_RATIOS_PATH}: ` +
          ParseResult.ArrayFormatter.formatErrorSync(error)
            .map((issue) => `${issue.path.length === 0 ? "(file)" : issue.path.join(".")}: ${issue.message}`)
            .join("; ")
      ),
    onRight: (file) =>
      Either.right(new Map(Object.entries(file.ratios).map(([vendor, entry]) => [vendor, entry.ratio] as const)))
  })
}

/** The ratio for a vendor: the file's, else the default. */
export const ratioFor = (ratios: ReadonlyMap<string, number>, vendor: string): number =>
  ratios.get(vendor) ?? DEFAULT_TOKEN_RATIO
