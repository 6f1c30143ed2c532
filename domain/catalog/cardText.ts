/**
 * The scalars of a price card as they come from a failsafe YAML read (every scalar is text), checked and converted:
 * prices to exact usd18, dates, positive integers, flags, URLs and keys. card.ts builds the file shape from them.
 */
import { Either, ParseResult, Schema } from "effect"
import { DateOrInstantParam } from "../dates.ts"
import { parseUsd18Either } from "../money.ts"

export const Provenance = Schema.Literal("verified", "inferred", "promotional")
export type Provenance = typeof Provenance.Type

export const Availability = Schema.Literal("ga", "preview")
export const ModelKind = Schema.Literal("text", "embedding", "image", "audio", "video", "moderation", "other")
export type ModelKind = typeof ModelKind.Type

// ---------------------------------------------------------------------------------------------------------
// Scalars as they come from a failsafe YAML read: text, checked and converted here.

/** A USD amount written as a plain decimal. */
export const UsdText = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (text, _, ast) =>
    Either.match(parseUsd18Either(text.trim()), {
      onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, text, message)),
      onRight: (value) => ParseResult.succeed(value as bigint)
    }),
  encode: (value) => ParseResult.succeed(value.toString())
}).annotations({ identifier: "UsdPerMillion" })

/** A date (midnight UTC) or an instant with its offset, read as every date of this service is (domain/dates.ts). */
export const DateText = Schema.compose(Schema.Trim, DateOrInstantParam)

export const PositiveIntText = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (text, _, ast) =>
    /^[1-9][0-9]{0,15}$/.test(text.trim())
      ? ParseResult.succeed(Number(text.trim()))
      : ParseResult.fail(new ParseResult.Type(ast, text, `"${text}" is not a positive integer`)),
  encode: (n) => ParseResult.succeed(String(n))
})

export const BooleanText = Schema.transformOrFail(Schema.String, Schema.Boolean, {
  strict: true,
  decode: (text, _, ast) =>
    text.trim() === "true"
      ? ParseResult.succeed(true)
      : text.trim() === "false"
        ? ParseResult.succeed(false)
        : ParseResult.fail(new ParseResult.Type(ast, text, `"${text}" is not true or false`)),
  encode: (b) => ParseResult.succeed(String(b))
})

export const HttpsUrl = Schema.String.pipe(
  Schema.filter((text) => /^https:\/\/[^\s/]+\.[^\s]+$/.test(text.trim()) || `"${text}" is not an https URL`)
)

export const Slug = (what: string, pattern: RegExp) =>
  Schema.String.pipe(Schema.filter((text) => pattern.test(text) || `"${text}" is not a valid ${what}`))

export const ProviderKey = Slug("provider key", /^[a-z][a-z0-9-]{1,31}$/)
export const FamilyKey = Slug("family key (<provider>.<product-line>)", /^[a-z][a-z0-9-]{1,31}\.[a-z0-9][a-z0-9.-]{0,63}$/)
export const ModelId = Slug("model id (<vendor>/<model>, lower case)", /^[a-z0-9][a-z0-9-]{0,31}\/[a-z0-9][a-z0-9._:-]{0,95}$/)

export const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url.trim()).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/** The last two labels of a URL's host: platform.openai.com -> openai.com, docs.z.ai -> z.ai. */
export const registrableDomain = (url: string): string => (hostOf(url) ?? "").split(".").slice(-2).join(".")

/** A decoder issue's path as the card names it: `prices[0].input`. */
export const fieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, segment) => (typeof segment === "number" ? `${text}[${segment}]` : text === "" ? String(segment) : `${text}.${String(segment)}`),
    ""
  )
