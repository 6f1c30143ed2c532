/**
 * The one reading of dates written as text, for the API's date parameters and the price cards alike: a date means the
 * same thing everywhere, and an impossible one (`2026-02-30`, `2026-09-31`, `T24:61`) is refused rather than rolled
 * over into another day, as `new Date(...)` would.
 *
 * Accepted: a calendar date `YYYY-MM-DD` (midnight UTC) or an instant `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z`
 * or a `±HH:MM` offset. Oracle parameters: `from`, `to` and price-at's `date` take either; scu-at's `date` only the
 * instant (SPEC: "full ISO-8601 instant with timezone offset").
 */
import { Either, ParseResult, Schema } from "effect"

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2})))?$/

export const DATE_OR_INSTANT_FORMS = "a date (YYYY-MM-DD, read as midnight UTC) or an instant with an offset (e.g. 2026-01-01T00:00:00Z)"
export const INSTANT_FORMS = "an instant with a time and an offset (e.g. 2026-01-01T00:00:00Z or 2026-01-01T09:30:00+02:00)"

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** The instant the text names, or why it names none. `dateOnly`: whether a bare calendar date is acceptable. */
export const parseIsoDate = (text: string, dateOnly: boolean): Either.Either<Date, string> => {
  const forms = dateOnly ? DATE_OR_INSTANT_FORMS : INSTANT_FORMS
  const match = PATTERN.exec(text)
  if (match === null) return Either.left(`"${text}" is not ${forms}`)
  const [, y, mo, d, h, mi, s, fraction, zone, sign, oh, om] = match
  if (h === undefined && !dateOnly) return Either.left(`"${text}" has no time: expected ${forms}`)
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  if (month < 1 || month > 12) return Either.left(`"${text}": there is no month ${mo}`)
  if (day < 1 || day > daysIn(year, month)) return Either.left(`"${text}": ${y}-${mo} has no day ${d}`)
  if (h === undefined) return Either.right(new Date(Date.UTC(year, month - 1, day)))
  const hour = Number(h)
  const minute = Number(mi)
  const second = Number(s ?? "0")
  if (hour > 23 || minute > 59 || second > 59) return Either.left(`"${text}": ${h}:${mi}${s === undefined ? "" : `:${s}`} is not a time of day`)
  let offsetMinutes = 0
  if (zone !== "Z") {
    if (Number(oh) > 23 || Number(om) > 59) return Either.left(`"${text}": ${zone} is not a UTC offset`)
    offsetMinutes = (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om))
  }
  const millis = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000)
  return Either.right(new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000))
}

const dateSchema = (dateOnly: boolean) =>
  Schema.transformOrFail(Schema.String, Schema.DateFromSelf, {
    strict: true,
    decode: (text, _, ast) =>
      Either.match(parseIsoDate(text, dateOnly), {
        onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, text, message)),
        onRight: ParseResult.succeed
      }),
    encode: (date) => ParseResult.succeed(date.toISOString())
  }).annotations({
    description: dateOnly ? `ISO-8601: ${DATE_OR_INSTANT_FORMS}` : `ISO-8601: ${INSTANT_FORMS}`,
    // Clients send instants; a bare date is a convenience the description names.
    jsonSchema: {
      type: "string",
      format: "date-time",
      description: dateOnly ? `ISO-8601: ${DATE_OR_INSTANT_FORMS}` : `ISO-8601: ${INSTANT_FORMS}`
    }
  })

/** A calendar date or an instant: the oracle's `from`, `to` and price-at's `date`, and the price cards' dates. */
export const DateOrInstantParam = dateSchema(true)

/** scu-at's `date`: an instant only. */
export const InstantParam = dateSchema(false)
